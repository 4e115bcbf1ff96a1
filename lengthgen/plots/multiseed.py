"""Figure of the multiseed experiment: each headline per offset, every seed, mean and 95% CI."""

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from lengthgen.experiments.multiseed import HEADLINES
from lengthgen.plots import save_figure


def plot_multiseed(by_seed: pd.DataFrame, summary: pd.DataFrame, path, dpi: int) -> None:
    headlines = [headline for headline in HEADLINES if headline.name in set(summary["headline"])]
    columns = 4
    rows = -(-len(headlines) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 3.0 * rows), squeeze=False)
    for ax, spec in zip(axes.flat, headlines):
        headline = spec.name
        runs = by_seed[by_seed["headline"] == headline]
        stats = summary[(summary["headline"] == headline) & (summary["offset"] != "all")]
        offsets = sorted(runs["offset"].unique())
        jitter = np.linspace(-0.12, 0.12, runs["seed"].nunique())
        for position, offset in enumerate(offsets):
            values = runs.loc[runs["offset"] == offset, "value"].to_numpy()
            ax.scatter(position + jitter[:len(values)], values, s=12, color="0.5", zorder=2)
            row = stats[stats["offset"] == f"K={offset}"].iloc[0]
            ax.errorbar(position + 0.3, row["mean"], yerr=[[row["mean"] - row["ci_low"]], [row["ci_high"] - row["mean"]]],
                        fmt="o", color="tab:blue", capsize=3, zorder=3)
        threshold = summary.loc[summary["headline"] == headline, "threshold"].iloc[0]
        comparison = summary.loc[summary["headline"] == headline, "comparison"].iloc[0]
        ax.axhline(threshold, color="tab:red", linestyle="--", linewidth=1, label=f"rule: {comparison} {threshold:.3g}")
        if spec.log_scale:
            ax.set_yscale("log")
        ax.set_xticks(range(len(offsets)), [f"K={k}" for k in offsets])
        ax.set_title("\n".join(textwrap.wrap(headline, 34)), fontsize=8)
        ax.legend(loc="best", fontsize=7)
    for ax in list(axes.flat)[len(headlines):]:
        ax.set_visible(False)
    fig.suptitle("Headlines per run (grey: seeds; blue: mean and 95% CI over seeds)")
    fig.tight_layout()
    save_figure(fig, path, dpi)
