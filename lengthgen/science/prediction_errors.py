"""prop1's comparison of predictions with measurements, without torch: the trivial baselines, the error
statistics of every predictor, and how far a predictor beats the better baseline (``gain_over_trivial``).

``lengthgen/science/dilution.py`` makes the predictions from a head's parameters (torch); the multiseed job, which
reads prop1's table and runs no model, uses this module per run.

Trivial baselines (``TRIVIAL_PREDICTORS``), computed from the measurements: ``chance`` (attention 1/n,
accuracy 1/V: a head that lost everything, as an untrained head does) and ``no_decay`` (each head's measured
value at its longest in-range length, held at every length).
"""

import math

import numpy as np
import pandas as pd

from lengthgen.checks import seed_sums
from lengthgen.checks.seed_sums import SeedSums

# The dilution law's predictors and the ranking account (lengthgen/science/dilution.py makes their predictions), named
# here, without torch, for the tables and texts that report them.
PREDICTORS = ("mean_logit", "mean_field", "mean_field_target", "ranking", "exact")
# The form that stands for the dilution law wherever one is needed (prop1's claim, the errors' split, the cures'
# and robustness' comparisons): a choice, not a threshold. The mean-field form fit within ~0.07 in a feasibility
# run before the full runs, where the plain mean-logit form over-predicted by ~0.18.
DILUTION_LAW_PREDICTOR = "mean_field"
PROFILE_PREDICTORS = PREDICTORS[:3]  # those that give a fixed weight profile per (query, target) token
ATTENTION_PREDICTORS = (*PROFILE_PREDICTORS, "exact")  # those with an attention prediction of their own
PREDICTOR_LABELS = {
    "mean_logit": "exp s(K) / sum_delta exp s(delta), s averaged over token content",
    "mean_field": "exp(logit) averaged over the key token b at each delta, per query token a, then over a",
    "mean_field_target": "as mean_field, with the target's own logit at its actual token t, then over a and t",
    "ranking": "accuracy only: P(no key of another token outranks the target), from the kernel over token pairs "
               "with uniform distractor tokens, times whether the target token's own value reads out as itself",
    "exact": "the exact expectation over content (Laplace-transform identity); accuracy: the kernel's own "
             "softmax on random sequences (a consistency check)",
}
QUANTITIES = ("target_attention", "accuracy")
TRIVIAL_PREDICTORS = ("chance", "no_decay")  # baselines from the measurements (module doc)
TRIVIAL_LABELS = {
    "chance": "baseline: attention 1/n, accuracy 1/V (everything lost, as at init)",
    "no_decay": "baseline: each head's measured value at its longest in-range length, at every length",
}
BORROWED_ATTENTION = {"ranking": "mean_field"}  # accuracy-only predictor -> the one whose attention its rows repeat
QUANTITY_COLUMNS = {"target_attention": "attention", "accuracy": "accuracy"}  # quantity -> its columns' suffix


def trivial_predictions(comparison: pd.DataFrame, train_length_max: int, vocab_size: int) -> pd.DataFrame:
    """Rows of ``TRIVIAL_PREDICTORS`` for every measured (offset, seed, length) of ``comparison``.

    ``no_decay`` holds each head at its measurement at the longest length <= ``train_length_max``;
    a head with no such length has no ``no_decay`` rows.
    """
    measured = comparison.drop(columns=["predictor", "predicted_attention", "predicted_accuracy"]).drop_duplicates(
        ["offset", "seed", "length"])
    chance = measured.assign(predictor="chance", predicted_attention=1.0 / measured["length"],
                             predicted_accuracy=1.0 / vocab_size)
    in_range = measured[measured["length"] <= train_length_max].sort_values("length").groupby(["offset", "seed"]).last()
    held = in_range[["measured_attention", "measured_accuracy"]].rename(
        columns={"measured_attention": "predicted_attention", "measured_accuracy": "predicted_accuracy"})
    no_decay = measured.merge(held, left_on=["offset", "seed"], right_index=True).assign(predictor="no_decay")
    return pd.concat([chance, no_decay], ignore_index=True)[comparison.columns]


def with_baselines(comparison: pd.DataFrame, train_length_max: int, vocab_size: int) -> pd.DataFrame:
    """The rows of ``comparison`` and of the trivial baselines (``trivial_predictions``), one under the other."""
    return pd.concat([comparison, trivial_predictions(comparison, train_length_max, vocab_size)], ignore_index=True)


def error_statistics(predicted: pd.Series, measured: pd.Series) -> dict:
    """n, mean absolute error, mean signed error (predicted - measured), Pearson correlation."""
    predicted, measured = predicted.to_numpy(float), measured.to_numpy(float)
    spread = predicted.std() > 0 and measured.std() > 0
    correlation = float(np.corrcoef(predicted, measured)[0, 1]) if len(predicted) > 1 and spread else float("nan")
    return {"n": len(predicted), "mae": float(np.abs(predicted - measured).mean()),
            "bias": float((predicted - measured).mean()), "correlation": correlation}


def prediction_errors(comparison: pd.DataFrame, train_length_max: int, vocab_size: int,
                      heads: str = "trained") -> pd.DataFrame:
    """``prop1_error`` rows of one set of heads, per offset and over all offsets: every predictor of
    ``comparison`` and the trivial baselines (ranking: accuracy only)."""
    rows_with_baselines = with_baselines(comparison, train_length_max, vocab_size)
    scopes = [(f"K={offset}", group) for offset, group in rows_with_baselines.groupby("offset", sort=True)]
    scopes.append(("all", rows_with_baselines))
    rows = []
    for scope, frame in scopes:
        for lengths, subset in (("beyond_training", frame[frame["length"] > train_length_max]), ("all", frame)):
            for predictor, rows_of_predictor in subset.groupby("predictor", sort=True):
                for quantity, column in QUANTITY_COLUMNS.items():
                    if quantity == "target_attention" and predictor in BORROWED_ATTENTION:
                        continue  # a copy of another predictor's attention
                    stats = error_statistics(rows_of_predictor[f"predicted_{column}"],
                                             rows_of_predictor[f"measured_{column}"])
                    rows.append({"heads": heads, "scope": scope, "lengths": lengths, "predictor": predictor,
                                 "quantity": quantity, **stats})
    return pd.DataFrame(rows)


def beyond_mae(errors: pd.DataFrame, heads: str, scope: str, predictor: str, quantity: str) -> float:
    """The MAE past the training range of one row of ``prop1_error`` (NaN where it has none)."""
    found = errors.loc[(errors["heads"] == heads) & (errors["scope"] == scope)
                       & (errors["lengths"] == "beyond_training") & (errors["predictor"] == predictor)
                       & (errors["quantity"] == quantity), "mae"]
    return float(found.iloc[0]) if len(found) else math.nan


def gain_over_trivial(errors: pd.DataFrame, heads: str, scope: str, predictor: str, quantity: str) -> float:
    """The lower of the trivial baselines' MAEs past the range minus the predictor's: how much of what a
    trivial guess misses the predictor gets right."""
    trivial = min(beyond_mae(errors, heads, scope, name, quantity) for name in TRIVIAL_PREDICTORS)
    return trivial - beyond_mae(errors, heads, scope, predictor, quantity)


def mae_past_range(rows: pd.DataFrame, train_length_max: int, predictor: str, quantity: str,
                   offset: int | None = None) -> SeedSums:
    """``beyond_mae`` of ``prediction_errors`` as seed sums, for the seed bootstrap: the MAE past the training range
    of ``predictor``'s ``quantity`` on ``rows`` (``with_baselines``), at ``offset`` (None: all offsets)."""
    column = QUANTITY_COLUMNS[quantity]
    chosen = rows[(rows["length"] > train_length_max) & (rows["predictor"] == predictor)
                  & ((rows["offset"] == offset) if offset is not None else True)]
    errors = (chosen[f"predicted_{column}"].astype(float) - chosen[f"measured_{column}"].astype(float)).abs()
    return seed_sums.mean(chosen.assign(error=errors), "error")


def gain_past_range(rows: pd.DataFrame, train_length_max: int, predictor: str, quantity: str,
                    offset: int | None = None) -> SeedSums:
    """``gain_over_trivial`` as seed sums (``mae_past_range``): the lower of the trivial baselines' MAEs past the
    range minus the predictor's."""
    trivial = seed_sums.smallest([mae_past_range(rows, train_length_max, name, quantity, offset)
                                  for name in TRIVIAL_PREDICTORS])
    return trivial - mae_past_range(rows, train_length_max, predictor, quantity, offset)
