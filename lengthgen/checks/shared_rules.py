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
# which is why the section's verdict also asks both heads to fit the range (NEAR_PERFECT), and the
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

# --- replication (lengthgen/studies/confirmation/replication.py): does a verdict hold beyond the setting it was found in? ---
# A claim is general when it holds wherever it is tested, so the verdict asks for every run: one run that
# does not reproduce the outcome makes its replication hold in part, none makes it not hold. Checks, not verdicts,
# are compared, so a verdict that stays "holds in part" because other checks now fail does not count as replicated.
REPLICATION_RULE = (
    "a check replicates in a confirmation run when it has the exploratory outcome (holds or does not hold) at every offset "
    "both runs measure it at, and, at an offset only the confirmation run has, the outcome the exploratory run had "
    "at all of its offsets (no prediction where it held in part); a claim replicates in a run when every check "
    "compared there replicates; over the confirmation runs that compare it, a claim's (or a check's) replication "
    "*holds* when it replicates in every one, *does not hold* in none, and *holds in part* otherwise")
# Why a check did not replicate (lengthgen/studies/confirmation/replication.py, ``cause``), decided from numbers that can point
# either way: in each run, on how many of its seeds the check, computed on that seed alone, fails (k of n,
# lengthgen/checks/bootstrap.py; summed over the offsets compared), whether the seed bootstrap decides its outcome
# (DECIDED_FRACTION), and how far the values lie from the threshold (relative to it). In this order:
# - One seed decides nothing (no share, no spread): a run with one seed leaves the cause undecided, which is
#   *measurement*.
# - The two runs' shares of failing seeds are compared by a two-sided Fisher exact test (exact at any n, for
#   shares as small as 0 of 5). Shares that differ at the 5% level (SHARES_DIFFER_LEVEL, the level of
#   DECIDED_FRACTION) mean the setting changed how many seeds fail: not measurement. 5 against 5 seeds need
#   0 against 4 failing to differ, 10 against 10 need 0 against 5.
# - Compatible shares (one rate could give both) are *measurement* only where the seeds alone could have
#   turned the outcome: it is open in either run, or the run poses the same task with fresh seeds; and the
#   failing seeds are seen in one run only. Seeds failing the check in RECURRING_RUNS or more runs of the study
#   (at any offset) are a fixed share of seeds that every run draws from: more seeds would find more of them,
#   not fewer, so the outcome is not a matter of too few samples (a real non-pinning seed is not measurement
#   when it recurs). Two runs are the fewest in which a share can recur.
# - Otherwise the failing side's largest miss below the threshold (over the offsets compared: the worst one
#   decides) is set against the passing side's median clearance above it: a miss no larger than
#   RULE_CAUSE_MAX_MISS x that clearance means the statistic moved less than the threshold's own margin, so
#   the threshold fit one setting (*rule*); a larger miss means the effect itself is absent for those seeds
#   or in that setting (*claim*). The factor 1 is the symmetric choice: either side's distance counts the same.
#   A check that holds on its threshold (an equality, a share at its bound such as ">= 1") has margin 0, which
#   would make every miss *claim*; every such check of the study is a share at 0 or 1 whose seeds weigh the
#   same, so its clearance is one seed's share (1/n of its n seeds), the least its seeds can move it by.
# - A check not counted per seed (declared so: one seed's value set against another's, a t-interval) has no
#   shares: the bootstrap alone, *measurement* where the outcome is open in either run, the margins otherwise.
SHARES_DIFFER_LEVEL = 0.05
RECURRING_RUNS = 2
RULE_CAUSE_MAX_MISS = 1.0
CAUSE_RULE = (
    "decided per check from each run's k of n (the seeds on which the check, computed on that seed alone, fails, of "
    "those on which it has a value, summed over the offsets compared), whether the seed bootstrap decides its "
    "outcome, and the margins to the threshold (relative to it), in this order: a run with one seed decides "
    "nothing (*measurement*); where the two runs' shares of failing seeds differ (two-sided Fisher exact test, p < "
    f"{SHARES_DIFFER_LEVEL:g}) the setting changed how many seeds fail; where they are compatible with one rate, "
    "*measurement* if the outcome is open in either run (it holds in fewer than "
    f"{DECIDED_FRACTION:.0%} and more than {1 - DECIDED_FRACTION:.0%} of the seed resamples) or the run poses the "
    f"same task with fresh seeds, unless failing seeds recur in {RECURRING_RUNS} or more runs of the study (a fixed "
    "share of seeds fails, which more seeds would not remove); every other case is *rule* when the failing side's "
    "largest miss below the threshold is no more than the passing side's median clearance above it (the threshold "
    "sits between two settings' values, a threshold that fit one setting; a check that holds on its threshold, an "
    "equality or a share at its bound, clears it by one seed's share, 1/n of its n seeds) and *claim* when it misses "
    "by more (the effect itself is absent there: the phenomenon is not general); a check not counted per seed (one "
    "seed's value set against another's, a t-interval: declared with the check, the same in every run) is "
    "*measurement* where the outcome is open in either run, else rule or claim by the margins")
