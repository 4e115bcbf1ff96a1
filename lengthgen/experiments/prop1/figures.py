"""Figures of prop1: predicted vs measured target attention and accuracy vs length, one per offset
(``prop1_validation_K<offset>``, every offset of the sweep from one job)."""

import matplotlib.pyplot as plt
import pandas as pd

from lengthgen.plots import shade_training_range
from lengthgen.science.prediction_errors import DILUTION_LAW_PREDICTOR

# One style per predictor of ``dilution.PREDICTORS``, drawn in this order.
PREDICTOR_STYLES = {
    "mean_logit": {"color": "tab:orange", "linestyle": ":", "marker": "v"},
    "mean_field": {"color": "tab:blue", "linestyle": "--", "marker": "s"},
    "mean_field_target": {"color": "tab:green", "linestyle": "-.", "marker": "D"},
    "ranking": {"color": "tab:red", "linestyle": (0, (5, 1)), "marker": "^"},
    "exact": {"color": "tab:purple", "linestyle": "-", "marker": "x", "linewidth": 3, "alpha": 0.6},
}
# Predictors of accuracy only (prediction_errors.BORROWED_ATTENTION; dilution runs models, so it is
# not imported): their attention column repeats another predictor's.
ACCURACY_ONLY = ("ranking",)


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    comparison, task = tables["prop1_prediction"], settings["task"]
    return {f"prop1_validation_K{offset}": plot_prop1(comparison, offset, task["vocab_size"], task["train_length_min"],
                                                      task["train_length_max"])
            for offset in sorted(comparison["offset"].unique())}


def plot_prop1(comparison: pd.DataFrame, offset: int, vocab_size: int, train_length_min: int, train_length_max: int):
    """Two panels (target attention, accuracy) for one offset, from the ``prop1_prediction`` table.

    Measured: each seed as a grey dot, the mean over seeds in black (drawn on top, so the wide
    ``exact`` line shows beneath it). Predicted: mean over seeds.
    """
    rows = comparison[comparison["offset"] == offset]
    measured = rows.drop_duplicates(["seed", "length"])
    n_seeds = measured["seed"].nunique()
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.8), sharex=True, layout="constrained")
    for ax, column, title in ((axes[0], "attention", "attention weight on the target"),
                              (axes[1], "accuracy", "accuracy")):
        shade_training_range(ax, train_length_min, train_length_max)
        ax.scatter(measured["length"], measured[f"measured_{column}"], s=10, color="0.55", zorder=2,
                   label="measured, each seed")
        mean = measured.groupby("length")[f"measured_{column}"].mean()
        ax.plot(mean.index, mean.to_numpy(), color="k", marker="o", linewidth=2, zorder=5,
                label=f"measured, mean of {n_seeds} seeds")
        for predictor in (name for name in PREDICTOR_STYLES if column == "accuracy" or name not in ACCURACY_ONLY):
            predicted = rows[rows["predictor"] == predictor].groupby("length")[f"predicted_{column}"].mean()
            if not predicted.empty:
                judged = " (the law the claim judges)" if predictor == DILUTION_LAW_PREDICTOR else ""
                ax.plot(predicted.index, predicted.to_numpy(), zorder=4, label=f"predicted: {predictor}{judged}",
                        **PREDICTOR_STYLES[predictor])
        ax.set_xscale("log", base=2)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("evaluation length n")
        ax.set_ylabel(title)
        ax.set_title(title)
    axes[1].axhline(1 / vocab_size, color="k", linestyle=(0, (1, 3)), linewidth=1, label="chance")
    # One legend below both panels, so it hides no curve.
    fig.legend(*axes[1].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    fig.suptitle(f"Attention-dilution law from the head's parameters vs measurement, K = {offset}")
    return fig
