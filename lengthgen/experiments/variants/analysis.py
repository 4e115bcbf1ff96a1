"""The variants experiment: every encoding of ``variants.pe`` on the same data, classified by what
happens past the training range, each class set beside the one the account predicts from the
mechanism its registry entry states.

The mechanism comes in as plain data (``variant_predictions.mechanism``, read from the registry's
source); the only models it loads are the ``fire`` heads, for the threshold L each learned
(``fire_thresholds``), which decides up to which length its bias is a function of the offset alone. The classes are the rules of
``lengthgen/experiments/variants/thresholds.py``; a prediction (``lengthgen/science/variant_predictions.py``)
is a function of the properties and the offset alone, so it is fixed before any run.
"""

import numpy as np
import pandas as pd

from lengthgen.checks import seed_sums
from lengthgen.checks.check import check
from lengthgen.experiments.generalization.analysis import summarize_accuracy
from lengthgen.experiments.variants.thresholds import EXTRAPOLATES_ACCURACY, VARIANT_LENGTH_FACTOR
from lengthgen.checks.shared_rules import CHANCE_TOLERANCE, NEAR_PERFECT
from lengthgen.checks.seed_sums import SeedSums
from lengthgen.checks.fitted_runs import fit_counts, fit_shares, fitted_means, mostly, runs_that_fit
from lengthgen.experiments.variants.summaries import mechanisms
from lengthgen.science.variant_predictions import (ALLOWED_CLASSES, COLLAPSES, DECAYS, EXTRAPOLATES, FAILS, NO_PREDICTION,
                                           at_length, impossibility, predicted_class)

EXPERIMENT = "variants"


def summarize_variants(evaluations: pd.DataFrame) -> pd.DataFrame:
    """``variants_summary`` rows of the variants' runs: mean and 95% interval over seeds."""
    return summarize_accuracy(evaluations.assign(experiment=EXPERIMENT))


def classify(fit_share: float, mean_in_range_min: float, mean_far: float, chance: float) -> str:
    """The class of one (encoding, offset), by the rules of ``lengthgen/experiments/variants/thresholds.py``, from
    the share of its seeds that fit their range, its lowest in-range and its far mean accuracy."""
    return str(classes(np.asarray(fit_share), np.asarray(mean_in_range_min), np.asarray(mean_far), chance))


def classes(fit_shares: np.ndarray, means_in_range_min: np.ndarray, means_far: np.ndarray, chance: float) -> np.ndarray:
    """``classify`` of each set of statistics at once: the seed bootstrap decides the class on every resample."""
    fails_in_range = ~mostly(fit_shares) | (means_in_range_min < NEAR_PERFECT)
    return np.select([fails_in_range, means_far >= EXTRAPOLATES_ACCURACY, means_far <= chance + CHANCE_TOLERANCE],
                     [FAILS, EXTRAPOLATES, COLLAPSES], DECAYS)


def classify_variants(summary: pd.DataFrame, counts: pd.DataFrame, vocab_size: int,
                      train_length_max: int) -> pd.DataFrame:
    """``variants_classes``: per (pe, offset) of ``summary`` the statistics the class is decided on, its fit counts
    (``counts``, from ``fit_counts``) and the class."""
    far_length = VARIANT_LENGTH_FACTOR * train_length_max
    counts = counts.set_index(["pe", "offset"])
    rows = []
    for (pe, offset), cell in summary.groupby(["pe", "offset"], sort=True):
        far = cell[cell["length"] == far_length].squeeze()
        lowest = cell.loc[cell["in_training_range"], "mean"].min()
        n_seeds, n_fitted = counts.loc[(pe, offset), ["n_seeds", "n_fitted"]]
        rows.append({"pe": pe, "offset": offset, "lowest_in_range": lowest, "far_length": far_length,
                     "far_mean": far["mean"], "far_ci_low": far["ci_low"], "far_ci_high": far["ci_high"],
                     "longest_length": cell["length"].max(),
                     "longest_mean": cell.loc[cell["length"].idxmax(), "mean"],
                     "category": classify(n_fitted / n_seeds, lowest, far["mean"], 1.0 / vocab_size),
                     "n_seeds": int(n_seeds), "n_fitted": int(n_fitted)})
    return pd.DataFrame(rows)


def fitted_summary(evaluations: pd.DataFrame, fits: pd.DataFrame) -> pd.DataFrame:
    """The summary over seeds of the runs a class is decided on: a class past the range presupposes a fitted
    range, so where most of a cell's seeds fit it, the others are left out (``runs_that_fit``)."""
    return summarize_variants(runs_that_fit(evaluations, fits))


def fire_thresholds(models) -> pd.DataFrame:
    """``variants_fire_thresholds``: per (run, model) of ``models`` (trained ``fire`` heads) the threshold L its
    encoding started from and the one it ended at, |s| x L0 with s its learned multiplier, as ``FIRE.logit_bias``
    computes it."""
    rows = [{**run, "initial_threshold": model.encoding.initial_threshold.item(),
             "learned_threshold": (model.encoding.threshold_scale * model.encoding.initial_threshold).abs().item()}
            for run, model in models]
    return pd.DataFrame(rows, columns=["pe", "offset", "seed", "initial_threshold", "learned_threshold"])


def analyze(inputs: dict, settings: dict) -> dict[str, pd.DataFrame]:
    task, fits = settings["task"], inputs["fits"]
    summary = fitted_summary(inputs["evaluations"], fits)
    classes = classify_variants(summary, fit_counts(fits), task["vocab_size"], task["train_length_max"])
    return {"variants_summary": summary, "variants_classes": classes,
            "variants_fire_thresholds": fire_thresholds(inputs["fire_models"])}


# The fit filter is part of what is checked: the seed bootstrap redoes it on every resample.
CHECKED = ("evaluations", "fits")


def checks(tables: dict[str, pd.DataFrame], settings: dict) -> list[dict]:
    task = settings["task"]
    statistics = class_statistics(tables["evaluations"], tables["fits"], task["train_length_max"])
    return variants_checks(statistics, mechanisms(settings["variants"]["pe"]), task["vocab_size"])


def class_statistics(evaluations: pd.DataFrame, fits: pd.DataFrame, train_length_max: int) -> pd.DataFrame:
    """Per (pe, offset), sorted: what ``classify_variants`` decides the class on, of the same runs
    (``fitted_summary``), as seed sums (``lengthgen.checks.seed_sums``): the share of its seeds that fit their range
    (``fit_share``), the lowest mean accuracy at an in-range length (``lowest_in_range``) and the mean at the far
    length (``far_mean``, at ``far_length``)."""
    means = fitted_means(evaluations, fits, ["length", "in_training_range"], "accuracy")
    shares = fit_shares(evaluations, fits)
    summary = pd.DataFrame(list(means), columns=["pe", "offset", "length", "in_training_range"]).assign(
        mean=list(means.values()))
    far_length = VARIANT_LENGTH_FACTOR * train_length_max
    return pd.DataFrame([{"pe": pe, "offset": offset, "far_length": far_length, "fit_share": shares[(pe, offset)],
                          "lowest_in_range": seed_sums.smallest(list(cell.loc[cell["in_training_range"], "mean"])),
                          "far_mean": cell.loc[cell["length"] == far_length, "mean"].item()}
                         for (pe, offset), cell in summary.groupby(["pe", "offset"], sort=True)])


def class_matches(fit_share: SeedSums, lowest_in_range: SeedSums, far_mean: SeedSums, chance: float,
                  allowed: set[str]) -> SeedSums:
    """1.0 where the class of the statistics (``classes``) is one of ``allowed``, else 0.0, as seed sums."""
    return seed_sums.combine(
        lambda share, lowest, far: np.isin(classes(share, lowest, far, chance), sorted(allowed)).astype(float),
        fit_share, lowest_in_range, far_mean)


def variants_checks(statistics: pd.DataFrame, descriptions: dict[str, dict], vocab_size: int) -> list[dict]:
    """One check per (encoding, offset) of ``statistics`` (``class_statistics``) the account predicts a class for
    (``predicted_class``): the measured class is one the prediction allows.

    Evidence, except where the prediction is an impossibility (``variant_predictions.impossibility``: no
    position term; a position term monotone in the offset at K >= 2; random position ids at K >= 2): a head
    that fits there is a bug, in the encoding or in its registry entry, so that check is sanity and states the
    lowest in-range accuracy against the fit bar (``NEAR_PERFECT``).
    """
    chance = 1.0 / vocab_size
    rows = []
    for cell in statistics.itertuples():
        described = at_length(descriptions[cell.pe], cell.far_length)  # the longest length its class reads
        predicted = predicted_class(described, cell.offset)
        if predicted == NO_PREDICTION:
            continue
        cannot = impossibility(described, cell.offset)
        if cannot:
            rows.append(check(cannot, f"{cell.pe}: lowest mean accuracy in training range", cell.lowest_in_range, "<",
                              NEAR_PERFECT, offset=cell.offset,
                              rule=f"< {NEAR_PERFECT} (fails in range)", kind="sanity"))
            continue
        share, lowest, far = cell.fit_share.value(), cell.lowest_in_range.value(), cell.far_mean.value()
        statistic = f"{cell.pe}: measured class matches the predicted one ({predicted})"
        rows.append(check("prediction matches", statistic,
                          class_matches(cell.fit_share, cell.lowest_in_range, cell.far_mean, chance,
                                        ALLOWED_CLASSES[predicted]),
                          "==", 1, offset=cell.offset,
                          rule=f"measured: {classify(share, lowest, far, chance)} (seeds fitting the range "
                               f"{share:.0%}; lowest in range {lowest:.3f}; "
                               f"n={cell.far_length}: {far:.3f}, chance + {CHANCE_TOLERANCE} = "
                               f"{chance + CHANCE_TOLERANCE:.3f})"))
    if not any(row["kind"] == "evidence" for row in rows):  # nothing to test is no confirmation
        rows.append(check("the account makes a prediction", "number of encodings and offsets it applies to", 0,
                          ">=", 1))
    return rows
