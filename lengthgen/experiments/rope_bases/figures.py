"""The rope_bases figure: per offset, each rope-base variant's accuracy by length past the range, measured
(solid) and predicted from its parameters by each predictor (dashed, dotted)."""

import matplotlib.pyplot as plt
import pandas as pd

from lengthgen.experiments.rope_bases.tables import ORDER_PREDICTORS
from lengthgen.plots import encoding_color

PREDICTOR_STYLES = dict(zip(ORDER_PREDICTORS, ("--", ":")))


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    return {"rope_bases": plot_rope_bases(tables["rope_bases_prediction"], settings["task"]["vocab_size"])}


def plot_rope_bases(prediction: pd.DataFrame, vocab_size: int):
    offsets = sorted(prediction["offset"].unique())
    fig, axes = plt.subplots(1, len(offsets), figsize=(4.5 * len(offsets), 4), squeeze=False, sharey=True,
                             layout="constrained")
    means = prediction.groupby(["offset", "pe", "predictor", "length"])[["predicted_accuracy",
                                                                         "measured_accuracy"]].mean()
    for ax, offset in zip(axes[0], offsets):
        for pe in sorted(prediction["pe"].unique()):
            at = means.loc[(offset, pe)]
            measured = at.loc[ORDER_PREDICTORS[0], "measured_accuracy"]
            ax.plot(measured.index, measured.to_numpy(), color=encoding_color(pe), marker="o", ms=3, label=pe)
            for predictor, style in PREDICTOR_STYLES.items():
                predicted = at.loc[predictor, "predicted_accuracy"]
                ax.plot(predicted.index, predicted.to_numpy(), color=encoding_color(pe), linestyle=style)
        ax.axhline(1 / vocab_size, color="0.5", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.02)
        ax.set_title(f"K = {offset}")
        ax.set_xlabel("evaluation length n (past the training range)")
    axes[0][0].set_ylabel("accuracy, mean over seeds")
    handles, _ = axes[0][0].get_legend_handles_labels()
    handles += [plt.Line2D([], [], color="0.3", linestyle=style, label=f"predicted: {predictor}")
                for predictor, style in PREDICTOR_STYLES.items()]
    handles += [plt.Line2D([], [], color="0.5", linewidth=0.8, label="chance")]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles))
    fig.suptitle("rope at three rotary bases: measured accuracy (solid) and predicted from the parameters")
    return fig
