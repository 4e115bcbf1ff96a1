"""The shift-equivariance figure of one offset: logit change vs position shift, per encoding and dtype."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from lengthgen.plots import encoding_color
from lengthgen.experiments.shift.thresholds import ABSOLUTE_MIN_CHANGE, ROPE_MAX_CHANGE

# A change of exactly 0 cannot sit on a log axis; it is drawn at this floor, and said so.
ZERO_FLOOR = 1e-18
DTYPE_STYLES = {"float64": "-", "float32": "--"}


def change_panel(ax, cells: pd.DataFrame, column: str, title: str, rules: bool) -> None:
    """Logit change vs shift on log axes, per (pe, dtype); ``rules``: draw the thresholds of the claims,
    on the panel of the logits they judge."""
    floored = False
    for (pe, dtype), group in cells.groupby(["pe", "dtype"]):
        color, style = encoding_color(pe), DTYPE_STYLES.get(dtype, ":")
        for _, run in group.groupby(["seed", "length"]):
            ax.plot(run["shift"], run[column].clip(lower=ZERO_FLOOR), color=color, ls=style, lw=0.6, alpha=0.3)
        worst = group.groupby("shift")[column].max()  # NaN (undefined) only where no run is defined
        floored |= bool((worst == 0).any())
        ax.plot(worst.index, worst.clip(lower=ZERO_FLOOR), color=color, ls=style, lw=2, marker="o", ms=4,
                label=f"{pe}, {dtype}")
        undefined = sorted(group.loc[~group["defined"], "shift"].unique())
        if undefined and dtype == "float64":
            # Undefined shifts have no value: mark them along the top edge of the panel.
            ax.plot(undefined, np.full(len(undefined), 0.96), ls="none", marker="x", ms=9, color=color,
                    transform=ax.get_xaxis_transform(), label=f"{pe}: undefined (positions past its table)")
    if rules:
        ax.axhline(ROPE_MAX_CHANGE, color=encoding_color("rope"), lw=0.8, ls=":",
                   label=f"rope rule (float64): <= {ROPE_MAX_CHANGE:g}")
        ax.axhline(ABSOLUTE_MIN_CHANGE, color="0.3", lw=0.8, ls=":",
                   label=f"learned/sinusoidal rule (float64): >= {ABSOLUTE_MIN_CHANGE:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("position shift s (every position id + s)")
    ax.set_ylabel("max |logit change| vs s = 0")
    ax.set_title(title + (f"\n(exact zeros drawn at {ZERO_FLOOR:g})" if floored else ""))


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    offset = settings["offset"]
    return {f"shift_equivariance_K{offset}": plot_shift(tables["shift_changes"], offset)}


def plot_shift(changes: pd.DataFrame, offset: int):
    """Attention-logit and output-logit change vs shift; bold: max over seeds and lengths, thin: each run."""
    cells = changes[changes["offset"] == offset]
    fig, axes = plt.subplots(1, 2, figsize=(15, 5.2), layout="constrained")
    change_panel(axes[0], cells, "attention_logit_change", "attention logits", rules=True)  # the claims' logits
    change_panel(axes[1], cells, "output_logit_change", "output logits", rules=False)
    # long handles, so that a dashed float32 line reads as dashed beside its marker
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize="small", loc="outside right center", handlelength=4)
    fig.suptitle(f"shift equivariance, K={offset}: solid float64, dashed float32")
    return fig
