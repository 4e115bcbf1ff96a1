"""The shift experiment's rules: the thresholds and choices its checks apply to its claim (rope logits depend on the
relative offset alone).

How every thresholds file is written, the rules several experiments share, and when each rule was fixed: the
docstring of ``lengthgen/checks/shared_rules.py``.
"""

# rope: "float64 change ~1e-10 or less". Angles up to 1e5 rad carry float64 rounding of
# about 1e5 * 2^-53 ~ 1e-11 rad, times logits of order 10: ~1e-10. A bound one order of
# magnitude above that, 1e-9, is what "~1e-10" allows, and is still 8 orders of magnitude
# below the absolute encodings' threshold.
ROPE_MAX_CHANGE = 1e-9
# learned, sinusoidal: "change by O(1) or more". 0.1 is the bottom of order one (a
# change of 0.1 in a logit moves its softmax weight by about 10%), 8 orders of magnitude above rope's
# rounding bound; asked of the largest change over the defined shifts, in float64 so rounding cannot be
# the cause. It is asked of trained heads. An absolute head at its seeded init moves by the scale of its
# init (sinusoidal: 1.70 in the committed run), not by anything learned, so there the check is sanity and asks only a change
# above ROPE_MAX_CHANGE (above rounding: only a bug keeps an absolute encoding's logits from moving).
ABSOLUTE_MIN_CHANGE = 0.1
# Not a threshold: the precision of the claim's measurement. In float64 rope's logits move by rounding alone
# up to 1.4e-10 (committed run), below ROPE_MAX_CHANGE; in float32 by up to 5e-5, above it, so a float32
# measurement could not tell the relative encoding's identity from a bug.
SHIFT_CLAIM_DTYPE = "float64"
# The encodings the shift claims compare: rope (relative) against the absolute ones. Those the sweep
# does not train are measured at their seeded initialization (shift.pe_at_init follows from this).
SHIFT_ABSOLUTE_ENCODINGS = ("learned", "sinusoidal")
SHIFT_ENCODINGS = ("rope", *SHIFT_ABSOLUTE_ENCODINGS)
