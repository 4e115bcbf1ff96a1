"""The rope_bases experiment's rules: the thresholds and choices its checks apply to its claim (does the account
predict the rope-base variants' order?).

How every thresholds file is written, the rules several experiments share, and when each rule was fixed: the
docstring of ``lengthgen/checks/shared_rules.py``.
"""

# Two encodings are "apart" past the range when their mean accuracies over seeds and lengths past the
# range differ by at least 0.02: 5 seeds' means at these lengths move by about 0.01 between seed draws
# (rope's past-range mean over 5 seeds against 10 in the committed run), so a gap of twice that is an
# order the seeds agree on, and one below it decides nothing. A predictor holds when it orders every
# pair that is apart as measured (share 1): with three bases a single inverted pair is a wrong account
# of what the base does to the kernel. Fixed before any run of it; the variants' accuracies of the
# three bases had been seen in earlier full runs (their order, not any prediction of it).
ORDER_MIN_ACCURACY_GAP = 0.02
