"""Figure of cures: rope and learned heads under each evaluation-time cure, measured and predicted."""

import matplotlib.pyplot as plt
import pandas as pd

from lengthgen.plots import save_figure, shade_training_range
from lengthgen.rules import CURES_CLAIM_PREDICTOR

# One color per cure of ``experiments.cures.CURES``, drawn in this order.
CURE_COLORS = {"none": "k", "log_length": "tab:blue", "yarn": "tab:green", "interpolate": "tab:orange"}
TRAINED_HEAD = "rope_log_length"  # experiments.cures.TRAINED_HEAD (that module runs models, so it is not imported)


def mean_by_length(frame: pd.DataFrame, column: str) -> pd.Series:
    return frame.groupby("length")[column].mean()


def draw_head(ax, by_length: pd.DataFrame, predicted: pd.DataFrame, head: str, quantity: str) -> None:
    """Measured (solid, markers) and predicted (dashed) curves of one head under every cure."""
    column = "predicted_" + quantity.removeprefix("target_")
    for cure, color in CURE_COLORS.items():
        measured = by_length[(by_length["head"] == head) & (by_length["cure"] == cure)]
        if measured.empty:
            continue
        mean = mean_by_length(measured, quantity)
        ax.plot(mean.index, mean.to_numpy(), color=color, marker="o", label=f"{head}, {cure}: measured")
        guess = predicted[predicted["cure"] == cure]
        if head == "rope" and not guess.empty:
            guess = mean_by_length(guess, column)
            ax.plot(guess.index, guess.to_numpy(), color=color, linestyle="--", label=f"rope, {cure}: predicted")


def setup_axes(ax, title: str, ylabel: str, train_length_min: int, train_length_max: int) -> None:
    shade_training_range(ax, train_length_min, train_length_max)
    ax.set_xscale("log", base=2)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("evaluation length n")
    ax.set_ylabel(ylabel)
    ax.set_title(title)


def plot_cures(by_length: pd.DataFrame, predictions: pd.DataFrame, vocab_size: int, train_length_min: int,
               train_length_max: int, path, dpi: int) -> None:
    """Top row: rope accuracy per offset under each cure, with the claim predictor's prediction, the
    hard-attention limit and the head trained with log-length scaling. Bottom row: rope target
    attention and learned accuracy, means over offsets and seeds."""
    offsets = sorted(by_length["offset"].unique())
    predicted = predictions[predictions["predictor"] == CURES_CLAIM_PREDICTOR]
    columns = max(len(offsets), 2)
    mosaic = [[f"K={k}" for k in offsets] + ["."] * (columns - len(offsets)),
              ["attention", "learned"] + ["."] * (columns - 2)]
    fig, axes = plt.subplot_mosaic(mosaic, figsize=(4.2 * columns, 8.2))
    for offset in offsets:
        ax = axes[f"K={offset}"]
        setup_axes(ax, f"rope, K = {offset}", "accuracy", train_length_min, train_length_max)
        rows, guesses = by_length[by_length["offset"] == offset], predicted[predicted["offset"] == offset]
        draw_head(ax, rows, guesses, "rope", "accuracy")
        hard = mean_by_length(rows[(rows["head"] == "rope") & (rows["cure"] == "none")], "hard_accuracy")
        ax.plot(hard.index, hard.to_numpy(), color="0.45", linestyle=":", linewidth=2.5,
                label="rope, hard attention (limit of sharpening)")
        trained = mean_by_length(rows[rows["head"] == TRAINED_HEAD], "accuracy")
        ax.plot(trained.index, trained.to_numpy(), color="tab:purple", marker="s", linewidth=2.5,
                label="rope trained with log-length scaling")
        ax.axhline(1 / vocab_size, color="k", linestyle=(0, (1, 3)), linewidth=1, label="chance")
    setup_axes(axes["attention"], "rope: attention on the target (all K)", "attention weight",
               train_length_min, train_length_max)
    draw_head(axes["attention"], by_length, predicted, "rope", "target_attention")
    setup_axes(axes["learned"], "learned: accuracy (all K)", "accuracy", train_length_min, train_length_max)
    draw_head(axes["learned"], by_length, predicted, "learned", "accuracy")
    axes["learned"].axhline(1 / vocab_size, color="k", linestyle=(0, (1, 3)), linewidth=1)
    handles, labels = axes[f"K={offsets[0]}"].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize="small")
    fig.suptitle(f"Curing dilution at evaluation time (means over seeds; predicted: {CURES_CLAIM_PREDICTOR})")
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    save_figure(fig, path, dpi)
