"""Which trained models fit their training range (``training.range_fit``), and of each that does not, whether the
variants' account expected it from its encoding's declared properties (plain data: no torch) or training failed."""

import pandas as pd

from lengthgen.experiments.families import display_names, single_softmax_heads
from lengthgen.experiments.sections import markdown, span
from lengthgen.training.range_fit import FIT_ACCURACY, SETTLED_LOSS
from lengthgen.science.variant_predictions import FAILS, NO_PREDICTION, impossibility, predicted_class

FAMILY_NAMES = display_names()  # each family as the report names it
SINGLE_HEADS = single_softmax_heads()  # the families the variants' account predicts for
TRAINING_FAILURE = "not expected: a training failure, not a property of the encoding"


def training_summary(fits: dict[str, pd.DataFrame], descriptions: dict[str, dict]) -> pd.DataFrame:
    """Every model's range fit, its family (the keys of ``fits``) and, where not converged, why (``descriptions``)."""
    summary = pd.concat([frame.assign(family=family) for family, frame in fits.items()], ignore_index=True)
    return summary.assign(why=[None if row.converged else why_not_fitted(row.family, descriptions[row.pe], row.offset)
                               for row in summary.itertuples()])


def why_not_fitted(family: str, description: dict, offset: int) -> str:
    """Expected, and why, only for a single softmax head the variants' account predicts fails at ``offset``: a
    transformer composes what one head cannot, and the linear head must fit its range before it is judged."""
    prediction = predicted_class(description, offset) if family in SINGLE_HEADS else None
    if prediction == FAILS:
        return f"expected: {impossibility(description, offset)}"
    if prediction == NO_PREDICTION:
        return "not expected: no class predicted here (a training failure, or a property no declaration states)"
    return TRAINING_FAILURE


def rules_missed(row) -> str:
    """Which of the two rules a model that has not converged misses: a near fit (held-out accuracy 0.98, loss 0.06)
    misses the fit alone."""
    rules = [(row.fitted, f"fit (held-out < {FIT_ACCURACY})"), (row.settled, f"loss (> {SETTLED_LOSS})")]
    return " and ".join(name for held, name in rules if not held)


def training_markdown(summary: pd.DataFrame) -> str:
    """The training section: per family how many models fit their range, and every one that does not, with why."""
    counts = summary.groupby("family", sort=False).agg(models=("converged", "size"), fitted=("fitted", "sum"),
                                                       converged=("converged", "sum"))
    parts = ["## Training",
             "Every model is trained with Adam under a one-cycle schedule (warmup, then cosine decay) and saved at "
             f"its last step. A model **fits its training range** when its accuracy on held-out sequences at every "
             f"training length is >= {FIT_ACCURACY}, and has **converged** when besides its mean training loss over "
             f"the last progress window is <= {SETTLED_LOSS} nats (rules of `lengthgen/training/range_fit.py`, fixed "
             "before the runs).",
             markdown([[FAMILY_NAMES.get(family, family), f"{row.models}", f"{row.fitted}", f"{row.converged}"]
                       for family, row in counts.iterrows()], ["models", "trained", "fit their range", "converged"])]
    failing = summary[~summary["converged"]].sort_values(["family", "pe", "offset", "seed"])
    if failing.empty:
        return "\n\n".join(parts + ["Every model fits its training range and has converged."])
    unexpected = failing["why"].str.startswith("not expected")
    parts.append(f"Models that do not converge (one rule or both missed): {len(failing)}, {unexpected.sum()} of them "
                 "not expected from their encoding's properties.")
    columns = ["family", "encoding", "K"]
    if unexpected.any():
        rows = [[row.family, row.pe, f"{row.offset}", f"{row.seed}", f"{row.heldout_accuracy:.3f}",
                 f"{row.final_loss:.3f}", rules_missed(row), row.why] for row in failing[unexpected].itertuples()]
        parts += ["Not expected, model by model:",
                  markdown(rows, [*columns, "seed", "held-out accuracy", "final loss", "rule missed", "why"])]
    if not unexpected.all():
        trained = summary.groupby(["family", "pe", "offset"]).size()
        rows = [[family, pe, f"{offset}", f"{len(group)} of {trained[family, pe, offset]}",
                 span(group["heldout_accuracy"], "{:.3f}".format), span(group["final_loss"], "{:.3f}".format),
                 group["why"].iloc[0]]
                for (family, pe, offset), group in failing[~unexpected].groupby(["family", "pe", "offset"], sort=False)]
        parts += ["Expected from their encoding's properties, per encoding and K:",
                  markdown(rows, [*columns, "not converged", "held-out accuracy", "final loss", "why"])]
    return "\n\n".join(parts)
