"""The variants experiment's rules: the thresholds and choices its checks apply to its claim (every encoding on the
same data, classified by what happens past the range).

How every thresholds file is written, the rules several experiments share, and when each rule was fixed: the
docstring of ``lengthgen/checks/shared_rules.py``.
"""

# Each (encoding, offset) gets one class from its mean accuracy over seeds, decided in this order:
# - "fails in range": most of its seeds do not fit their training range (the Training section's rule,
#   lengthgen/training/range_fit.py: held-out accuracy >= FIT_ACCURACY at every training length), or the lowest mean
#   accuracy at an in-range length is below NEAR_PERFECT (lengthgen/checks/shared_rules.py). One bar for a fitted
#   range, the one every claim and the Training table use: what happens past the range tells about extrapolation only
#   for a head that learned the task, so a cell fitting it on at most half its seeds is never classed past it. (A
#   second, lower bar of 0.9 classed alibi@slope=0.5 and randomized_rope at K=1, 0 of 5 seeds fitting, past the
#   range.) An encoding that cannot learn the rule (the impossibilities: at most 0.36 in the committed run) and an
#   untrained head (at chance) fail it by more than half the scale.
# - "extrapolates": mean accuracy at VARIANT_LENGTH_FACTOR x train_length_max >= EXTRAPOLATES_ACCURACY
#   (right on nine answers in ten at four times the longest training length, where 3/4 of the keys are new; a head
#   at chance misses it by 0.84). A bar past the range, not a fit bar.
# - "collapses to chance": mean accuracy there at most chance + CHANCE_TOLERANCE, the generalization claim's
#   "at chance" (one-sided: below chance is no better).
# - "decays gracefully": the rest. It fits the range and loses accuracy by 4x, yet stays more than
#   the chance tolerance above chance.
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
# The account's predictions, and the two offsets its impossibilities start at, are the shared science's:
# lengthgen/science/variant_predictions.py.
