"""The cures experiment's rules: the thresholds and choices its checks apply to its claim (sharpening the softmax
should undo dilution, and cannot undo pinning).

How every thresholds file is written, the rules several experiments share, and when each rule was fixed: the
docstring of ``lengthgen/checks/shared_rules.py``.
"""

from lengthgen.science.prediction_errors import DILUTION_LAW_PREDICTOR

# Fixed before the full run; a feasibility check on 6 default-size rope heads (2 seeds x 3 offsets)
# had been run when they were written (see the cures section for what it measures).
# "Undo much of it": a sharpening cure (log_length, yarn) must win back at least half of the
# accuracy rope loses past the training range, pooled over offsets, seeds and lengths:
# mean(cured - uncured) / mean(1 - uncured) >= 0.5. Half, because "much" of a loss is at least as much as
# is left: below half the cure leaves more of the decay than it undoes. Effect size: a rope head at 0.67
# past the range (K = 1 at 4x in the committed variants run) would have to reach 0.84. A cure that does nothing scores 0 and fails by 0.5;
# no untrained head enters (the cures act on the trained rope heads).
MIN_RECOVERED_FRACTION = 0.5
# The cured heads are predicted by the same law as prop1: its claim predictor and its MAE limits
# (DILUTION_LAW_PREDICTOR, MAX_ATTENTION_MAE, MAX_ACCURACY_MAE), with the kernel scaled as each cure
# scales the head. "Does nothing for the learned head": at no length past the range and no offset
# does a cure raise its mean accuracy over seeds by more than CHANCE_TOLERANCE, generalization's tolerance for
# "at chance" (asked as a gain, so it holds or fails whatever the uncured head does). Position interpolation
# "hurts a fixed-offset rule": rope's mean accuracy past the range is lower with it than without.
# The head trained with log-length scaling "extrapolates further than rope" when its mean accuracy
# past the range exceeds rope's in paired runs (same seed and offset) by a mean whose 95% Student-t
# interval lies above 0, so that seed-to-seed spread alone cannot pass the check; it must first fit
# the training range (NEAR_PERFECT), or the comparison means nothing. Each MAE check on the cured heads is
# paired with MIN_MAE_GAIN_OVER_TRIVIAL, as prop1's are (added after the committed run: rope collapses to
# chance under interpolate, where predicting chance meets the MAE bar). The claim's predictor, a choice:
CURES_CLAIM_PREDICTOR = DILUTION_LAW_PREDICTOR
# Added after the full run (which measured the hard-attention limit at +0.041 of the lost accuracy,
# the cures at +0.037 and +0.035, and CURES_CLAIM_PREDICTOR predicting -0.08), beside the check above,
# which stays as it was: "the law predicts what a sharpening cure does" holds when the claim predictor's
# predicted recovery (from its own cured and uncured predictions) lies within half the hard-attention
# limit of the measured one. The limit is what any logit scaling wins back as its scale grows without
# bound, so it sets the scale of the question: within half of it, the prediction places a cure in the
# right half of what unbounded sharpening does; a prediction of "nothing" (0) passes only for a cure that
# wins back less than half the limit, and one of the wrong sign fails whenever the cure wins back more
# than half of it. A limit <= 0 (nothing to win back) leaves no tolerance. It is the limit of one cure, logit
# scaling as its scale grows, not a ceiling on sharpening: a finite scale can win back more (in the committed run
# the cured accuracy past the range exceeded a head's own hard-attention accuracy on 11 of 30 rope heads under
# log_length, 9 under yarn; in the small-vocabulary confirmation run log_length won back 229% of the pooled limit).
MAX_RECOVERY_ERROR_OF_LIMIT = 0.5
