"""Figure of the multiseed experiment: each headline per offset, every seed, mean and 95% CI."""

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from lengthgen.experiments.multiseed.headlines import HEADLINES


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    return {"multiseed_results": plot_multiseed(tables["headline_by_seed"], tables["headline_summary"])}


def _headline_panel(ax, runs: pd.DataFrame, stats: pd.DataFrame, log_scale: bool) -> None:
    """One headline: each run's value per offset (grey), the mean and 95% CI over seeds (blue), the rule (red)."""
    offsets = sorted(runs["offset"].unique())
    jitter = np.linspace(-0.12, 0.12, runs["seed"].nunique())
    for position, offset in enumerate(offsets):
        values = runs.loc[runs["offset"] == offset, "value"].to_numpy()
        ax.scatter(position + jitter[:len(values)], values, s=12, color="0.5", zorder=2)
        row = stats[stats["offset"] == f"K={offset}"].iloc[0]
        ax.errorbar(position + 0.3, row["mean"], yerr=[[row["mean"] - row["ci_low"]], [row["ci_high"] - row["mean"]]],
                    fmt="o", color="tab:blue", capsize=3, zorder=3)
    threshold, comparison = stats["threshold"].iloc[0], stats["comparison"].iloc[0]
    if comparison:  # a baseline has no rule to draw
        ax.axhline(threshold, color="tab:red", linestyle="--", linewidth=1)
    if log_scale:
        ax.set_yscale("log")
    ax.set_xticks(range(len(offsets)), [f"K={k}" for k in offsets])
    # The rule goes in the title, not in a legend that could cover a run's point.
    rule = f"rule: {comparison} {threshold:.3g}" if comparison else "no rule of its own"
    ax.set_title("\n".join(textwrap.wrap(runs["headline"].iloc[0], 34) + [rule]), fontsize=8)


def plot_multiseed(by_seed: pd.DataFrame, summary: pd.DataFrame):
    headlines = [headline for headline in HEADLINES if headline.name in set(summary["headline"])]
    columns = 4
    rows = -(-len(headlines) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 3.2 * rows), squeeze=False, layout="constrained")
    for ax, headline in zip(axes.flat, headlines):
        stats = summary[(summary["headline"] == headline.name) & (summary["offset"] != "all")]
        _headline_panel(ax, by_seed[by_seed["headline"] == headline.name], stats, headline.log_scale)
    for ax in list(axes.flat)[len(headlines):]:
        ax.set_visible(False)
    fig.suptitle("Headlines per run (grey: seeds; blue: mean and 95% CI over seeds; red dashed: the rule)")
    return fig
