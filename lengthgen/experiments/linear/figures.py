"""Figures of the linear experiment.

``linear_control.png``, both arms of the control. Top row, means over seeds per arm and offset K: accuracy vs
length; the per-key distractor weight in the last octave vs length (target = 1); arm 1's convergence to the
closed-form min-norm kernel; and the cut-off sensitivity (kernel cosine with the min-norm kernel at each cut-off).
Second and third rows, one panel per K (lowest seed): the trained kernel against the min-norm one, arm 1 (exact)
and arm 2 (most favourable cut-off), inside and past the training offsets.

``linear_matched.png``, arm 2 against its matched softmax head (the same head with its softmax, at arm 2's base):
one panel per K, each head's accuracy vs length (mean over seeds, band: lowest to highest seed), with chance, the
training range, and 4x the longest training length, where the section's paired check compares them.
"""

import matplotlib.pyplot as plt
import pandas as pd

from lengthgen.plots import shade_training_range
from lengthgen.experiments.linear.summaries import CONTROL, HEAD, MATCHED
from lengthgen.experiments.linear.thresholds import EXTRAPOLATION_FACTOR, MAX_RELATIVE_KERNEL_ERROR
from lengthgen.experiments.linear.tables import ARMS

# The two arms of linear_control (the matched softmax head has a figure of its own).
ARM_STYLES = {arm: (ARMS[arm], ls, marker) for arm, ls, marker in ((CONTROL, "-", "o"), (HEAD, "--", "s"))}
PAIR_STYLES = {HEAD: {"color": "tab:purple", "ls": "--", "marker": "s"},
               MATCHED: {"color": "tab:green", "ls": "-", "marker": "o"}}
SOLUTION_STYLES = {"trained": {"color": "tab:purple", "ls": "-"}, "min_norm": {"color": "tab:orange", "ls": "--"}}


def offset_color(index: int) -> str:
    return f"C{index}"


def log2_length_axis(ax, lengths) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(lengths))
    ax.set_xticklabels([str(length) for length in sorted(lengths)], rotation=45)
    ax.set_xlabel("sequence length n")


def plot_by_length(ax, by_length: pd.DataFrame, offsets, value) -> None:
    """One line per (arm, K) of the seed mean of ``value(rows)`` vs length."""
    for arm, (label, ls, marker) in ARM_STYLES.items():
        for index, offset in enumerate(offsets):
            rows = by_length[(by_length["arm"] == arm) & (by_length["offset"] == offset)]
            mean = rows.assign(value=value(rows)).groupby("length")["value"].mean()
            ax.plot(mean.index, mean.to_numpy(), ls=ls, marker=marker, color=offset_color(index),
                    label=f"{label.split(' (')[0]}, K={offset}")


def plot_convergence(ax, convergence: pd.DataFrame, offsets) -> None:
    for index, offset in enumerate(offsets):
        rows = convergence[convergence["offset"] == offset]
        worst = rows.groupby("step")["max_kernel_error"].max()
        ax.plot(worst.index, worst.to_numpy(), color=offset_color(index), label=f"K={offset} (worst seed)")
    ax.set_yscale("log")
    ax.set_xlabel("SGD step")
    ax.set_ylabel("max |trained - closed form| (target = 1)")
    ax.set_title("arm 1: convergence to the min-norm kernel")


def plot_cutoffs(ax, cutoffs: pd.DataFrame, max_relative_error: float) -> None:
    cut = cutoffs[cutoffs["rtol"] > 0]
    for arm, (label, ls, marker) in ARM_STYLES.items():
        stats = cut[cut["arm"] == arm].groupby("rtol")["relative_error"].agg(["mean", "min", "max"])
        ax.plot(stats.index, stats["mean"], ls=ls, marker=marker, color="k", label=label)
        ax.fill_between(stats.index, stats["min"], stats["max"], color="0.6", alpha=0.3)
    ax.axhline(max_relative_error, color="tab:red", lw=0.8, ls=":", label="rule (arm 2)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("relative singular-value cut-off")
    ax.set_ylabel("|trained - min-norm| / |min-norm| (band: runs)")
    ax.set_title("sensitivity to the cut-off")


def plot_kernel(ax, kernels: pd.DataFrame, comparison: pd.DataFrame, arm: str, offset: int,
                train_length_max: int) -> None:
    rows = kernels[(kernels["arm"] == arm) & (kernels["offset"] == offset)]
    seed = int(rows["seed"].min())
    for solution, style in SOLUTION_STYLES.items():
        line = rows[(rows["seed"] == seed) & (rows["solution"] == solution)].sort_values("delta")
        ax.plot(line["delta"], line["kernel"], label=solution.replace("_", "-"), lw=1.2, **style)
    ax.axvspan(0, train_length_max - 1, color="0.9", zorder=0, label="training offsets")
    ax.axvline(offset, color="k", lw=0.8, ls=":", label=f"target delta={offset}")
    match = comparison[(comparison["arm"] == arm) & (comparison["offset"] == offset) & (comparison["seed"] == seed)].iloc[0]
    ax.set_yscale("symlog", linthresh=1.0)  # an ill-conditioned min-norm kernel reaches 1e4 and more
    ax.set_title(f"{ARM_STYLES[arm][0]}, K={offset}, seed {seed}: rel. error {match['relative_error']:.2g} "
                 f"(cut-off {match['rtol']:g})", fontsize=9)
    ax.set_xlabel("relative offset delta (query - key)")
    ax.set_ylabel("kernel (target = 1), symlog")


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    task = settings["task"]
    return {"linear_control": plot_linear_control(
        tables["linear_by_length"], tables["linear_kernel"], tables["linear_comparison"], tables["linear_cutoffs"],
        tables["linear_convergence"], task["train_length_min"], task["train_length_max"], task["vocab_size"]),
        "linear_matched": plot_linear_matched(tables["linear_by_length"], task["train_length_min"],
                                              task["train_length_max"], task["vocab_size"])}


def plot_pair(ax, by_length: pd.DataFrame, offset: int) -> None:
    """Arm 2 and its matched softmax head at one K: accuracy vs length, mean over seeds, band from the lowest to the
    highest seed."""
    for arm, style in PAIR_STYLES.items():
        rows = by_length[(by_length["arm"] == arm) & (by_length["offset"] == offset)]
        stats = rows.groupby("length")["accuracy"].agg(["mean", "min", "max"])
        ax.plot(stats.index, stats["mean"], label=f"{ARMS[arm]}, {rows['seed'].nunique()} seeds", **style)
        ax.fill_between(stats.index, stats["min"], stats["max"], color=style["color"], alpha=0.2)


def plot_linear_matched(by_length: pd.DataFrame, train_length_min: int, train_length_max: int, vocab_size: int):
    """Arm 2 against its matched softmax head, one panel per K: accuracy vs length."""
    offsets = sorted(by_length.loc[by_length["arm"] == HEAD, "offset"].unique())
    fig, axes = plt.subplots(1, len(offsets), figsize=(5.5 * len(offsets), 5), squeeze=False, layout="constrained")
    for ax, offset in zip(axes[0], offsets):
        plot_pair(ax, by_length, offset)
        shade_training_range(ax, train_length_min, train_length_max)
        ax.axhline(1 / vocab_size, color="k", ls=":", label="chance")
        ax.axvline(EXTRAPOLATION_FACTOR * train_length_max, color="tab:red", lw=0.8, ls="-.",
                   label=f"{EXTRAPOLATION_FACTOR}x the longest training length")
        log2_length_axis(ax, by_length["length"].unique())
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("accuracy (mean over seeds; band: seeds' range)")
        ax.set_title(f"K={offset}")
        legend_below(ax, columns=1)
    fig.suptitle("Without softmax, no extrapolation? Arm 2 (linear-attention head) against the same head with its "
                 "softmax, at arm 2's rotary base", fontsize=12)
    return fig


def legend_below(ax, columns: int = 2) -> None:
    """The panel's legend under its axes, where it hides no line."""
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=columns, frameon=False)


def plot_linear_control(by_length: pd.DataFrame, kernels: pd.DataFrame, comparison: pd.DataFrame,
                        cutoffs: pd.DataFrame, convergence: pd.DataFrame, train_length_min: int,
                        train_length_max: int, vocab_size: int):
    """Both arms' accuracy, weights, convergence, cut-off sensitivity and kernels."""
    offsets = sorted(by_length["offset"].unique())
    lengths = sorted(by_length["length"].unique())
    columns = max(4, len(offsets))
    fig, axes = plt.subplots(3, columns, figsize=(5 * columns, 15), squeeze=False, layout="constrained")
    top = axes[0]
    plot_by_length(top[0], by_length, offsets, lambda rows: rows["accuracy"])
    top[0].axhline(1 / vocab_size, color="k", ls=":", label="chance")
    top[0].set_ylim(0, 1.02)
    top[0].set_ylabel("accuracy (mean over seeds)")
    top[0].set_title("accuracy vs length")
    plot_by_length(top[1], by_length, offsets, lambda rows: rows["far_key_weight"] / rows["target_abs_weight"])
    top[1].set_yscale("log")
    top[1].set_ylabel("mean |weight| per key in [n/2, n) / |target|")
    top[1].set_title("distractor weight per key vs length")
    for ax in top[:2]:
        shade_training_range(ax, train_length_min, train_length_max)
        log2_length_axis(ax, lengths)
    plot_convergence(top[2], convergence, offsets)
    plot_cutoffs(top[3], cutoffs, MAX_RELATIVE_KERNEL_ERROR)
    for ax in top[:4]:
        legend_below(ax)
    for ax in top[4:]:
        ax.axis("off")
    for row, arm in zip(axes[1:], ARM_STYLES):
        for ax, offset in zip(row, offsets):
            plot_kernel(ax, kernels, comparison, arm, offset, train_length_max)
            legend_below(ax)
        for ax in row[len(offsets):]:
            ax.axis("off")
    fig.suptitle("Linear control without softmax: arm 1 (min-norm control) and arm 2 (linear-attention head)",
                 fontsize=12)
    return fig
