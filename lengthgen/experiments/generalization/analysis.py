"""The generalization experiment: accuracy vs evaluation length of the sweep's heads, summarized over seeds, and its
checks."""

import pandas as pd

from lengthgen.claims import check
from lengthgen.thresholds import ABOVE_CHANCE_FACTOR, CHANCE_TOLERANCE, NEAR_PERFECT
from lengthgen.stats import summarize_over_seeds


def summarize_accuracy(accuracy: pd.DataFrame) -> pd.DataFrame:
    """``accuracy_summary``: mean and 95% interval over seeds per (experiment, pe, offset, length)."""
    keys = ["experiment", "pe", "offset", "length", "in_training_range"]
    summary = summarize_over_seeds(accuracy, keys, "accuracy")
    # An accuracy lies in [0, 1]; so does any interval worth printing for it.
    return summary.assign(ci_low=summary["ci_low"].clip(0, 1), ci_high=summary["ci_high"].clip(0, 1))


CHECKED = ("accuracy_by_length",)


def sweep_accuracy(accuracy_by_length: pd.DataFrame) -> pd.DataFrame:
    return accuracy_by_length[accuracy_by_length["experiment"] == "generalization"]


def analyze(inputs: dict, settings: dict) -> dict[str, pd.DataFrame]:
    return {"accuracy_summary": summarize_accuracy(sweep_accuracy(inputs["accuracy_by_length"]))}


def checks(tables: dict[str, pd.DataFrame], settings: dict) -> list[dict]:
    task = settings["task"]
    return generalization_checks(summarize_accuracy(sweep_accuracy(tables["accuracy_by_length"])), task["vocab_size"],
                       task["train_length_max"])


def generalization_checks(summary: pd.DataFrame, vocab_size: int, train_length_max: int) -> list[dict]:
    """The generalization claim, per offset, from the ``accuracy_summary`` table.

    RoPE: mean accuracy >= 0.99 at every in-range length, and >= 5x chance at the longest
    evaluation length not beyond 4x the training maximum. Learned: >= 0.99 in range, and
    within 0.05 of chance at every length past the range.
    """
    chance = 1.0 / vocab_size
    four_x = summary.loc[summary["length"] <= 4 * train_length_max, "length"].max()
    rows = []
    for offset, at_offset in summary.groupby("offset", sort=True):
        in_range = at_offset[at_offset["in_training_range"]]
        past = at_offset[at_offset["length"] > train_length_max]
        for pe in ("rope", "learned"):
            worst = in_range.loc[in_range["pe"] == pe, "mean"].min()
            rows.append(check("both encodings fit the training range", f"{pe}: lowest mean accuracy in training range",
                              worst, ">=", NEAR_PERFECT, offset=offset))
        rope_far = at_offset.loc[(at_offset["pe"] == "rope") & (at_offset["length"] == four_x), "mean"].squeeze()
        rows.append(check("rope stays well above chance at 4x the training length",
                          "rope: mean accuracy at the longest length <= 4x the training maximum", rope_far, ">=",
                          ABOVE_CHANCE_FACTOR * chance, offset=offset,
                          rule=f">= {ABOVE_CHANCE_FACTOR:g} x chance = {ABOVE_CHANCE_FACTOR * chance:.3f} (n={four_x})"))
        farthest_from_chance = (past.loc[past["pe"] == "learned", "mean"] - chance).abs().max()
        rows.append(check("learned is at chance past the training range",
                          "learned: largest distance of mean accuracy from chance past training range",
                          farthest_from_chance, "<=", CHANCE_TOLERANCE, offset=offset,
                          rule=f"<= {CHANCE_TOLERANCE} (chance = {chance:.4f})"))
    return rows
