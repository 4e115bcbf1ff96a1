"""Every claim's rule, in one place: the thresholds and choices each experiment's checks apply.

They were fixed before the runs they judge, each from the claim's wording in SCIENCE.md, and
each carries the reason for its value. Keeping them in one file makes any change to a rule a
visible change to this file (``git log lengthgen/rules.py``), which RESULTS.md can point to.
This module imports nothing, so figures and reports read the rules without loading a model.
"""

# --- base: RoPE extrapolates, learned absolute does not -----------------------------------------
# "Near-perfect" accuracy in the training range.
NEAR_PERFECT = 0.99
# "Well above chance" at 4x the training length: five times chance.
ABOVE_CHANCE_FACTOR = 5.0
# "At chance": within this absolute distance of 1/V.
CHANCE_TOLERANCE = 0.05

# --- mechanics: the learned head pins to a position inside the training range -------------------
# "Pins to a position" means most sequences attend there, so the modal argmax position must hold
# a majority of the sequences; and "inside the training range" means most of the attention mass
# stays on the training positions, although at length 1024 they are 32 of 1024 keys (3%).
MIN_MODAL_FRACTION = 0.5
MIN_MASS_IN_RANGE = 0.5

# --- shift: RoPE logits depend on the relative offset alone --------------------------------------
# rope: "float64 change ~1e-10 or less". Angles up to 1e5 rad carry float64 rounding of
# about 1e5 * 2^-53 ~ 1e-11 rad, times logits of order 10: ~1e-10. A bound one order of
# magnitude above that, 1e-9, is what "~1e-10" allows, and is still 8 orders of magnitude
# below the absolute encodings' threshold.
ROPE_MAX_CHANGE = 1e-9
# learned, sinusoidal: "change by O(1) or more". 0.1 is the bottom of order one (a
# change of 0.1 in a logit moves its softmax weight by about 10%); asked of the largest
# change over the defined shifts, in float64 so rounding cannot be the cause.
ABSOLUTE_MIN_CHANGE = 0.1
SHIFT_CLAIM_DTYPE = "float64"
# The encodings the shift claims compare: rope (relative) against the absolute ones. Those the sweep
# does not train are measured at their seeded initialization (shift.pe_at_init follows from this).
SHIFT_ABSOLUTE_ENCODINGS = ("learned", "sinusoidal")
SHIFT_ENCODINGS = ("rope", *SHIFT_ABSOLUTE_ENCODINGS)

# --- prop1: graceful decay follows the attention-dilution law -------------------------------------
# SCIENCE.md names the mean-field form, which fit within ~0.07 in the feasibility run; 0.1 leaves
# room for seed-to-seed spread.
PROP1_CLAIM_PREDICTOR = "mean_field"
MAX_ATTENTION_MAE = 0.1
MAX_ACCURACY_MAE = 0.1

# --- frequency: the learned rule is a low-rank carrier aligned with K ------------------------------
# Feasibility: top-4 share 0.91-0.99, alignment 0.91-0.99.
MIN_TOP4_SHARE = 0.8
MIN_TOP4_ALIGNMENT = 0.8

# --- linear: the linear-attention control does not extrapolate -------------------------------------
MIN_IN_RANGE_ACCURACY = 0.9  # the control must fit the training range for the comparison to mean anything
EXTRAPOLATION_FACTOR = 4  # accuracy is judged at 4x the longest training length ...
CHANCE_MULTIPLE = 4  # ... where it must be at most 4x chance (0.25 at V=16)
MIN_COSINE = 0.9  # trained vs min-norm, coefficient vectors and kernels over the training offsets

# --- training: a run that diverged fails instead of writing weights -------------------------------
# A run has diverged when a loss is NaN or infinite, or when its mean loss over one progress window
# (train.log_every steps) is above this many times ln V, the loss of a uniform guess: such a head is
# confidently wrong, not slowly learning. Measured at the default config (30 heads at lr 1e-2, 4 linear
# controls at lr 1e-3): the largest window mean was 0.92 x ln V and the largest single step 3.7 x ln V;
# tiny heads at lr 1 reach about 80 x ln V, at lr 1e12 NaN at step 2.
DIVERGED_LOSS_FACTOR = 10.0
