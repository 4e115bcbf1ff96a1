"""Figure of cures: rope and learned heads under each evaluation-time cure, measured and predicted."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from lengthgen.plots import shade_training_range
from lengthgen.experiments.cures.thresholds import CURES_CLAIM_PREDICTOR

# One style per cure of ``experiments.cures.CURES``, drawn in this order; markers tell apart
# the curves that lie on top of each other.
CURE_STYLES = {
    "none": {"color": "k", "marker": "o"},
    "log_length": {"color": "tab:blue", "marker": "^"},
    "yarn": {"color": "tab:green", "marker": "v"},
    "interpolate": {"color": "tab:orange", "marker": "s"},
}
TRAINED_HEAD = "rope_log_length"  # experiments.cures.TRAINED_HEAD (that module runs models, so it is not imported)


def mean_by_length(frame: pd.DataFrame, column: str) -> pd.Series:
    return frame.groupby("length")[column].mean()


def draw_head(ax, by_length: pd.DataFrame, predicted: pd.DataFrame, head: str, quantity: str) -> None:
    """Measured (solid, markers) and, for rope, predicted (dashed) curves of one head under every cure."""
    column = "predicted_" + quantity.removeprefix("target_")
    for cure, style in CURE_STYLES.items():
        measured = by_length[(by_length["head"] == head) & (by_length["cure"] == cure)]
        if measured.empty:
            continue
        mean = mean_by_length(measured, quantity)
        ax.plot(mean.index, mean.to_numpy(), markerfacecolor="none", label=f"{head}, {cure}: measured", **style)
        guess = predicted[predicted["cure"] == cure]
        if head == "rope" and not guess.empty:
            guess = mean_by_length(guess, column)
            ax.plot(guess.index, guess.to_numpy(), color=style["color"], linestyle="--", linewidth=1,
                    label=f"rope, {cure}: predicted")


def setup_axes(ax, title: str, ylabel: str, train_length_min: int, train_length_max: int) -> None:
    shade_training_range(ax, train_length_min, train_length_max)
    ax.set_xscale("log", base=2)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("evaluation length n")
    ax.set_ylabel(ylabel)
    ax.set_title(title)


def draw_recovery(ax, recovery: pd.DataFrame) -> None:
    """Grouped bars per sharpening cure: measured and predicted recovered fraction; the
    hard-attention limit as a horizontal line."""
    cures = [cure for cure in CURE_STYLES if cure not in ("none", "interpolate")]
    wide = recovery.pivot(index="cure", columns="source", values="recovered_fraction")
    # The measurement, then every predictor the table holds (a predictor that predicts no loss draws no bar).
    sources = ["measured", *(source for source in dict.fromkeys(recovery["source"]) if source != "measured")]
    width = 0.8 / len(sources)
    for index, source in enumerate(sources):
        values = [wide.at[cure, source] for cure in cures]
        ax.bar(np.arange(len(cures)) + (index - (len(sources) - 1) / 2) * width, values, width,
               color="k" if source == "measured" else f"C{index - 1}",
               label=f"recovery, {source if source == 'measured' else f'predicted: {source}'}")
    ax.axhline(wide.at["hard_attention", "measured"], color="0.45", linewidth=2.5, linestyle=":",
               label="recovery, hard-attention limit")
    ax.axhline(0, color="k", linewidth=0.8)
    ax.set_xticks(range(len(cures)), cures)
    ax.set_ylabel("fraction of lost accuracy won back")
    ax.set_title("rope: recovery past the range (all K)")


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    task = settings["task"]
    figure = plot_cures(tables["cures_by_length"], tables["cures_prediction"], tables["cures_recovery"],
                        task["vocab_size"], task["train_length_min"], task["train_length_max"])
    return {"dilution_cures": figure}


def plot_cures(by_length: pd.DataFrame, predictions: pd.DataFrame, recovery: pd.DataFrame, vocab_size: int,
               train_length_min: int, train_length_max: int):
    """Top row: rope accuracy per offset under each cure, with the claim predictor's prediction, the
    hard-attention limit (a wide grey band) and the head trained with log-length scaling. Bottom row:
    rope target attention and learned accuracy, means over offsets and seeds, and the recovered fractions."""
    offsets = sorted(by_length["offset"].unique())
    predicted = predictions[predictions["predictor"] == CURES_CLAIM_PREDICTOR]
    columns = max(len(offsets), 3)
    mosaic = [[f"K={k}" for k in offsets] + ["."] * (columns - len(offsets)),
              ["attention", "learned", "recovery"] + ["."] * (columns - 3)]
    fig, axes = plt.subplot_mosaic(mosaic, figsize=(4.2 * columns, 8.2), layout="constrained")
    for offset in offsets:
        ax = axes[f"K={offset}"]
        setup_axes(ax, f"rope, K = {offset}", "accuracy", train_length_min, train_length_max)
        rows, guesses = by_length[by_length["offset"] == offset], predicted[predicted["offset"] == offset]
        hard = mean_by_length(rows[(rows["head"] == "rope") & (rows["cure"] == "none")], "hard_accuracy")
        ax.plot(hard.index, hard.to_numpy(), color="0.6", linewidth=9, alpha=0.45, solid_capstyle="round",
                label="rope, hard attention (limit of sharpening)")
        draw_head(ax, rows, guesses, "rope", "accuracy")
        trained = mean_by_length(rows[rows["head"] == TRAINED_HEAD], "accuracy")
        ax.plot(trained.index, trained.to_numpy(), color="tab:purple", marker="D", linewidth=2,
                label="rope trained with log-length scaling")
        ax.axhline(1 / vocab_size, color="k", linestyle=(0, (1, 3)), linewidth=1, label="chance")
    setup_axes(axes["attention"], "rope: attention on the target (all K)", "attention weight",
               train_length_min, train_length_max)
    draw_head(axes["attention"], by_length, predicted, "rope", "target_attention")
    setup_axes(axes["learned"], "learned: accuracy (all K)", "accuracy", train_length_min, train_length_max)
    draw_head(axes["learned"], by_length, predicted, "learned", "accuracy")
    axes["learned"].axhline(1 / vocab_size, color="k", linestyle=(0, (1, 3)), linewidth=1)
    draw_recovery(axes["recovery"], recovery)
    # One legend below every panel, so it hides no curve or bar: the curves' entries, then the bars'.
    handles, labels = axes[f"K={offsets[0]}"].get_legend_handles_labels()
    bar_handles, bar_labels = axes["recovery"].get_legend_handles_labels()
    fig.legend(handles + bar_handles, labels + bar_labels, loc="outside lower center", ncol=4, fontsize="small")
    fig.suptitle(f"Curing dilution at evaluation time (means over seeds; predicted: {CURES_CLAIM_PREDICTOR})")
    return fig
