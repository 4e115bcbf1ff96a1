"""The base experiment: accuracy vs evaluation length, summarized over seeds, and its section."""

import pandas as pd

from lengthgen.claims import check, checks_markdown
from lengthgen.rules import ABOVE_CHANCE_FACTOR, CHANCE_TOLERANCE, NEAR_PERFECT
from lengthgen.stats import summarize_over_seeds


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


def base_checks(summary: pd.DataFrame, vocab_size: int, train_length_max: int) -> pd.DataFrame:
    """The base claim, per offset, from the ``accuracy_summary`` table.

    RoPE: mean accuracy >= 0.99 at every in-range length, and >= 5x chance at the longest
    evaluation length not beyond 4x the training maximum. Learned: >= 0.99 in range, and
    within 0.05 of chance at every length past the range.
    """
    chance = 1.0 / vocab_size
    four_x = summary.loc[summary["length"] <= 4 * train_length_max, "length"].max()
    rows = []
    for offset, at_offset in summary.groupby("offset", sort=True):
        claim = f"K={offset}"
        in_range = at_offset[at_offset["in_training_range"]]
        past = at_offset[at_offset["length"] > train_length_max]
        for pe in ("rope", "learned"):
            worst = in_range.loc[in_range["pe"] == pe, "mean"].min()
            rows.append(check("base", claim, f"{pe}: lowest mean accuracy in training range", worst,
                              f">= {NEAR_PERFECT}", worst >= NEAR_PERFECT))
        rope_far = at_offset.loc[(at_offset["pe"] == "rope") & (at_offset["length"] == four_x), "mean"].squeeze()
        rows.append(check("base", claim, f"rope: mean accuracy at n={four_x}", rope_far,
                          f">= {ABOVE_CHANCE_FACTOR:g} x chance = {ABOVE_CHANCE_FACTOR * chance:.3f}",
                          rope_far >= ABOVE_CHANCE_FACTOR * chance))
        learned_past = past.loc[past["pe"] == "learned", "mean"]
        farthest_from_chance = (learned_past - chance).abs().max()
        rows.append(check("base", claim, "learned: largest distance of mean accuracy from chance past training range",
                          farthest_from_chance, f"<= {CHANCE_TOLERANCE} (chance = {chance:.4f})",
                          farthest_from_chance <= CHANCE_TOLERANCE))
    return pd.DataFrame(rows)


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
