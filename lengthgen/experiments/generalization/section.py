"""The generalization page: accuracy by length over seeds, the claim, its checks."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.sections import accuracy_markdown


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
