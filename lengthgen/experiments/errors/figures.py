"""The error_split figure: every answer of the sweep's heads as correct, a dilution error or a ranking
error, by length, with where each account predicts rope's bands to end, and where rope's ranking errors'
winning keys lie."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from lengthgen.science.prediction_errors import DILUTION_LAW_PREDICTOR

# Each answer's cause, drawn bottom to top, with its count column in ``errors_by_length``.
CAUSES = {"correct": ("n_correct", "#b5dcb5"), "dilution error": ("n_dilution_error", "tab:orange"),
          "ranking error": ("n_ranking_error", "tab:purple")}
HEADS = ("rope", "learned")
SEEN_SHADE = {"color": "0.9", "zorder": 0}  # in-range lengths, and offsets seen in training
# Each account's predicted boundary on rope's bars: the dilution law's predicted accuracy (the top of the
# correct band: the rest is dilution), the ranking account's 1 - predicted ranking share (the bottom of
# the ranking band).
PREDICTED_MARKERS = {DILUTION_LAW_PREDICTOR: ("_", "dilution law: predicted accuracy"),
                     "ranking": ("x", "ranking account: 1 - predicted ranking errors")}


def stacked_shares(by_length: pd.DataFrame, pe: str, offset: int) -> pd.DataFrame:
    """Share of all answers per cause (columns, ``CAUSES``) at each length (index), pooled over seeds."""
    cells = by_length[(by_length["pe"] == pe) & (by_length["offset"] == offset)]
    counts = cells.groupby("length")[["n_sequences", "n_wrong", "n_dilution_error", "n_ranking_error"]].sum()
    counts = counts.assign(n_correct=counts["n_sequences"] - counts["n_wrong"])
    return pd.DataFrame({cause: counts[column] / counts["n_sequences"] for cause, (column, _) in CAUSES.items()})


def bin_label(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def winning_offset_shares(histogram: pd.DataFrame, pe: str, offset: int, bins: pd.DataFrame) -> pd.DataFrame:
    """Share of each length's ranking errors (columns) whose winning key falls in each bin (rows, in the
    order of ``bins``: winning_offset_min, winning_offset_max), pooled over seeds; NaN in the bins past a
    length's own offsets, and at a length without ranking errors."""
    cells = histogram[(histogram["pe"] == pe) & (histogram["offset"] == offset)]
    counts = cells.pivot_table(index="winning_offset_min", columns="length", values="count", aggfunc="sum",
                               fill_value=0).reindex(bins["winning_offset_min"], fill_value=0)
    shares = counts / counts.sum().where(counts.sum() > 0)
    return shares.where(np.less.outer(shares.index.to_numpy(), shares.columns.to_numpy()))


def draw_shares(ax, shares: pd.DataFrame, train_length_min: int, train_length_max: int) -> None:
    """Stacked bars, one per length, in the order of ``CAUSES``; in-range lengths shaded and starred."""
    lengths = shares.index.to_numpy()
    in_range = np.flatnonzero((lengths >= train_length_min) & (lengths <= train_length_max))
    if len(in_range):
        ax.axvspan(in_range.min() - 0.5, in_range.max() + 0.5, **SEEN_SHADE)
    bottom = np.zeros(len(lengths))
    for cause, (_, color) in CAUSES.items():
        ax.bar(np.arange(len(lengths)), shares[cause].to_numpy(), 0.8, bottom=bottom, color=color, label=cause)
        bottom += shares[cause].to_numpy()
    ax.set_xticks(range(len(lengths)), [f"{n}*" if index in in_range else str(n) for index, n in enumerate(lengths)])
    ax.set_xlabel("evaluation length n")
    ax.set_ylim(0, 1)


def predicted_boundaries(split: pd.DataFrame, offset: int, lengths: list[int]) -> pd.DataFrame:
    """Per length (rows, ``lengths``) and predictor (columns): the boundary of ``PREDICTED_MARKERS``, mean over seeds."""
    cells = split[split["offset"] == offset]
    boundary = 1 - cells["predicted_ranking_share"] - cells["predicted_dilution_share"]
    means = cells.assign(boundary=boundary).groupby(["length", "predictor"])["boundary"].mean().unstack()
    return means.reindex(index=lengths, columns=list(PREDICTED_MARKERS))


def draw_predicted(ax, boundaries: pd.DataFrame) -> None:
    for predictor, (marker, label) in PREDICTED_MARKERS.items():
        ax.plot(np.arange(len(boundaries)), boundaries[predictor].to_numpy(), linestyle="none", marker=marker,
                color="black", ms=9, mew=1.5, label=label)


def draw_winning_offsets(ax, shares: pd.DataFrame, bins: pd.DataFrame, colors: dict, train_length_max: int) -> None:
    """One line per length: the share of its ranking errors per bin of winning offsets; seen offsets shaded."""
    seen = np.flatnonzero(bins["winning_offset_max"].to_numpy() < train_length_max)
    if len(seen):
        ax.axvspan(-0.5, seen.max() + 0.5, **SEEN_SHADE)
    for length in shares.columns:
        if shares[length].notna().any():
            ax.plot(range(len(bins)), shares[length].to_numpy(), color=colors[length], marker="o", ms=3)
    ax.set_xticks(range(len(bins)), [bin_label(*row) for row in bins.itertuples(index=False)], rotation=60)
    ax.set_xlabel("winning key's offset (query position - key position)")
    ax.set_ylim(0, 1.02)


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    task = settings["task"]
    return {"error_split": plot_error_split(tables["errors_by_length"], tables["errors_winning_offset"],
                                            tables["errors_predicted_split"], task["train_length_min"],
                                            task["train_length_max"])}


def plot_error_split(by_length: pd.DataFrame, histogram: pd.DataFrame, split: pd.DataFrame, train_length_min: int,
                     train_length_max: int):
    """Per offset (columns): rope's and learned's answers split by cause at each length (top rows), with each
    account's predicted boundary on rope's, and the distribution of the winning offset of rope's ranking errors
    at each length past the range (bottom row)."""
    offsets = sorted(by_length["offset"].unique())
    mosaic = [[f"{row} K={offset}" for offset in offsets] for row in (*HEADS, "winning")]
    fig, axes = plt.subplot_mosaic(mosaic, figsize=(4.3 * len(offsets), 11), layout="constrained")
    bins = (histogram[histogram["pe"] == "rope"][["winning_offset_min", "winning_offset_max"]]
            .drop_duplicates().sort_values("winning_offset_min", ignore_index=True))
    past = sorted(by_length.loc[by_length["past_training_range"], "length"].unique())
    colors = dict(zip(past, plt.cm.viridis(np.linspace(0, 0.85, len(past)))))
    for offset in offsets:
        for pe in HEADS:
            ax = axes[f"{pe} K={offset}"]
            shares = stacked_shares(by_length, pe, offset)
            draw_shares(ax, shares, train_length_min, train_length_max)
            if pe == "rope":
                draw_predicted(ax, predicted_boundaries(split, offset, list(shares.index)))
            ax.set_title(f"{pe}, K = {offset}: answers by cause")
            ax.set_ylabel("share of answers")
        ax = axes[f"winning K={offset}"]
        draw_winning_offsets(ax, winning_offset_shares(histogram, "rope", offset, bins).reindex(columns=past),
                             bins, colors, train_length_max)
        ax.set_title(f"rope, K = {offset}: winning keys of ranking errors")
        ax.set_ylabel("share of ranking errors")
    # One legend below every panel, so that it hides no bar or line.
    handles = [Patch(color=color, label=cause) for cause, (_, color) in CAUSES.items()]
    handles += [Patch(label=f"shaded: training lengths (*), offsets seen in training (< {train_length_max})",
                      **SEEN_SHADE)]
    handles += [plt.Line2D([], [], linestyle="none", marker=marker, color="black", ms=9, mew=1.5, label=label)
                for marker, label in PREDICTED_MARKERS.values()]
    handles += [plt.Line2D([], [], color=color, marker="o", ms=3, label=f"ranking errors at n={length}")
                for length, color in colors.items()]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize="small")
    fig.suptitle("errors: each answer correct, a dilution error (wrong, the target has the highest logit) or a\n"
                 "ranking error (wrong, another key has it); pooled over seeds")
    return fig
