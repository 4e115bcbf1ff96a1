"""Figure of the frequency experiment: energy per rotary block, its concentration, alignment with
K, the carrier kernel itself, and the singular values of the position kernel matrix."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from lengthgen.experiments.frequency.thresholds import MIN_TOP_ALIGNMENT, MIN_TOP_SHARE


def offset_colors(offsets) -> dict:
    return {offset: f"C{i}" for i, offset in enumerate(sorted(offsets))}


def carrier_kernel(blocks: pd.DataFrame, deltas: np.ndarray) -> np.ndarray:
    """s(delta) = sum_i A_i cos(delta theta_i + phi_i) of one head, from its frequency_blocks rows."""
    angles = np.outer(deltas, blocks["theta"]) + blocks["phase"].to_numpy()  # (n, D/2)
    return np.cos(angles) @ blocks["amplitude"].to_numpy()


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    return {"frequency_rank": plot_frequency(tables["frequency_blocks"], tables["frequency_summary"],
                                             tables["frequency_singular_values"], tables["frequency_untrained_summary"],
                                             settings["task"]["train_length_max"], MIN_TOP_SHARE, MIN_TOP_ALIGNMENT)}


def legend_handles(colors: dict, n_top: int, min_top_share: float, min_top_alignment: float) -> list:
    """One entry per offset's color and per marker line or band the panels share: the figure has one legend."""
    return [*(Line2D([], [], color=color, marker=".", label=f"K = {offset}") for offset, color in colors.items()),
            Line2D([], [], color="k", linestyle="--", linewidth=1,
                   label=f"rule: top-{n_top} share >= {min_top_share:g}, top-{n_top} alignment >= "
                         f"{min_top_alignment:g}"),
            Line2D([], [], color="0.5", linestyle=":", linewidth=1, label=f"{n_top} block{'s' if n_top > 1 else ''} kept (D/16)"),
            Line2D([], [], color="0.5", marker="o", markerfacecolor="none", linestyle="none",
                   label="the same head untrained (claim panel)"),
            Line2D([], [], color="0.3", linestyle=":", linewidth=1, label="delta = K (in the color of K)"),
            Patch(color="0.9", label="training offsets")]


def plot_frequency(blocks: pd.DataFrame, summary: pd.DataFrame, singular: pd.DataFrame, untrained: pd.DataFrame,
                   train_length_max: int, min_top_share: float, min_top_alignment: float):
    """Six panels from the frequency_blocks, frequency_summary and frequency_singular_values tables; the claim
    panel also shows the frequency_untrained_summary heads, the baseline. Every head of a run has one width, so
    one count of top blocks (``top_blocks``)."""
    colors = offset_colors(summary["offset"].unique())
    n_top = int(summary["top_blocks"].iloc[0])
    fig, axes = plt.subplots(2, 3, figsize=(13, 8), layout="constrained")
    heads = list(blocks.groupby(["offset", "seed"], sort=True))

    ax = axes[0, 0]
    for (offset, _), head in heads:
        ax.plot(head["block"], head["energy_share"], marker=".", color=colors[offset], alpha=0.6)
    ax.set_yscale("log")
    ax.set_xlabel("rotary block i (theta_i = base^(-2i/D), fastest first)")
    ax.set_ylabel("energy share A_i^2 / sum A^2")
    ax.set_title("energy per block (each line a seed)")

    ax = axes[0, 1]
    for (offset, _), head in heads:
        shares = np.sort(head["energy_share"].to_numpy())[::-1]
        ax.plot(np.arange(1, len(shares) + 1), np.cumsum(shares), marker=".", color=colors[offset], alpha=0.6)
    ax.axhline(min_top_share, color="k", linestyle="--", linewidth=1)
    ax.axvline(n_top, color="0.5", linestyle=":", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("number of most energetic blocks kept")
    ax.set_ylabel("cumulative energy share")
    ax.set_title("energy concentration (rank)")

    ax = axes[0, 2]
    for (offset, _), head in heads:
        ax.scatter(head["energy_share"], head["alignment"], s=12, color=colors[offset], alpha=0.6)
    ax.axhline(min_top_alignment, color="k", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("energy share of the block")
    ax.set_ylabel("alignment cos(K theta_i + phi_i)")
    ax.set_title("alignment of each block with K")

    ax = axes[1, 0]
    deltas = np.arange(0, 2 * train_length_max)
    for (offset, _), head in heads:
        kernel = carrier_kernel(head, deltas)
        ax.plot(deltas, kernel / np.abs(kernel).max(), color=colors[offset], alpha=0.6)
    for offset, color in colors.items():
        ax.axvline(offset, color=color, linestyle=":", linewidth=1)
    ax.axvspan(0, train_length_max - 1, color="0.9", zorder=0)
    ax.set_xlabel("offset delta (key positions before the query)")
    ax.set_ylabel("s(delta) / max |s|")
    ax.set_title("content-averaged carrier kernel")

    ax = axes[1, 1]
    for (offset, _), head in singular.groupby(["offset", "seed"], sort=True):
        ax.plot(head["index"] + 1, head["singular_value"] / head["singular_value"].max(), marker=".",
                color=colors[offset], alpha=0.6)
    ax.set_yscale("log")
    ax.set_xlabel("index j")
    ax.set_ylabel("sigma_j / sigma_1")
    ax.set_title(f"singular values of M[m, n] = s(m - n), m, n < {train_length_max}")

    ax = axes[1, 2]
    for offset, group in untrained.groupby("offset", sort=True):
        ax.scatter(group["top_share"], group["top_alignment"], s=30, facecolors="none", edgecolors=colors[offset])
    for offset, group in summary.groupby("offset", sort=True):
        ax.scatter(group["top_share"], group["top_alignment"], s=30, color=colors[offset])
    ax.axvline(min_top_share, color="k", linestyle="--", linewidth=1)
    ax.axhline(min_top_alignment, color="k", linestyle="--", linewidth=1)
    heads = pd.concat([summary, untrained])
    ax.set_xlim(min(0.5, heads["top_share"].min() - 0.02), 1.01)
    ax.set_ylim(min(0.5, heads["top_alignment"].min() - 0.02), 1.01)
    ax.set_xlabel(f"energy share of the top {n_top} blocks (D/16)")
    ax.set_ylabel(f"energy-weighted alignment of the top {n_top}")
    ax.set_title("claim: each head (open: untrained)")

    fig.legend(handles=legend_handles(colors, n_top, min_top_share, min_top_alignment), loc="outside lower center",
               ncol=4)
    fig.suptitle("RoPE head's learned rule, decomposed into rotary frequency blocks")
    return fig
