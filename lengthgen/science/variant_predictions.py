"""The account's prediction of each encoding's class in the variants experiment, from the mechanism its
registry entry declares and the offset K alone (the rules below).

Apart from the experiment so that the Training report can tell an expected failure to fit the range (one
the account predicts) from an unexpected one without importing the experiment, which imports that report.
Plain data in, plain data out: no torch, no measurement.
"""

from lengthgen.models.encodings_table import encoding_description, has_position_term

# The account's predictions: per (encoding, offset) the class it predicts, a function of the registry's
# mechanism properties (the DECLARATIONS of each module of lengthgen/models/encodings/, read through
# lengthgen/models/encodings_table.py: offset_only, trained_past_range, monotone_in_offset, random_positions, and
# whether it has a position term at all) and of K alone, never of a measurement (``predicted_class``). The first
# rule that applies decides. Rules 1-3 are impossibilities, so their checks are sanity (``impossibility``); rule 1
# at K = 1 and rule 3 were made impossibilities after the committed run.
# 1. no position term (NoPE), any K: "fails in range". Every key's logit is a function of its token and the
#    query's, so the keys are exchangeable: the answer is a function of the bag of tokens, where the target
#    is any key with equal chance. The best such head is right as often as the commonest token's share of the
#    keys (on average 0.27 of 7 keys and 0.15 of 31 at V = 16), far below the fit bar at every K.
# 2. position term monotone in the offset, K >= MONOTONE_FAILS_FROM_OFFSET: "fails in range". A monotone
#    term cannot favour offset K over the nearer offsets 1..K-1.
# 3. position ids drawn at random, K >= RANDOM_POSITIONS_FAIL_FROM_OFFSET: "fails in range". The id gap of
#    offset K is a sum of K random spacings, spread as widely as it is large, and overlaps the gaps of
#    K - 1 and K + 1; a logit that sees ids, not ranks, picks the K-th nearest key in no fixed way.
# 4. monotone in the offset or random ids, K = 1: no prediction. A steep enough slope favours the nearest keys
#    at every length, a flat one (ALiBi's single-head 2^-8) cannot select even K = 1: the slope decides. The
#    nearest key also has the smallest random id gap, so a logit falling with the gap can select it.
# 5. offset only, every parameter trained: "extrapolates or decays gracefully". A non-monotone offset term
#    can peak at K, so the head fits the range; the logit of every key is the one fit in range at every
#    length, so only the number of keys changes: dilution, never a collapse to chance.
# 6. not offset only, some parameter untrained past the range: "collapses to chance". The
#    paper's account of learned absolute positions: past the range the logit is made of values training
#    never constrained, so the rule fit in range does not carry over.
# 7. any other: no prediction (offset only with untrained parameters, such as T5's far buckets: the
#    target's logit is kept, the distractors' drawn from the init; absolute, every parameter trained,
#    such as sinusoidal: fixed features extended past the range in a way no property states).
# The properties are read as they hold at the length the class is decided at (``at_length``): an encoding offset
# only up to a length (FIRE with its threshold L fixed, up to L) is offset only where every length read is below it.
# A prediction "matches" when the measured class is one it allows; each (encoding, offset) with a
# prediction of rules 5 or 6 is one evidence check. The Training table calls a model's failure to fit its
# range expected only where these rules predict "fails in range".
# Not thresholds on data: K = 1 is the nearest key, the one offset a monotone term or the smallest id gap can
# single out, so both impossibilities start at K = 2.
MONOTONE_FAILS_FROM_OFFSET = 2
RANDOM_POSITIONS_FAIL_FROM_OFFSET = 2

FAILS, EXTRAPOLATES, DECAYS, COLLAPSES = "fails in range", "extrapolates", "decays gracefully", "collapses to chance"
CLASSES = (EXTRAPOLATES, DECAYS, COLLAPSES, FAILS)
# What the account can predict, and the measured classes each prediction allows.
NO_COLLAPSE, NO_PREDICTION = f"{EXTRAPOLATES} or {DECAYS}", "no prediction"
ALLOWED_CLASSES = {NO_COLLAPSE: {EXTRAPOLATES, DECAYS}, COLLAPSES: {COLLAPSES}, FAILS: {FAILS}}


def mechanism(pe: str) -> dict:
    """What the table states about encoding ``pe`` (``encodings_table.encoding_description``), and whether
    its logit has a position term at all (``encodings_table.has_position_term``)."""
    return {**encoding_description(pe), "position_term": has_position_term(pe)}


def at_length(mechanism: dict, length: int) -> dict:
    """The mechanism as it holds on sequences of at most ``length`` tokens: offset only there where it is at every
    length, or up to a length (``offset_only_up_to``) at least ``length``."""
    bound = mechanism["offset_only_up_to"]
    return {**mechanism, "offset_only": mechanism["offset_only"] or (bound is not None and length <= bound)}


def prediction(mechanism: dict, offset: int) -> tuple[str, str]:
    """(class, why): the class the account predicts for an encoding of these mechanism properties at offset K, and
    the rule above that decides it (the first that applies), in words a page can quote."""
    impossible = impossibility(mechanism, offset)
    if impossible:
        return FAILS, impossible
    if mechanism["monotone_in_offset"] or mechanism["random_positions"]:
        return NO_PREDICTION, "K = 1: a steep slope, or ids in rank order, can favour the nearest key"
    if mechanism["offset_only"] and mechanism["trained_past_range"]:
        return NO_COLLAPSE, "offset only, every parameter trained: past the range only the number of keys changes"
    if not mechanism["offset_only"] and not mechanism["trained_past_range"]:
        return COLLAPSES, ("not offset only, parameters untrained past the range: past it the logit is made of "
                           "values training never constrained")
    return NO_PREDICTION, "no rule applies to this mix of properties"


def predicted_class(mechanism: dict, offset: int) -> str:
    """The class the account predicts for an encoding of these mechanism properties at offset K (``prediction``)."""
    return prediction(mechanism, offset)[0]


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
