"""The base experiment: accuracy vs evaluation length, summarized over seeds, and its section."""

import pandas as pd

from lengthgen.stats import summarize_over_seeds


def label_runs(evaluation: pd.DataFrame, experiment: str, train_length_min: int, train_length_max: int, *,
               pe: str, offset: int, seed: int) -> pd.DataFrame:
    """One run's per-length evaluation as rows of the ``accuracy_by_length`` table."""
    in_range = evaluation["length"].between(train_length_min, train_length_max)
    return evaluation.assign(experiment=experiment, pe=pe, offset=offset, seed=seed, in_training_range=in_range)


def summarize_accuracy(accuracy: pd.DataFrame) -> pd.DataFrame:
    """``accuracy_summary``: mean and 95% interval over seeds per (experiment, pe, offset, length)."""
    keys = ["experiment", "pe", "offset", "length", "in_training_range"]
    summary = summarize_over_seeds(accuracy, keys, "accuracy")
    # An accuracy lies in [0, 1]; so does any interval worth printing for it.
    return summary.assign(ci_low=summary["ci_low"].clip(0, 1), ci_high=summary["ci_high"].clip(0, 1))


def format_interval(mean: float, low: float, high: float) -> str:
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def accuracy_markdown(summary: pd.DataFrame) -> str:
    """A markdown table: one row per (encoding, offset), one column per length."""
    cells = summary.assign(cell=[format_interval(*row) for row in summary[["mean", "ci_low", "ci_high"]].to_numpy()])
    wide = cells.pivot_table(index=["pe", "offset"], columns="length", values="cell", aggfunc="first")
    in_range = set(summary.loc[summary["in_training_range"], "length"])
    header = ["encoding", "K"] + [f"n={n}{'*' if n in in_range else ''}" for n in wide.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for (pe, offset), row in wide.iterrows():
        lines.append("| " + " | ".join([pe, str(offset)] + list(row)) + " |")
    return "\n".join(lines)


def checks_markdown(checks: pd.DataFrame) -> str:
    lines = ["| claim | statistic | value | rule | holds |", "|---|---|---|---|---|"]
    for row in checks.itertuples():
        lines.append(f"| {row.claim} | {row.statistic} | {row.value:.4g} | {row.rule} | {'yes' if row.holds else 'no'} |")
    return "\n".join(lines)


def section_markdown(summary: pd.DataFrame, checks: pd.DataFrame, vocab_size: int) -> str:
    n_seeds = summary["n_seeds"].min()
    return "\n\n".join([
        "## base: accuracy vs evaluation length",
        f"Accuracy of the single head on held-out sequences at each length: mean over {n_seeds} seeds "
        f"with a 95% Student-t interval (clipped to [0, 1]). Lengths marked * lie in the training range. Chance is 1/V = {1 / vocab_size:.4f}.",
        accuracy_markdown(summary),
        "![accuracy vs length](figures/base.png)",
        "**Claim**: RoPE keeps near-perfect accuracy in the training range and stays well above chance "
        "at 4x the longest training length; learned absolute encodings are perfect in range and at chance beyond it.",
        checks_markdown(checks),
    ])
