"""The variants experiment's rules: the thresholds and choices its checks apply to its claim (every encoding on the
same data, classified by what happens past the range).

How every thresholds file is written, the rules several experiments share, and when each rule was fixed: the
docstring of ``lengthgen/checks/shared_rules.py``.
"""

# Each (encoding, offset) gets one class from its mean accuracy over seeds, decided in this order:
# - "fails in range": lowest mean accuracy at an in-range length below VARIANT_FIT_ACCURACY. What
#   happens past the range tells about extrapolation only for a head that learned the task; 0.9 is
#   the linear control's bar for fitting the range: right on nine answers in ten, 14 times chance at V = 16.
#   A class is a statement about an encoding, so the bar is lower than the Training table's per-model fit
#   (0.99): an encoding that learns the rule imperfectly is still classified past the range, while one that
#   cannot learn it (the impossibilities below: at most 0.36 in the committed run) and an untrained head (at
#   chance) fail it by half the scale or more.
# - "extrapolates": mean accuracy at VARIANT_LENGTH_FACTOR x train_length_max >= EXTRAPOLATES_ACCURACY
#   (issue 7's "extrapolates (>= 0.9 at 4x)": the in-range bar, kept where 3/4 of the keys are new: right on
#   nine answers in ten at four times the longest training length; a head at chance misses it by 0.84).
# - "collapses to chance": mean accuracy there at most chance + CHANCE_TOLERANCE, the generalization claim's
#   "at chance" (one-sided: below chance is no better).
# - "decays gracefully": the rest. It fits the range and loses accuracy by 4x, yet stays more than
#   the chance tolerance above chance.
VARIANT_FIT_ACCURACY = 0.9
EXTRAPOLATES_ACCURACY = 0.9
# 4x: the length at which generalization (ABOVE_CHANCE_FACTOR) and linear (EXTRAPOLATION_FACTOR) judge
# extrapolation too, so every rule reads a head at one length. There three quarters of the keys sit at
# offsets never seen in training, so a head that keeps 0.9 there extrapolates, and at 128 keys a decaying
# head is still well apart from chance (rope: 0.67 to 0.94 in the committed run), so the classes separate.
VARIANT_LENGTH_FACTOR = 4
# Not a class, a caveat the section prints: a 95% interval over seeds at 4x at least half the accuracy scale
# wide (+-0.25 around the mean) reaches from the middle of "decays gracefully" (0.11 to 0.9) into one of its
# neighbours, so the seeds disagree about the class and the mean stands for none of them.
VARIANT_SPREAD_WIDTH = 0.5
# The account's predictions: per (encoding, offset) the class it predicts, a function of the registry's
# mechanism properties (lengthgen/models/encodings.py: offset_only, trained_past_range, monotone_in_offset,
# random_positions; and whether it has a position term at all, read from the hooks its class defines,
# lengthgen/models/encodings_table.py) and of K alone, never of a measurement (lengthgen/science/variant_predictions.py,
# ``predicted_class``). The first rule that applies decides. Rules 1-3 are impossibilities, so their checks
# are sanity (``impossibility``); rule 1 at K = 1 and rule 3 were made impossibilities after the committed run.
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
# A prediction "matches" when the measured class is one it allows; each (encoding, offset) with a
# prediction of rules 5 or 6 is one evidence check. The Training table calls a model's failure to fit its
# range expected only where these rules predict "fails in range".
# Not thresholds on data: K = 1 is the nearest key, the one offset a monotone term or the smallest id gap can
# single out, so both impossibilities start at K = 2.
MONOTONE_FAILS_FROM_OFFSET = 2
RANDOM_POSITIONS_FAIL_FROM_OFFSET = 2
