"""Figure of the variants experiment: mean accuracy of every encoding at every length, one heat map
per offset, with each row's class written beside it."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Rectangle

from lengthgen.science.variant_predictions import COLLAPSES, DECAYS, EXTRAPOLATES, FAILS

CLASS_COLORS = {EXTRAPOLATES: "tab:green", DECAYS: "tab:orange", COLLAPSES: "tab:red", FAILS: "0.45"}


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    task = settings["task"]
    return {"pe_variants": plot_variants(tables["variants_summary"], tables["variants_classes"],
                                         settings["variants"]["pe"], task["train_length_min"],
                                         task["train_length_max"])}


def plot_variants(summary: pd.DataFrame, classes: pd.DataFrame, encodings: list[str], train_length_min: int,
                  train_length_max: int):
    offsets = sorted(summary["offset"].unique())
    lengths = sorted(summary["length"].unique())
    far_length = int(classes["far_length"].iloc[0])
    fig, axes = plt.subplots(1, len(offsets), figsize=(5.6 * len(offsets), 1.4 + 0.3 * len(encodings)),
                             sharey=True, squeeze=False, layout="constrained")
    for ax, offset in zip(axes[0], offsets):
        grid = (summary[summary["offset"] == offset].pivot(index="pe", columns="length", values="mean")
                .reindex(index=encodings, columns=lengths))
        image = ax.imshow(grid.to_numpy(), cmap="viridis", vmin=0, vmax=1, aspect="auto")
        for (row, column), value in np.ndenumerate(grid.to_numpy()):
            ax.text(column, row, f"{value:.2f}", ha="center", va="center", fontsize=6.5,
                    color="black" if value > 0.6 else "white")
        ax.add_patch(Rectangle((lengths.index(far_length) - 0.5, -0.5), 1, len(encodings), fill=False,
                               edgecolor="white", linewidth=2))
        cells = classes[classes["offset"] == offset].set_index("pe")
        # Each row's class, in a margin of the panel two columns wide.
        for row, pe in enumerate(encodings):
            category = cells.loc[pe, "category"]
            ax.text(len(lengths) - 0.35, row, category, ha="left", va="center", fontsize=7.5,
                    color=CLASS_COLORS[category])
        ax.set_xlim(-0.5, len(lengths) + 1.9)
        in_range = [f"{n}*" if train_length_min <= n <= train_length_max else str(n) for n in lengths]
        ax.set_xticks(range(len(lengths)), in_range, fontsize=8)
        ax.set_yticks(range(len(encodings)), encodings)
        ax.set_xlabel("evaluation length n (* training range)")
        ax.set_title(f"K = {offset}   (box: n = {far_length}, where each class is decided)", fontsize=9)
        ax.grid(False)
        ax.spines[:].set_visible(False)
    fig.colorbar(image, ax=axes[0].tolist(), fraction=0.015, label="mean accuracy over seeds")
    # Two lines: one offset's panel is narrower than the title on one line.
    fig.suptitle("Every encoding on the same data:\nmean accuracy by length, and its class past the training range",
                 fontsize=10)
    return fig
