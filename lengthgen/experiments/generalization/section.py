"""The generalization experiment's RESULTS.md section: accuracy by length over seeds, the claim, its checks."""

import pandas as pd

from lengthgen.checks.check import checks_markdown


def format_interval(mean: float, low: float, high: float) -> str:
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def accuracy_markdown(summary: pd.DataFrame) -> str:
    """A markdown table: one row per (encoding, offset), one column per length."""
    cells = summary.assign(cell=[format_interval(*row) for row in summary[["mean", "ci_low", "ci_high"]].to_numpy()])
    wide = cells.pivot_table(index=["pe", "offset"], columns="length", values="cell", aggfunc="first")
    in_range = set(summary.loc[summary["in_training_range"], "length"])
    wide.columns = [f"n={n}{'*' if n in in_range else ''}" for n in wide.columns]
    return wide.rename_axis(index=["encoding", "K"]).reset_index().to_markdown(index=False)



def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    summary, vocab_size = tables["accuracy_summary"], settings["task"]["vocab_size"]
    return "\n\n".join([
        "## generalization: accuracy vs evaluation length",
        f"Accuracy of the single head on held-out sequences at each length: mean over {summary['n_seeds'].min()} "
        f"seeds with a 95% Student-t interval (clipped to [0, 1]). Lengths marked * lie in the training range. "
        f"Chance is 1/V = {1 / vocab_size:.4f}.",
        accuracy_markdown(summary),
        "![accuracy vs length](figures/generalization.png)",
        "**Claim**: RoPE keeps near-perfect accuracy in the training range and stays well above chance "
        "at 4x the longest training length; learned absolute encodings are perfect in range and at chance beyond it.",
        checks_markdown(checks),
    ])
