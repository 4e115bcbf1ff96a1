"""The account's prediction of each encoding's class in the variants experiment, from the mechanism its
registry entry declares and the offset K alone (the rules of ``lengthgen.checks.shared_rules``, variants block).

Apart from the experiment so that the Training report can tell an expected failure to fit the range (one
the account predicts) from an unexpected one without importing the experiment, which imports that report.
Plain data in, plain data out: no torch, no measurement.
"""

from lengthgen.models.encodings_table import encoding_description, has_position_term
from lengthgen.experiments.variants.thresholds import MONOTONE_FAILS_FROM_OFFSET, RANDOM_POSITIONS_FAIL_FROM_OFFSET

FAILS, EXTRAPOLATES, DECAYS, COLLAPSES = "fails in range", "extrapolates", "decays gracefully", "collapses to chance"
CLASSES = (EXTRAPOLATES, DECAYS, COLLAPSES, FAILS)
# What the account can predict, and the measured classes each prediction allows.
NO_COLLAPSE, NO_PREDICTION = f"{EXTRAPOLATES} or {DECAYS}", "no prediction"
ALLOWED_CLASSES = {NO_COLLAPSE: {EXTRAPOLATES, DECAYS}, COLLAPSES: {COLLAPSES}, FAILS: {FAILS}}


def mechanism(pe: str) -> dict:
    """What the registry states about encoding ``pe`` (``encoding_catalog.encoding_description``), and whether
    its logit has a position term at all (``encoding_catalog.has_position_term``)."""
    return {**encoding_description(pe), "position_term": has_position_term(pe)}


def predicted_class(mechanism: dict, offset: int) -> str:
    """The class the account predicts for an encoding of these mechanism properties at offset K: the
    rules of ``lengthgen.checks.shared_rules`` (variants block), in their order."""
    if impossibility(mechanism, offset):
        return FAILS
    if mechanism["monotone_in_offset"] or mechanism["random_positions"]:
        return NO_PREDICTION  # K = 1: a steep slope, or ids in rank order, can favour the nearest key
    if mechanism["offset_only"] and mechanism["trained_past_range"]:
        return NO_COLLAPSE
    if not mechanism["offset_only"] and not mechanism["trained_past_range"]:
        return COLLAPSES
    return NO_PREDICTION


def impossibility(mechanism: dict, offset: int) -> str | None:
    """What no head of this mechanism can do at offset K, where that follows from the mechanism alone (rules 1-3
    of ``lengthgen.checks.shared_rules``, variants block); None where nothing does. A head that fits its range there is a
    bug, in the encoding or in its declaration, so the prediction's check is a sanity check (this text its claim)."""
    if not mechanism["position_term"]:
        # Every key's logit is a function of its token and the query's: the keys are exchangeable, so the answer
        # is a function of the bag of tokens, and the target is any one of its keys with equal chance.
        return "no position term: cannot select any offset"
    if mechanism["monotone_in_offset"] and offset >= MONOTONE_FAILS_FROM_OFFSET:
        # It can favour nearer (or farther) keys, never offset K over both of its neighbours.
        return f"position term monotone in the offset: cannot select K >= {MONOTONE_FAILS_FROM_OFFSET}"
    if mechanism["random_positions"] and offset >= RANDOM_POSITIONS_FAIL_FROM_OFFSET:
        # The id gap of offset K is a sum of K random spacings, as wide as it is large, overlapping the gaps of
        # K - 1 and K + 1: a logit of ids picks the K-th nearest key in no fixed way (at K = 1 the nearest key
        # has the smallest gap, so a logit falling with the gap can).
        return f"position ids drawn at random: cannot select K >= {RANDOM_POSITIONS_FAIL_FROM_OFFSET}"
    return None
