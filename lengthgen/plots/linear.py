"""Figure of the linear-attention control (``linear_control.png``).

Top row, pooled over seeds per offset K: accuracy vs length, the measured weights vs length,
and the kernels' distractor weight vs length. Bottom row, one panel per K (lowest seed): the
trained kernel against the min-norm one, inside and past the training offsets.
"""

import matplotlib.pyplot as plt
import pandas as pd

from lengthgen.plots import save_figure, shade_training_range

SOLUTION_STYLES = {"trained": {"color": "tab:purple", "ls": "-"}, "min_norm": {"color": "tab:orange", "ls": "--"}}


def offset_color(index: int) -> str:
    return f"C{index}"


def log2_length_axis(ax, lengths) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(lengths))
    ax.set_xticklabels([str(length) for length in sorted(lengths)], rotation=45)
    ax.set_xlabel("sequence length n")


def plot_accuracy(ax, by_length: pd.DataFrame, offsets, vocab_size: int) -> None:
    for index, offset in enumerate(offsets):
        stats = by_length[by_length["offset"] == offset].groupby("length")["accuracy"].agg(["mean", "min", "max"])
        ax.plot(stats.index, stats["mean"], "o-", color=offset_color(index), label=f"K={offset}")
        ax.fill_between(stats.index, stats["min"], stats["max"], color=offset_color(index), alpha=0.2)
    ax.axhline(1 / vocab_size, color="k", ls=":", label="chance")
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("accuracy (mean, band: min-max over seeds)")
    ax.set_title("accuracy vs length")


def plot_measured_weights(ax, by_length: pd.DataFrame, offsets) -> None:
    for index, offset in enumerate(offsets):
        stats = by_length[by_length["offset"] == offset].groupby("length")[["distractor_weight", "target_abs_weight"]].mean()
        ax.plot(stats.index, stats["distractor_weight"], "o-", color=offset_color(index), label=f"K={offset} distractors")
        ax.plot(stats.index, stats["target_abs_weight"], "s:", color=offset_color(index), label=f"K={offset} |target|")
    ax.set_yscale("log")
    ax.set_ylabel("mean total |weight|")
    ax.set_title("trained head: weights (measured)")


def plot_kernel_dilution(ax, dilution: pd.DataFrame, offsets) -> None:
    for index, offset in enumerate(offsets):
        for solution, style in SOLUTION_STYLES.items():
            rows = dilution[(dilution["offset"] == offset) & (dilution["solution"] == solution)]
            mean = rows.groupby("length")["distractor_weight"].mean()
            ax.plot(mean.index, mean.to_numpy(), marker="o", ls=style["ls"], color=offset_color(index),
                    label=f"K={offset} {solution.replace('_', '-')}")
    ax.set_yscale("log")
    ax.set_ylabel("sum of |kernel| off target (target = 1)")
    ax.set_title("kernels: distractor weight vs length")


def plot_kernel(ax, kernels: pd.DataFrame, comparison: pd.DataFrame, offset: int, train_length_max: int,
                max_delta: int) -> None:
    seed = int(kernels.loc[kernels["offset"] == offset, "seed"].min())
    run = kernels[(kernels["offset"] == offset) & (kernels["seed"] == seed) & (kernels["delta"] < max_delta)]
    for solution, style in SOLUTION_STYLES.items():
        rows = run[run["solution"] == solution].sort_values("delta")
        ax.plot(rows["delta"], rows["kernel"], label=solution.replace("_", "-"), lw=1.2, **style)
    ax.axvspan(0, train_length_max - 1, color="0.9", zorder=0, label="training offsets")
    ax.axvline(offset, color="k", lw=0.8, ls=":", label=f"target delta={offset}")
    # Past the training offsets the min-norm kernel reaches 1e4 and more: symlog keeps both readable.
    ax.set_yscale("symlog", linthresh=1.0)
    cos = comparison[(comparison["offset"] == offset) & (comparison["seed"] == seed)]["coefficient_cosine"]
    ax.set_title(f"K={offset}, seed {seed}: kernels (coef. cosine {float(cos.iloc[0]):.2f})")
    ax.set_xlabel("relative offset delta (query - key)")
    ax.set_ylabel("kernel (target = 1), symlog")


def plot_linear_control(by_length: pd.DataFrame, kernels: pd.DataFrame, dilution: pd.DataFrame,
                        comparison: pd.DataFrame, train_length_min: int, train_length_max: int,
                        vocab_size: int, path, dpi: int) -> None:
    """The control's accuracy, weights and kernels vs length, saved to ``path``."""
    offsets = sorted(by_length["offset"].unique())
    lengths = sorted(by_length["length"].unique())
    columns = max(3, len(offsets))
    fig, axes = plt.subplots(2, columns, figsize=(5.2 * columns, 9.5), squeeze=False)
    top = axes[0]
    plot_accuracy(top[0], by_length, offsets, vocab_size)
    plot_measured_weights(top[1], by_length, offsets)
    plot_kernel_dilution(top[2], dilution, offsets)
    for ax in top[:3]:
        shade_training_range(ax, train_length_min, train_length_max)
        log2_length_axis(ax, lengths)
        ax.legend(fontsize=7)
    for ax in top[3:]:
        ax.axis("off")
    max_delta = int(min(kernels["delta"].max() + 1, 4 * train_length_max))
    for ax, offset in zip(axes[1], offsets):
        plot_kernel(ax, kernels, comparison, offset, train_length_max, max_delta)
        ax.legend(fontsize=7)
    for ax in axes[1][len(offsets):]:
        ax.axis("off")
    fig.suptitle("Linear-attention control (RoPE logits as weights, no softmax)", fontsize=12)
    fig.tight_layout()
    save_figure(fig, path, dpi)
