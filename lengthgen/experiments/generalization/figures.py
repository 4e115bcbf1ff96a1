"""Figure of the generalization experiment: accuracy vs evaluation length, one panel per offset."""

import matplotlib.pyplot as plt
import pandas as pd

from lengthgen.plots import encoding_color, shade_training_range


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    task = settings["task"]
    return {"generalization": plot_generalization(tables["accuracy_summary"], task["vocab_size"],
                                                  task["train_length_min"], task["train_length_max"])}


def plot_generalization(summary: pd.DataFrame, vocab_size: int, train_length_min: int, train_length_max: int):
    offsets = sorted(summary["offset"].unique())
    fig, axes = plt.subplots(1, len(offsets), figsize=(4 * len(offsets), 3.8), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, offset in zip(axes[0], offsets):
        shade_training_range(ax, train_length_min, train_length_max)
        for pe, curve in summary[summary["offset"] == offset].groupby("pe", sort=True):
            color = encoding_color(pe)
            ax.plot(curve["length"], curve["mean"], marker="o", color=color, label=pe)
            ax.fill_between(curve["length"], curve["ci_low"], curve["ci_high"], color=color, alpha=0.25)
        ax.axhline(1 / vocab_size, color="k", linestyle="--", linewidth=1, label="chance")
        ax.set_xscale("log", base=2)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"K = {offset}")
        ax.set_xlabel("evaluation length n")
    axes[0][0].set_ylabel("accuracy (mean, 95% CI over seeds)")
    # One legend below the panels: inside one it would cover curves or the chance line.
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncol=4)
    fig.suptitle("Fixed-offset retrieval: accuracy vs length")
    return fig
