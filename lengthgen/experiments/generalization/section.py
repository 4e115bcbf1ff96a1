"""The generalization page: accuracy by length over seeds, the claim, its checks."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.sections import length_columns


def format_interval(mean: float, low: float, high: float) -> str:
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def accuracy_markdown(summary: pd.DataFrame) -> str:
    """One row per (encoding, K), one column per length: mean [95% interval] over seeds."""
    cells = summary.assign(cell=[format_interval(*row) for row in summary[["mean", "ci_low", "ci_high"]].to_numpy()])
    wide = cells.pivot_table(index=["pe", "offset"], columns="length", values="cell", aggfunc="first")
    wide.columns = length_columns(wide.columns, set(summary.loc[summary["in_training_range"], "length"]))
    return wide.rename_axis(index=["encoding", "K"]).reset_index().to_markdown(index=False)


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    summary = tables["accuracy_summary"]
    return "\n\n".join([
        "## generalization: accuracy vs evaluation length",
        f"Accuracy of the single head on held-out sequences, per K and length: mean over {summary['n_seeds'].min()} "
        "seeds [95% Student-t interval]; * in the training range. Chance is 1/V = "
        f"{1 / settings['task']['vocab_size']:.4f}.",
        accuracy_markdown(summary),
        "![accuracy vs length](figures/generalization.png)",
        "**Claim**: RoPE keeps near-perfect accuracy in the training range and stays well above chance at 4x the "
        "longest training length; learned absolute encodings are perfect in range and at chance beyond it.",
        checks_markdown(checks),
    ])
