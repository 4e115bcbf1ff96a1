"""The rules several experiments share: what "fits its range", "well above chance" and "at chance" mean
(the generalization claim's rules, which every single-head and transformer claim builds on), and the rules of
the seed spread and of replication.

Each experiment's own rules are in ``lengthgen/experiments/<name>/thresholds.py``. Every thresholds file, this
one too, gives each rule the reason for its value and its effect size in words, and says whether an untrained or
broken model would pass it; it imports no torch, so figures and reports read the rules without loading a model.
When each rule was fixed, and what data had been seen by then, is in ``docs/rule_history.yaml``.
"""

from lengthgen.training.range_fit import FIT_ACCURACY

# --- generalization: RoPE extrapolates, learned absolute does not -------------------------------
# "Near-perfect" accuracy in the training range: wrong on at most 1 sequence in 100, asked of the mean
# over seeds at every in-range length. The bar every other rule builds on: a head below it has not
# learned the rule, so what it does past the range says nothing about extrapolation. An untrained head
# (at chance, 1/V = 0.0625 at V = 16) misses it by 0.93, a head that fits one training length but not
# another (the learned table's failure at init std 0.02) by 0.1 or more. It is the bar of one model's
# range fit (FIT_ACCURACY, on held-out sequences): one bar for "fits its range" everywhere, so that no
# claim calls fitted a range that the Training table calls not fitted.
NEAR_PERFECT = FIT_ACCURACY
# "Well above chance" at 4x the training length: five times chance (0.31 at V = 16), i.e. at least a
# quarter of all answers right beyond what guessing gives. Four times the mean over 1000 sequences'
# binomial sd at chance (0.008) would be 0.03 above chance: five times chance asks an order of
# magnitude more, so only a head that keeps its rule on many long sequences passes, and an untrained or
# pinned head (at chance) fails by 0.25.
ABOVE_CHANCE_FACTOR = 5.0
# "At chance": within 0.05 of 1/V, asked of the mean over seeds at every length past the range. The mean
# over 1000 sequences at chance has a binomial sd of 0.008 per seed, so 0.05 is 6 sd of one seed: no
# sampling noise fails a head at chance, while a head right on 5 more answers in 100 than guessing
# gives (0.11 at V = 16) is no longer at chance. An untrained head passes it,
# which is why the generalization checks also ask both heads to fit the range (NEAR_PERFECT), and the
# multiseed headline is paired with the learned head's fit in every run.
CHANCE_TOLERANCE = 0.05

# --- spread and replication: a finding, or one setting's outcome? ---------------------------------
# Each check's statistic is recomputed on seed resamples (lengthgen/checks/bootstrap.py); its spread is the
# central 95% of the resampled values: the conventional two-sided 5% level, the level of DECIDED_FRACTION and
# of every Student-t interval in the sections, so a spread and an interval shown side by side mean the same.
# It decides no check: it shows how far other seeds of the same task could move a statistic.
SPREAD_INTERVAL = 0.95
# A check's outcome is decided when it is the same in at least 95% of the seed resamples; otherwise it
# is open: other seeds of the same task turn it in more than 1 resample in 20 (the two-sided 5% level),
# so the outcome says nothing either way.
DECIDED_FRACTION = 0.95

