"""The mechanics figure: where the learned and rope heads attend past the training range."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from lengthgen.plots import encoding_color, shade_training_range


def _legend_below(ax, ncol: int = 2) -> None:
    """The panel's legend under its x label, outside the axes, so that it hides no data (the figure's
    constrained layout makes room for it)."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=ncol)


def _position_axis(ax, train_length_max: int) -> None:
    """Key positions: linear over the training positions, log2 beyond, training positions shaded."""
    ax.set_xscale("symlog", base=2, linthresh=train_length_max, linscale=1.0)
    ax.axvspan(0, train_length_max, color="0.9", zorder=0, label=f"training positions [0, {train_length_max})")
    ax.set_xlabel("key position (linear below %d, log2 above)" % train_length_max)


def _length_axis(ax, train_length_min: int, train_length_max: int) -> None:
    ax.set_xscale("log", base=2)
    shade_training_range(ax, train_length_min, train_length_max)
    ax.set_xlabel("evaluation length")


def _argmax_histogram_panel(ax, histogram: pd.DataFrame, train_length_max: int) -> None:
    past = histogram[histogram["length"] > train_length_max]
    for pe, cells in past.groupby("pe"):
        by_position = cells.groupby("position")["count"].sum()
        ax.vlines(by_position.index, 0, by_position / by_position.sum(), color=encoding_color(pe), lw=1.5,
                  label=pe)
    _position_axis(ax, train_length_max)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("fraction of sequences")
    ax.set_title("argmax-attended position, lengths > %d\n(pooled over K, seeds, lengths)" % train_length_max)
    _legend_below(ax)


def _per_run_lines(ax, by_length: pd.DataFrame, column: str) -> None:
    """One thin line per run, one bold line per encoding for the median over runs."""
    for pe, cells in by_length.groupby("pe"):
        for _, run in cells.groupby(["offset", "seed"]):
            ax.plot(run["length"], run[column], color=encoding_color(pe), lw=0.7, alpha=0.35)
        median = cells.groupby("length")[column].median()
        ax.plot(median.index, median.values, color=encoding_color(pe), lw=2.2, marker="o", ms=3,
                label=f"{pe} (median of runs)")


def _modal_position_panel(ax, by_length: pd.DataFrame, train_length_min: int, train_length_max: int) -> None:
    _per_run_lines(ax, by_length, "modal_position")
    ax.axhspan(0, train_length_max, color="tab:orange", alpha=0.12, zorder=0,
               label=f"training positions [0, {train_length_max})")
    _length_axis(ax, train_length_min, train_length_max)
    ax.set_yscale("symlog", base=2, linthresh=train_length_max)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("modal argmax position (linear below %d, log2 above)" % train_length_max)
    ax.set_title("most common argmax position")
    _legend_below(ax)


def _fraction_panel(ax, by_length, column, title, ylabel, train_length_min, train_length_max, uniform=False):
    _per_run_lines(ax, by_length, column)
    if uniform:
        lengths = np.array(sorted(by_length["length"].unique()))
        ax.plot(lengths, np.minimum(1.0, train_length_max / lengths), color="k", ls=":", label="uniform attention")
    _length_axis(ax, train_length_min, train_length_max)
    ax.set_ylim(-0.03, 1.03)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    _legend_below(ax)


def _attention_map_panel(ax, profile: pd.DataFrame, pe: str, offset: int, seed: int, train_length_max: int) -> None:
    run = profile[(profile["pe"] == pe) & (profile["offset"] == offset) & (profile["seed"] == seed)]
    lengths = sorted(run["length"].unique())
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(lengths)))
    for length, color in zip(lengths, colors):
        cells = run[run["length"] == length]
        style = "-" if length <= train_length_max else "--"
        ax.plot(cells["position"], cells["mean_weight"], color=color, ls=style, lw=1.2, label=f"n={length}")
    _position_axis(ax, train_length_max)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("mean attention weight")
    ax.set_title(f"{pe} head (K={offset}, seed {seed}): attention map\nsolid: in range, dashed: past range")
    _legend_below(ax, ncol=4)


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    task = settings["task"]
    return {"mechanics": plot_mechanics(tables["mechanics_by_length"], tables["mechanics_argmax_histogram"],
                                        tables["mechanics_attention_profile"], task["train_length_min"],
                                        task["train_length_max"])}


def plot_mechanics(by_length: pd.DataFrame, histogram: pd.DataFrame, profile: pd.DataFrame,
                   train_length_min: int, train_length_max: int, offset: int | None = None, seed: int | None = None):
    """Six panels; the attention maps show one run, (offset, seed), the smallest of each by default."""
    offset = int(profile["offset"].min()) if offset is None else offset
    seed = int(profile["seed"].min()) if seed is None else seed
    fig, axes = plt.subplots(2, 3, figsize=(16, 11), layout="constrained")
    _argmax_histogram_panel(axes[0, 0], histogram, train_length_max)
    _modal_position_panel(axes[0, 1], by_length, train_length_min, train_length_max)
    _fraction_panel(axes[0, 2], by_length, "mass_in_training_range", "attention mass on training positions",
                    f"mean mass on positions < {train_length_max}", train_length_min, train_length_max, uniform=True)
    _fraction_panel(axes[1, 0], by_length, "modal_fraction", "sequences whose argmax is the modal position",
                    "fraction of sequences", train_length_min, train_length_max)
    _attention_map_panel(axes[1, 1], profile, "learned", offset, seed, train_length_max)
    _attention_map_panel(axes[1, 2], profile, "rope", offset, seed, train_length_max)
    fig.suptitle(f"mechanics: where the learned and rope heads attend (trained on lengths {train_length_min}-{train_length_max})")
    return fig
