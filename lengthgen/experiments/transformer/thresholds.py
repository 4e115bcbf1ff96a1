"""The transformer experiment's rules: the thresholds and choices its checks apply to its claim (the phenomenon, the
equivariance and the carrier transfer).

How every thresholds file is written, the rules several experiments share, and when each rule was fixed: the
docstring of ``lengthgen/checks/shared_rules.py``.
"""

# The phenomenon and the equivariance are judged by the single head's rules above (NEAR_PERFECT,
# ABOVE_CHANCE_FACTOR, CHANCE_TOLERANCE; ROPE_MAX_CHANGE, ABSOLUTE_MIN_CHANGE on output logits),
# so "transfers" means "passes the same bar". The carrier by the frequency rules (MIN_TOP_SHARE,
# MIN_TOP_ALIGNMENT, MIN_SHARE_MARGIN_OVER_UNTRAINED), applied to the top 4 blocks of every retrieving head (a
# fixed count, the frequency experiment's rule before it judged the top D/16), each one's baseline the same
# (layer, head) at the model's seeded init.
# A head "retrieves" when its mean attention weight at offset K is at least one half: the target
# then holds most of its attention, more than all other keys together, so it alone can carry the
# answer; below that, no single head does the retrieval and the work is split. Several heads may
# retrieve in one model: the carrier checks judge every one.
MIN_RETRIEVAL_ATTENTION = 0.5
# A step in the transformer's accuracy by position: at position p, the mean accuracy over the
# train_length_max positions before p minus that over the train_length_max from p on is at least
# STEP_MIN_DROP. 0.25: a quarter of the queries lost within one window. A decay from 1 to chance
# spread evenly over the 32x range loses about 0.94 / 31 = 0.03 per window, and a window's mean over
# 200 sequences x 32 positions has a binomial sd below 0.01, so only a fall concentrated at one
# offset passes; a fall to chance passes by far. (Fixed after seeing the stored run's largest drops,
# 0.04 to 0.84 over rope seeds, all at position 560-561. The next runs draw the same seeds and so
# recompute those drops: no run has tested it blind.)
STEP_MIN_DROP = 0.25
# The content-averaged kernel of the strongest head (the most attention at K) predicts a step at
# the first unseen offset where it comes back to within STEP_KERNEL_MARGIN x its in-range lead (s(K) minus the median of s over the
# other in-range offsets) of s(K). 0: an average distractor at that offset ties the target, the
# plainest reading of "a far offset overtakes it"; any positive margin would be fit to a run.
STEP_KERNEL_MARGIN = 0.0
# The prediction holds when, in every rope run with a step past the range, the predicted and the found
# position differ by at most this factor (either way): 1.5 tells offset 560 from its neighbours in
# the kernel's near-returns (about 100, 360, 560, 920-1000), which are further apart than that;
# a run with a step and no predicted one counts as a miss.
STEP_PREDICTION_FACTOR = 1.5
