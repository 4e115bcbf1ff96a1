"""The errors experiment's rules: the thresholds and choices its checks apply to its claim (is a wrong answer past
the range a dilution error or a ranking error?).

How every thresholds file is written, the rules several experiments share, and when each rule was fixed: the
docstring of ``lengthgen/checks/shared_rules.py``.
"""

# Fixed before the full run. The paper's account of rope's decay is dilution: the target keeps the
# largest logit and more keys share the softmax. It predicts that past the training range rope's wrong
# answers are mostly dilution errors: "mostly" is a majority, at least half of them, pooled over seeds
# and lengths past the range, per offset. (The cures section's hard-attention limit, which mends nearly
# every dilution error, wins back only a few percent of the lost accuracy: this check may well fail.)
MIN_DILUTION_SHARE = 0.5
# Where a ranking error's winning key lies. A rope logit depends on the query token, the key token and
# their offset alone, and the keys at offsets 0..L-1 of a sequence longer than L (L = train_length_max)
# are distributed as those of a length-L sequence, where the head is near-perfect (NEAR_PERFECT: wrong
# on at most 1 sequence in 100). So a key at a seen offset wins a ranking error (outranks the target with
# another token and turns the answer) in about 1 sequence in 100 or fewer at any length (fewer still as
# the winner: a key at an unseen offset may outrank both).
# 0.9 leaves seen offsets a tenth of the ranking errors: where rope outranks its target in 1 sequence
# in 10 or more past the range (it loses more than that there: generalization, cures), that is the whole in-range
# allowance; a lower share means seen-offset keys outrank the target past the range more often than
# in range, which a logit that is a function of the offset alone cannot do. So, wherever rope's ranking errors
# past the range are 1 in 10 answers or more (the rule text states the rate), the share follows from the
# relative-offset identity and the in-range fit: a sanity check (made one after the committed run, whose
# values were 0.99995, 1 and 1), which only a bug in the winning offset or the seen/unseen boundary fails.
MIN_UNSEEN_WINNER_SHARE = 0.9
