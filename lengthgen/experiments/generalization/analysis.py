"""The generalization experiment: accuracy vs evaluation length of the sweep's heads, summarized over seeds, and its
checks."""

import numpy as np
import pandas as pd

from lengthgen.checks import seed_sums
from lengthgen.checks.check import check
from lengthgen.checks.seed_sums import SeedSums
from lengthgen.checks.shared_rules import ABOVE_CHANCE_FACTOR, CHANCE_TOLERANCE, NEAR_PERFECT
from lengthgen.checks.stats import summarize_over_seeds


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
    return generalization_checks(sweep_accuracy(tables["accuracy_by_length"]), task["vocab_size"],
                                 task["train_length_max"])


def generalization_checks(sweep: pd.DataFrame, vocab_size: int, train_length_max: int) -> list[dict]:
    """The generalization claim, per offset, from the sweep's rows (``sweep_accuracy``).

    RoPE: mean accuracy >= 0.99 at every in-range length, and >= 5x chance at the longest
    evaluation length not beyond 4x the training maximum. Learned: >= 0.99 in range, and
    within 0.05 of chance at every length past the range.

    Each value is the statistic of the ``accuracy_summary``'s means bit for bit (the slow tier compares the values
    with the committed run's exactly); the seed bootstrap resamples the same statistic of per-seed sums
    (``lengthgen.checks.seed_sums``), which equals it up to rounding only, so it is kept beside the value
    (``claims.check``'s ``resampled``), not in its place.
    """
    chance = 1.0 / vocab_size
    summary = summarize_accuracy(sweep)
    four_x = summary.loc[summary["length"] <= 4 * train_length_max, "length"].max()
    values, summed = (offset_statistics(means, chance, train_length_max)
                      for means in (summary_means(summary), row_means(sweep)))
    rows = []
    for offset, statistics in values.items():
        def checked(claim, statistic, name, comparison, threshold, rule=None):
            rows.append(check(claim, statistic, statistics[name].value(), comparison, threshold, offset=offset,
                              rule=rule, resampled=summed[offset][name]))

        for pe in ("rope", "learned"):
            checked("both encodings fit the training range", f"{pe}: lowest mean accuracy in training range",
                    f"{pe}_lowest", ">=", NEAR_PERFECT)
        checked("rope stays well above chance at 4x the training length",
                "rope: mean accuracy at the longest length <= 4x the training maximum", "rope_far", ">=",
                ABOVE_CHANCE_FACTOR * chance,
                rule=f">= {ABOVE_CHANCE_FACTOR:g} x chance = {ABOVE_CHANCE_FACTOR * chance:.3f} (n={four_x})")
        checked("learned is at chance past the training range",
                "learned: largest distance of mean accuracy from chance past training range", "learned_from_chance",
                "<=", CHANCE_TOLERANCE, rule=f"<= {CHANCE_TOLERANCE} (chance = {chance:.4f})")
    return rows


MEAN_KEYS = ["pe", "offset", "length", "in_training_range"]


def summary_means(summary: pd.DataFrame) -> pd.DataFrame:
    """The ``accuracy_summary``'s means per (pe, offset, length) as constant seed sums: its numbers exactly."""
    return summary[MEAN_KEYS].assign(mean=summary["mean"].map(seed_sums.constant))


def row_means(sweep: pd.DataFrame) -> pd.DataFrame:
    """The same means as ``summary_means``, of per-seed sums of the sweep's rows (a resample's own means)."""
    means = seed_sums.means_by(sweep, MEAN_KEYS, "accuracy")
    return pd.DataFrame(list(means), columns=MEAN_KEYS).assign(mean=list(means.values()))


def offset_statistics(means: pd.DataFrame, chance: float, train_length_max: int) -> dict[int, dict[str, SeedSums]]:
    """Per offset of ``means`` (``summary_means`` or ``row_means``), in ascending order, what its checks compare:
    each encoding's lowest mean at an in-range length, rope's mean at the longest length <= 4x the training maximum
    evaluated at all (any encoding, any offset), learned's largest distance of a mean from chance past the range.
    A length a resample has no rows of is left out of each, as it is missing from the resample's summary."""
    far_lengths = sorted(means.loc[means["length"] <= 4 * train_length_max, "length"].unique(), reverse=True)
    evaluated = [seed_sums.largest(list(means.loc[means["length"] == length, "mean"])) for length in far_lengths]
    statistics = {}
    for offset, at_offset in means.groupby("offset", sort=True):
        in_range = at_offset[at_offset["in_training_range"]]
        learned_past = at_offset.loc[(at_offset["pe"] == "learned") & (at_offset["length"] > train_length_max), "mean"]
        rope = at_offset[at_offset["pe"] == "rope"].set_index("length")["mean"]
        statistics[offset] = {
            **{f"{pe}_lowest": seed_sums.smallest(list(in_range.loc[in_range["pe"] == pe, "mean"]))
               for pe in ("rope", "learned")},
            "rope_far": first_evaluated(evaluated, [rope.get(length, seed_sums.NOTHING) for length in far_lengths]),
            "learned_from_chance": seed_sums.largest([abs(mean - chance) for mean in learned_past])}
    return statistics


def first_evaluated(evaluated: list[SeedSums], values: list[SeedSums]) -> SeedSums:
    """Per resample, ``values[i]`` at the first ``i`` whose ``evaluated[i]`` is not NaN; NaN where none is.
    ``values`` is never empty here: every in-range length is a candidate."""
    return seed_sums.combine(_first_evaluated, *evaluated, *values)


def _first_evaluated(*parts: np.ndarray) -> np.ndarray:
    evaluated, values = parts[:len(parts) // 2], parts[len(parts) // 2:]
    chosen = np.full(len(values[0]), np.nan)
    for present, value in zip(reversed(evaluated), reversed(values)):  # the first one evaluated is set last
        chosen = np.where(np.isnan(present), chosen, value)
    return chosen
