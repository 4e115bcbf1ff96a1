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
#   ("extrapolates (>= 0.9 at 4x)": the in-range bar, kept where 3/4 of the keys are new: right on
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
# The account's predictions, and the two offsets its impossibilities start at, are the shared science's:
# lengthgen/science/variant_predictions.py.
