"""Which trained models fit their training range: the table of every model's range fit
(``training.range_fit``, by the rules of ``lengthgen.training.range_fit``) and its part of RESULTS.md,
with the reason for each model that does not.

A model that does not fit its range is either a finding (its encoding cannot express the rule at its
offset: the variants' account predicts "fails in range" from the registry's declared properties) or
not expected; the report tells the two apart, so that "fails in range" is never a training accident
passed off as a finding. This module imports no torch: the encodings' properties come in as plain
data, and the report reads the reasons from the table.
"""

import pandas as pd

from lengthgen.experiments.families import display_names, single_softmax_heads
from lengthgen.training.range_fit import FIT_ACCURACY, SETTLED_LOSS
from lengthgen.science.variant_predictions import FAILS, NO_PREDICTION, impossibility, predicted_class

FAMILY_NAMES = display_names()  # each family of the summary as RESULTS.md names it
# The families of single softmax heads, the model the variants' account predicts for.
SINGLE_HEADS = single_softmax_heads()
TRAINING_FAILURE = "not expected: a training failure, not a property of the encoding"


def training_summary(fits: dict[str, pd.DataFrame], descriptions: dict[str, dict]) -> pd.DataFrame:
    """One table of every model's range fit, with its family (the keys of ``fits``) and, for a model
    that has not converged, why (``why_not_fitted``; ``descriptions`` per encoding)."""
    summary = pd.concat([frame.assign(family=family) for family, frame in fits.items()], ignore_index=True)
    why = [None if row.converged else why_not_fitted(row.family, descriptions[row.pe], row.offset)
           for row in summary.itertuples()]
    return summary.assign(why=why)


def why_not_fitted(family: str, description: dict, offset: int) -> str:
    """Why a model of ``family`` with an encoding of ``description`` (``variant_predictions.mechanism``) at
    ``offset`` may not fit its range: expected only where the variants' account predicts that it fails in range
    (``variant_predictions.predicted_class``), and then why; otherwise not expected, and whether the account
    predicts a fit or nothing. The account is about single softmax heads: a transformer can compose its layers
    into what one head cannot select, and the linear-attention head is asked to fit its range before its
    extrapolation is judged (``thresholds.LINEAR_HEAD_FIT_ACCURACY``), so no failure of theirs is expected."""
    if family not in SINGLE_HEADS:
        return TRAINING_FAILURE
    prediction = predicted_class(description, offset)
    if prediction == FAILS:
        return f"expected: {impossibility(description, offset)}"
    if prediction == NO_PREDICTION:
        return "not expected: no class predicted here (a training failure, or a property no declaration states)"
    return TRAINING_FAILURE


def training_markdown(summary: pd.DataFrame) -> str:
    """The Training part of RESULTS.md: per family how many models fit their range, and every model
    that does not, with why (the table's ``why``)."""
    counts = summary.groupby("family", sort=False).agg(models=("converged", "size"), fitted=("fitted", "sum"),
                                                       converged=("converged", "sum"))
    count_table = pd.DataFrame([[f"{FAMILY_NAMES.get(family, family)}", f"{row.models}", f"{row.fitted}",
                                 f"{row.converged}"] for family, row in counts.iterrows()],
                               columns=["models", "trained", "fit their range", "converged"])
    parts = ["## Training",
             "Every model is trained with Adam under a one-cycle schedule (warmup, then cosine decay) and saved at "
             f"its last step. A model **fits its training range** when its accuracy on held-out sequences at every "
             f"training length is >= {FIT_ACCURACY}, and has **converged** when besides its mean training loss over "
             f"the last progress window is <= {SETTLED_LOSS} nats (rules of `lengthgen/training/range_fit.py`, fixed "
             "before the runs).",
             count_table.to_markdown(index=False, disable_numparse=True)]
    failing = summary[~summary["converged"]].sort_values(["family", "pe", "offset", "seed"])
    if failing.empty:
        return "\n\n".join(parts + ["Every model fits its training range and has converged."])
    is_unexpected = failing["why"].str.startswith("not expected")
    unexpected, expected = failing[is_unexpected], failing[~is_unexpected]
    parts.append(f"Models that do not converge: {len(failing)}, {len(unexpected)} of them not expected from their "
                 "encoding's properties.")
    if not unexpected.empty:
        rows = [[f"{row.family}", f"{row.pe}", f"{row.offset}", f"{row.seed}", f"{row.heldout_accuracy:.3f}",
                 f"{row.final_loss:.3f}", f"{row.why}"] for row in unexpected.itertuples()]
        parts += ["Not expected, model by model:",
                  pd.DataFrame(rows, columns=["family", "encoding", "K", "seed", "held-out accuracy", "final loss",
                                              "why"]).to_markdown(index=False, disable_numparse=True)]
    if not expected.empty:
        trained = summary.groupby(["family", "pe", "offset"]).size()
        groups = expected.groupby(["family", "pe", "offset"], sort=False)
        rows = [[family, pe, f"{offset}", f"{len(group)} of {trained[family, pe, offset]}",
                 _value_range(group["heldout_accuracy"]), _value_range(group["final_loss"]), group["why"].iloc[0]]
                for (family, pe, offset), group in groups]
        parts += ["Expected from their encoding's properties, per encoding and K:",
                  pd.DataFrame(rows, columns=["family", "encoding", "K", "not converged", "held-out accuracy",
                                              "final loss", "why"]).to_markdown(index=False, disable_numparse=True)]
    return "\n\n".join(parts)


def _value_range(values: pd.Series) -> str:
    low, high = f"{values.min():.3f}", f"{values.max():.3f}"
    return low if low == high else f"{low} to {high}"
