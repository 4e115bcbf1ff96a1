"""rope_bases: does an account of rope's decay predict the order of the rope-base variants past the training range?

The variants train rope at several rotary bases (``rope@base=100``, ``rope`` at the model's base,
``rope@base=1e6``) on the same data. The base sets how fast each rotary block turns, so it moves
where far offsets' logits come back up, and with it how much accuracy a head keeps past the range.
That makes the bases a test the account did not see: each trained head's accuracy at every length
past the range is predicted from its parameters alone by prop1's predictors, the dilution law
(``thresholds.DILUTION_LAW_PREDICTOR``) and ``ranking`` (a distractor outranking the target), and
set beside the measured accuracy of the variants' evaluations.

The test is the order. Per offset, the encodings are ranked by their mean accuracy past the range
(over seeds and lengths), measured and predicted; a predictor passes when every pair of encodings
whose measured means differ by at least ``thresholds.ORDER_MIN_ACCURACY_GAP`` is predicted in the
measured order. A closer pair is within the seeds' noise and decides nothing; with no decided pair
the statistic is NaN and the check does not hold (there was no order to predict).

Every mean that decides a pair is a mean over rows, so each check is a statistic of per-seed sums
(``lengthgen.checks.seed_sums``), which the seed bootstrap resamples without recomputing the checks.
"""

import numpy as np
import pandas as pd

from lengthgen.checks import seed_sums
from lengthgen.checks.check import check
from lengthgen.science.dilution import predict_dilution
from lengthgen.experiments.rope_bases.tables import ORDER_PREDICTORS
from lengthgen.science.prediction_errors import DILUTION_LAW_PREDICTOR
from lengthgen.experiments.rope_bases.summaries import decided_pairs
from lengthgen.experiments.rope_bases.thresholds import ORDER_MIN_ACCURACY_GAP
from lengthgen.checks.seed_sums import SeedSums

PREDICTOR_CLAIMS = {DILUTION_LAW_PREDICTOR: "the dilution law predicts the rope-base variants' order past the range",
                    "ranking": "the ranking account predicts the rope-base variants' order past the range"}
RUN_COLUMNS = ["pe", "offset", "seed", "length"]
CHECKED = ("rope_bases_prediction",)


def is_rope_base(pe: str) -> bool:
    """Plain rope at some base: ``rope`` or ``rope@base=...`` (not the randomized one)."""
    name, _, parameters = pe.partition("@")
    return name == "rope" and all(part.startswith("base=") for part in parameters.split(",") if part)


def predicted_accuracy(model, run: dict, lengths: list[int], n_samples: int) -> pd.DataFrame:
    """One head's predicted accuracy per length and predictor of ``ORDER_PREDICTORS``."""
    predictions = predict_dilution(model, run["offset"], run["seed"], lengths, n_samples, with_exact=False)
    chosen = predictions[predictions["predictor"].isin(ORDER_PREDICTORS)]
    return chosen[["offset", "seed", "length", "predictor", "predicted_accuracy"]].assign(pe=run["pe"])


def analyze(inputs: dict, settings: dict) -> dict[str, pd.DataFrame]:
    """Every rope-base head's predictions at each length past the range, joined to its measured accuracy."""
    task = settings["task"]
    past_range = [length for length in task["eval_lengths"] if length > task["train_length_max"]]
    predictions = pd.concat([predicted_accuracy(model, run, past_range, settings["prop1"]["n_samples"])
                             for run, model in inputs["models"]], ignore_index=True)
    measured = inputs["evaluations"][RUN_COLUMNS + ["accuracy"]].rename(columns={"accuracy": "measured_accuracy"})
    joined = predictions.merge(measured, on=RUN_COLUMNS, how="left", validate="many_to_one")
    if joined["measured_accuracy"].isna().any():
        raise ValueError("rope_bases: a predicted head has no measured accuracy in the variants' evaluations")
    return {"rope_bases_prediction": joined[RUN_COLUMNS + ["predictor", "predicted_accuracy", "measured_accuracy"]],
            "rope_bases_order": mean_accuracy_past_range(joined)}


def mean_accuracy_past_range(prediction: pd.DataFrame) -> pd.DataFrame:
    """Per (offset, encoding): the mean over seeds and lengths of the measured accuracy and of each
    predictor's, in long form (``source``: measured or the predictor), with each encoding's rank (1: best)."""
    predicted = (prediction.groupby(["offset", "pe", "predictor"], as_index=False)["predicted_accuracy"].mean()
                 .rename(columns={"predictor": "source", "predicted_accuracy": "mean_accuracy"}))
    measured = (prediction.drop_duplicates(RUN_COLUMNS).groupby(["offset", "pe"], as_index=False)["measured_accuracy"]
                .mean().rename(columns={"measured_accuracy": "mean_accuracy"}).assign(source="measured"))
    means = pd.concat([measured, predicted], ignore_index=True)
    ranks = means.groupby(["offset", "source"])["mean_accuracy"].rank(ascending=False, method="min")
    return means.assign(rank=ranks.astype("int32"))


def pairs_in_order(order: pd.DataFrame, offset: int, predictor: str) -> tuple[int, int]:
    """(pairs decided by the measurement, of them those the predictor orders the same way) at one offset."""
    pairs = decided_pairs(order, offset, predictor)
    return len(pairs), sum(in_order for _, _, in_order in pairs)


def checks(tables: dict[str, pd.DataFrame], settings: dict) -> list[dict]:
    """Per offset and predictor: the share of decided pairs predicted in the measured order, all of them to hold.
    Evidence: a predictor that misreads what the base does to the kernel orders some pair wrong. Its value is the
    share of the order table's means (pandas'); the seed bootstrap resamples the same share of per-seed sums
    (``share_in_order``), whose means equal those up to rounding only."""
    prediction = tables["rope_bases_prediction"]
    order = mean_accuracy_past_range(prediction)
    measured = seed_sums.means_by(prediction.drop_duplicates(RUN_COLUMNS), ["offset", "pe"], "measured_accuracy")
    predicted = seed_sums.means_by(prediction, ["offset", "pe", "predictor"], "predicted_accuracy")
    rows = []
    for offset in sorted(order["offset"].unique()):
        n_encodings = order.loc[order["offset"] == offset, "pe"].nunique()
        for predictor in ORDER_PREDICTORS:
            decided, in_order = pairs_in_order(order, offset, predictor)
            rows.append(check(PREDICTOR_CLAIMS[predictor],
                              f"{predictor}: share of rope-base pairs apart past the range that it predicts in order",
                              in_order / decided if decided else float("nan"), ">=", 1.0, offset=int(offset),
                              rule=f"all of the {decided} of {n_encodings * (n_encodings - 1) // 2} pairs whose "
                                   f"measured means differ by >= {ORDER_MIN_ACCURACY_GAP:g}",
                              resampled=share_in_order(measured, predicted, offset, predictor)))
    return rows


def share_in_order(measured: dict[tuple, SeedSums], predicted: dict[tuple, SeedSums], offset: int,
                   predictor: str) -> SeedSums:
    """``pairs_in_order``'s share (in order over decided) at ``offset`` as a statistic of per-seed sums:
    ``measured`` holds the mean measured accuracy per (offset, pe), ``predicted`` the mean predicted one per
    (offset, pe, predictor). An encoding a resample has no rows of has a NaN measured mean and is in no pair, as
    it is missing from the resample's order table (a measured accuracy is never NaN: ``analyze`` refuses one)."""
    encodings = sorted(pe for at, pe in measured if at == offset)
    return seed_sums.combine(_share_in_order, *(measured[(offset, pe)] for pe in encodings),
                             *(predicted.get((offset, pe, predictor), seed_sums.NOTHING) for pe in encodings))


def _share_in_order(*means: np.ndarray) -> np.ndarray:
    """Per resample, as ``decided_pairs`` counts: ``means`` are every encoding's measured means, then its predicted."""
    measured, predicted = np.stack(means[:len(means) // 2]), np.stack(means[len(means) // 2:])  # (encodings, resamples)
    first, second = np.triu_indices(len(measured), k=1)  # every pair once
    measured_gap = measured[first] - measured[second]
    decided = np.abs(measured_gap) >= ORDER_MIN_ACCURACY_GAP  # False for a NaN gap: a pair the resample lacks
    in_order = decided & (np.sign(predicted[first] - predicted[second]) == np.sign(measured_gap))
    counted = decided.sum(axis=0)
    return np.where(counted > 0, in_order.sum(axis=0) / counted, np.nan)  # no decided pair: no order to predict
