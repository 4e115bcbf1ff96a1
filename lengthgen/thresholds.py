"""Every claim's rule, in one place: the thresholds and choices each experiment's checks apply.

Each carries the reason for its value and its effect size in words (how much better than chance, or
than an untrained head, a model must be to pass it), and says whether an untrained or broken model
would pass it (then the check is paired with a baseline, or is a sanity check). Most were fixed before
the runs they judge, from the claim's wording in SCIENCE.md; ``lengthgen/rule_history.py`` records
when each was fixed and what had been seen by then. Keeping them in one file makes any change to a rule
a visible change to this file (``git log lengthgen/thresholds.py``), which RESULTS.md can point to.
This module imports nothing, so figures and reports read the rules without loading a model.
"""

# --- generalization: RoPE extrapolates, learned absolute does not -------------------------------
# "Near-perfect" accuracy in the training range: wrong on at most 1 sequence in 100, asked of the mean
# over seeds at every in-range length. The bar every other rule builds on: a head below it has not
# learned the rule, so what it does past the range says nothing about extrapolation. An untrained head
# (at chance, 1/V = 0.0625 at V = 16) misses it by 0.93, a head that fits one training length but not
# another (the learned table's failure at init std 0.02) by 0.1 or more.
NEAR_PERFECT = 0.99
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

# --- mechanics: the learned head pins to a position inside the training range -------------------
# "Pins to a position" means most sequences attend there, so the modal argmax position must hold
# a majority of the sequences; and "inside the training range" means most of the attention mass
# stays on the training positions, although at length 1024 they are 32 of 1024 keys (3%).
# Effect sizes: at n = 1024 a head spreading its attention evenly (as an untrained one nearly does) puts
# its argmax on any one position for about 1 sequence in 1024 and 32/1024 = 3% of its mass in range, so
# it fails both by an order of magnitude; a head that pins passes with most of its sequences and mass.
# Measured (after the committed run, no number changed): the default heads at their seeded init (10 seeds,
# K = 1..3) fail every pinning check, modal fraction at most 0.013 and mass in range 0.031; the mechanics
# section measures the same heads at init in every run and each check's rule states how they fare.
MIN_MODAL_FRACTION = 0.5
MIN_MASS_IN_RANGE = 0.5

# --- shift: RoPE logits depend on the relative offset alone --------------------------------------
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

# --- prop1: graceful decay follows the attention-dilution law -------------------------------------
# The claim's predictor (a choice, not a threshold) is the mean-field form SCIENCE.md names, which fit within
# ~0.07 in the feasibility run; the MAE bars of 0.1 leave room for seed-to-seed spread. Effect size: an MAE of
# 0.1 is 10 points of accuracy (or of target attention) per (seed, length); a head at chance passes it, hence
# the baseline gain below.
PROP1_CLAIM_PREDICTOR = "mean_field"
MAX_ATTENTION_MAE = 0.1
MAX_ACCURACY_MAE = 0.1
# An MAE bar alone is passed by a head that learned nothing: the sweep's rope heads at their seeded init
# (3 seeds, K=1,2) have mean_field MAEs of 0.0001 (attention) and 0.013 (accuracy) past the range, as
# predicted and measured values both sit at chance. So each MAE check is paired with a baseline: past the
# range the predictor's MAE must also be at least 0.05 below the better of two trivial predictors'
# (``chance``: attention 1/n, accuracy 1/V; ``no_decay``: the head's value at its longest in-range length,
# held), i.e. it gets right at least 5 points of attention weight or accuracy (5 sequences in 100) that
# the better trivial guess misses; half the MAE bar, so a predictor within the bar cannot pass by the
# baselines being almost as good. A head at init cannot pass: it is at chance, so the chance baseline is
# within ~0.01 of it. (Trained default heads, feasibility: gains of 0.13-0.33 on accuracy, 0.39-0.44 on
# attention.) The same pairing holds for the cures' MAE checks and the multiseed headline of prop1's MAE.
MIN_MAE_GAIN_OVER_TRIVIAL = 0.05
# Issue 18's question, fixed before the full run: is rope's accuracy past the range set by dilution (the
# target keeps the highest logit, but shares the softmax), as the paper says, or by ranking errors (a key of
# another token outranks the target)? Both are predicted from the parameters alone: ``mean_field`` is the
# dilution law (no ranking), ``ranking`` the chance that no key outranks the target (no dilution);
# lengthgen/dilution.py. The check, oriented as the paper's account so that its failure counts against the
# law in the verdict: per offset, mean_field's accuracy MAE past the range minus ranking's is below 0, i.e.
# the dilution law predicts the measured accuracy better than the ranking account does. It compares two
# accounts on the same heads and lengths, so any margin would be arbitrary: the effect size is the sign (the
# better account by any amount), and the prose reports both MAEs. Feasibility (9 default heads, 3 seeds x
# K = 1, 2, 3, on which the ranking predictor's form was chosen, so not a test): ranking 0.013, 0.029, 0.025
# against mean_field 0.107, 0.048, 0.044 per offset.
MAX_CLAIM_MINUS_RANKING_MAE = 0.0

# --- frequency: the learned rule is a low-rank carrier aligned with K ------------------------------
# Feasibility: top-4 share 0.91-0.99, alignment 0.91-0.99; 0.8 leaves room for seed-to-seed spread below both.
# "Low-rank": 4 blocks of 32 (an eighth of them) hold at least four fifths of the energy, 6.4 times the 4/32
# an even spread gives them. An untrained head comes close: the same heads at init hold 0.36-0.76 (600 default
# heads, 200 seeds x K = 1..3, measured after the committed run), transformer heads up to 0.85; so the share is
# paired with its margin over the same heads untrained (MIN_SHARE_MARGIN_OVER_UNTRAINED, below), here and in
# the multiseed headlines.
MIN_TOP4_SHARE = 0.8
# "Aligned with K": the energy-weighted cos(K theta + phi) of those blocks at least 0.8, i.e. their peaks sit
# within arccos 0.8 = 37 degrees of phase of offset K (a tenth of a period); a block of random phase gives 0 on
# average. Per head an untrained one passes now and then (1.7% of the 600 heads at init above, at most 0.93),
# so the check asks it of every seed: all 10 untrained heads of an offset pass it with probability about
# 0.017^10, 2e-18, and every trained one must.
MIN_TOP4_ALIGNMENT = 0.8
# The share alone does not show learned structure: the same heads at their seeded init already hold
# 0.46-0.75 of their energy in their top 4 of 32 blocks (10 seeds), and default transformer heads at init
# (16 blocks; all 4 heads of 10 seeds) a median of 0.69 and up to 0.85, 10% of them >= 0.8. So the share
# must also be learned: the lowest trained share over the seeds minus the highest share of the same heads
# at init (same seeds, and in the transformer the same layer and head) must exceed this margin, i.e.
# every trained head is more concentrated than every untrained one. Were the trained and untrained value
# of each seed exchangeable (training leaves the share's distribution as it was), that happens by chance
# with probability at most 2^-n over n seeds (1/8 at 3, 1/1024 at 10): the effect size is the ordering,
# so the margin is 0. The alignment keeps its absolute bar, asked of every seed: no untrained head of these
# sets of 10 seeds reached it (at most 0.76 single heads, 0.77 transformer heads); of 600 single heads at
# init, 1.7% do (MIN_TOP4_ALIGNMENT).
MIN_SHARE_MARGIN_OVER_UNTRAINED = 0.0

# --- linear: without normalization, training selects a min-norm interpolant that does not extrapolate ----
# Arm 1 (the min-norm control, a sanity check) fits its range: mean in-range accuracy at least 0.9, right on 9
# answers in 10, 14 times chance at V = 16; an untrained control (w = 0: every key weighs 0) is at chance and
# misses it by 0.84. Its closed form interpolates the training offsets exactly, so anything short of it is a
# bug of the training loop; 0.9 rather than NEAR_PERFECT leaves room for SGD stopped at a finite step.
MIN_IN_RANGE_ACCURACY = 0.9
# Arm 2, the claim's test, must fit its range as the softmax heads do before its extrapolation is judged:
# accuracy >= 0.99 at every in-range evaluation length of every (offset, seed), the worst run not the mean.
# At the model's base (1e4) the head missed it by far (held-out mean 0.85 at K=2, worst length 0.57-0.65),
# and a head below it errs on 1 in 100 in-range queries or more: enough that "fails past the range" could
# be "never learned the rule". At its own base (0.05) every default head measured meets it (worst 0.999).
LINEAR_HEAD_FIT_ACCURACY = 0.99
# "Does not extrapolate": arm 2's mean accuracy at 4x the longest training length is at most 4x chance (0.25
# at V = 16), i.e. wrong on at least 3 answers in 4. 4x is where generalization and the variants judge
# extrapolation (three quarters of the keys at unseen offsets), so one length answers all three; 4x chance
# sits below generalization's "well above chance" (5x), so no head both extrapolates by that rule and fails
# to by this one. A broken or untrained head (at chance) passes it, which is why it is judged only on a head
# that fits every in-range length (LINEAR_HEAD_FIT_ACCURACY), beside the kernel checks below, and why its
# multiseed headline is paired with that fit in every run.
EXTRAPOLATION_FACTOR = 4
CHANCE_MULTIPLE = 4
# Arm 1's min-norm interpolant is well-posed when its rotary basis over the training offsets has a
# condition number of at most 100: the pseudo-inverse then needs no cut-off (its smallest singular
# value is >= 1e-2 of the largest, 14 orders above float64 rounding), and gradient descent contracts
# the slowest direction at least 1e-4 times as fast as the fastest, so a few thousand steps reach it.
# (Any base >= 1 gives 1e15 or more over 32 offsets.)
MAX_CONDITION_NUMBER = 100.0
# "Training selects the min-norm interpolant": over every evaluated offset (the training offsets and
# past them up to the longest length, where two interpolants differ) the trained kernel has cosine
# >= 0.999 with the closed form (an angle of 2.6 degrees) and no value off by more than 1% of the target's
# weight. That is far above float64 rounding and above what a converged run leaves; a run stopped early,
# or another interpolant (the closed form plus any vector the training offsets do not see), misses it, and
# an untrained control (w = 0) has no direction at all.
MIN_CONVERGENCE_COSINE = 0.999
MAX_KERNEL_ERROR = 0.01
# "Does not decay": the mean |weight| per distractor key in the last octave [n/2, n) at the longest
# length keeps at least half of its value at the first length >= 2L (default: 1024 vs 64), so the
# total distractor mass grows at least as n^0.75 over that range. A kernel decaying as delta^-1/2
# keeps about 1/4, as 1/delta about 1/16; a normalized head whose distractors fill its denominator
# keeps about 2L/n = 1/16.
MIN_FAR_WEIGHT_RATIO = 0.5
# Arm 2 (the factorized linear-attention head) against the min-norm kernel, both divided by their value
# at delta = K: the relative L2 error |trained - min-norm| / |min-norm| over every evaluated offset is at
# most sqrt(2 (1 - 0.9)) = 0.447, what a cosine of 0.9 (this rule's threshold before the kernels shared
# one normalization) means for two kernels of equal norm; unlike a cosine it also fails a kernel of the
# right sign but the wrong size. Taken at the most favourable of these relative singular-value cut-offs
# (with none, the pseudo-inverse of a basis with condition number ~1e17 is rounding noise): decades from
# 1e-1, where only well-resolved directions survive (11 of 32 in the default basis: d=64, base 1e4), to
# 1e-8, a decade below float32's resolution (1.2e-7): a head computing in float32 cannot set directions
# weaker than that. Effect size: 0.447 is the relative error of two kernels of equal norm 26 degrees apart;
# an unrelated kernel over the ~1000 evaluated offsets (an untrained head's) is near 90 degrees away, a
# relative error of about 1.4, so the bar tells "the min-norm kernel, up to what Adam and cross-entropy
# leave" from any other. Looser than arm 1's 0.999 cosine because arm 2 is trained by Adam on cross-entropy,
# which need not reach the min-norm point exactly.
MIN_COSINE = 0.9
MAX_RELATIVE_KERNEL_ERROR = (2 * (1 - MIN_COSINE)) ** 0.5
LINEAR_CUTOFFS = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)

# --- cures: sharpening the softmax should undo dilution, and cannot undo pinning --------------------
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
# (PROP1_CLAIM_PREDICTOR, MAX_ATTENTION_MAE, MAX_ACCURACY_MAE), with the kernel scaled as each cure
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
CURES_CLAIM_PREDICTOR = PROP1_CLAIM_PREDICTOR
# Added after the full run (which measured the hard-attention ceiling at +0.041 of the lost accuracy,
# the cures at +0.037 and +0.035, and CURES_CLAIM_PREDICTOR predicting -0.08), beside the check above,
# which stays as it was: "the law predicts what a sharpening cure does" holds when the claim predictor's
# predicted recovery (from its own cured and uncured predictions) lies within half the hard-attention
# ceiling of the measured one. The ceiling is what any logit scaling wins back in the limit of a large
# scale, so it sets the scale of the question: within half of it, the prediction places a cure in the
# right half of what sharpening can do at all; a prediction of "nothing" (0) passes only for a cure that
# wins back less than half the ceiling, and one of the wrong sign fails whenever the cure wins back more
# than half of it. A ceiling <= 0 (nothing to win back) leaves no tolerance.
MAX_RECOVERY_ERROR_OF_CEILING = 0.5

# --- errors: is a wrong answer past the range a dilution error or a ranking error? ---------------
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

# --- rope_bases: does the account predict the rope-base variants' order? --------------------------
# Two encodings are "apart" past the range when their mean accuracies over seeds and lengths past the
# range differ by at least 0.02: 5 seeds' means at these lengths move by about 0.01 between seed draws
# (rope's past-range mean over 5 seeds against 10 in the committed run), so a gap of twice that is an
# order the seeds agree on, and one below it decides nothing. A predictor holds when it orders every
# pair that is apart as measured (share 1): with three bases a single inverted pair is a wrong account
# of what the base does to the kernel. Fixed before any run of it; the variants' accuracies of the
# three bases had been seen in earlier full runs (their order, not any prediction of it).
ORDER_MIN_ACCURACY_GAP = 0.02

# --- transformer: the phenomenon, the equivariance and the carrier transfer -----------------------
# The phenomenon and the equivariance are judged by the single head's rules above (NEAR_PERFECT,
# ABOVE_CHANCE_FACTOR, CHANCE_TOLERANCE; ROPE_MAX_CHANGE, ABSOLUTE_MIN_CHANGE on output logits),
# so "transfers" means "passes the same bar". The carrier by the frequency rules (MIN_TOP4_SHARE,
# MIN_TOP4_ALIGNMENT, MIN_SHARE_MARGIN_OVER_UNTRAINED), applied to the retrieval head's blocks, its
# baseline the same (layer, head) at the model's seeded init.
# A head "retrieves" when its mean attention weight at offset K is at least one half: the target
# then holds most of its attention, more than all other keys together, so it alone can carry the
# answer; below that, no single head does the retrieval and the work is split.
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
# The retrieval head's content-averaged kernel predicts a step at the first unseen offset where it
# comes back to within STEP_KERNEL_MARGIN x its in-range lead (s(K) minus the median of s over the
# other in-range offsets) of s(K). 0: an average distractor at that offset ties the target, the
# plainest reading of "a far offset overtakes it"; any positive margin would be fit to a run.
STEP_KERNEL_MARGIN = 0.0
# The prediction holds when, in every rope run with a step past the range, the predicted and the found
# position differ by at most this factor (either way): 1.5 tells offset 560 from its neighbours in
# the kernel's near-returns (about 100, 360, 560, 920-1000), which are further apart than that;
# a run with a step and no predicted one counts as a miss.
STEP_PREDICTION_FACTOR = 1.5

# --- variants: every encoding on the same data, classified by what happens past the range --------
# Each (encoding, offset) gets one class from its mean accuracy over seeds, decided in this order:
# - "fails in range": lowest mean accuracy at an in-range length below VARIANT_FIT_ACCURACY. What
#   happens past the range tells about extrapolation only for a head that learned the task; 0.9 is
#   the linear control's bar for fitting the range: right on nine answers in ten, 14 times chance at V = 16.
#   A class is a statement about an encoding, so the bar is lower than the Training table's per-model fit
#   (0.99): an encoding that learns the rule imperfectly is still classified past the range, while one that
#   cannot learn it (the impossibilities below: at most 0.36 in the committed run) and an untrained head (at
#   chance) fail it by half the scale or more.
# - "extrapolates": mean accuracy at VARIANT_LENGTH_FACTOR x train_length_max >= EXTRAPOLATES_ACCURACY
#   (issue 7's "extrapolates (>= 0.9 at 4x)": the in-range bar, kept where 3/4 of the keys are new: right on
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
# The account's predictions: per (encoding, offset) the class it predicts, a function of the registry's
# mechanism properties (lengthgen/encodings.py: offset_only, trained_past_range, monotone_in_offset,
# random_positions; and whether it has a position term at all, read from the hooks its class defines,
# lengthgen/encoding_catalog.py) and of K alone, never of a measurement (lengthgen/variant_predictions.py,
# ``predicted_class``). The first rule that applies decides. Rules 1-3 are impossibilities, so their checks
# are sanity (``impossibility``); rule 1 at K = 1 and rule 3 were made impossibilities after the committed run.
# 1. no position term (NoPE), any K: "fails in range". Every key's logit is a function of its token and the
#    query's, so the keys are exchangeable: the answer is a function of the bag of tokens, where the target
#    is any key with equal chance. The best such head is right as often as the commonest token's share of the
#    keys (on average 0.27 of 7 keys and 0.15 of 31 at V = 16), far below the fit bar at every K.
# 2. position term monotone in the offset, K >= MONOTONE_FAILS_FROM_OFFSET: "fails in range". A monotone
#    term cannot favour offset K over the nearer offsets 1..K-1.
# 3. position ids drawn at random, K >= RANDOM_POSITIONS_FAIL_FROM_OFFSET: "fails in range". The id gap of
#    offset K is a sum of K random spacings, spread as widely as it is large, and overlaps the gaps of
#    K - 1 and K + 1; a logit that sees ids, not ranks, picks the K-th nearest key in no fixed way.
# 4. monotone in the offset or random ids, K = 1: no prediction. A steep enough slope favours the nearest keys
#    at every length, a flat one (ALiBi's single-head 2^-8) cannot select even K = 1: the slope decides. The
#    nearest key also has the smallest random id gap, so a logit falling with the gap can select it.
# 5. offset only, every parameter trained: "extrapolates or decays gracefully". A non-monotone offset term
#    can peak at K, so the head fits the range; the logit of every key is the one fit in range at every
#    length, so only the number of keys changes: dilution, never a collapse to chance.
# 6. not offset only, some parameter untrained past the range: "collapses to chance". The
#    paper's account of learned absolute positions: past the range the logit is made of values training
#    never constrained, so the rule fit in range does not carry over.
# 7. any other: no prediction (offset only with untrained parameters, such as T5's far buckets: the
#    target's logit is kept, the distractors' drawn from the init; absolute, every parameter trained,
#    such as sinusoidal: fixed features extended past the range in a way no property states).
# A prediction "matches" when the measured class is one it allows; each (encoding, offset) with a
# prediction of rules 5 or 6 is one evidence check. The Training table calls a model's failure to fit its
# range expected only where these rules predict "fails in range".
# Not thresholds on data: K = 1 is the nearest key, the one offset a monotone term or the smallest id gap can
# single out, so both impossibilities start at K = 2.
MONOTONE_FAILS_FROM_OFFSET = 2
RANDOM_POSITIONS_FAIL_FROM_OFFSET = 2

# --- spread and replication: a finding, or one setting's outcome? ---------------------------------
# Each check's statistic is recomputed on seed resamples (lengthgen/bootstrap.py); its spread is the
# central 95% of the resampled values: the conventional two-sided 5% level, the level of DECIDED_FRACTION and
# of every Student-t interval in the sections, so a spread and an interval shown side by side mean the same.
# It decides no check: it shows how far other seeds of the same task could move a statistic.
SPREAD_INTERVAL = 0.95
# A check's outcome is decided when it is the same in at least 95% of the seed resamples; otherwise it
# is open: other seeds of the same task turn it in more than 1 resample in 20 (the two-sided 5% level),
# so the outcome says nothing either way.
DECIDED_FRACTION = 0.95

# --- replication (lengthgen/replication.py): does a verdict hold beyond the setting it was found in? ---
# A claim is general when it holds wherever it is tested, so the verdict asks for every run: one run that
# does not reproduce the outcome makes its replication hold in part, none makes it not hold. Checks, not verdicts,
# are compared, so a verdict that stays "holds in part" because other checks now fail does not count as replicated.
REPLICATION_RULE = (
    "a check replicates in a confirmation run when it has the exploratory outcome (holds or does not hold) at every offset "
    "both runs measure it at, and, at an offset only the confirmation run has, the outcome the exploratory run had "
    "at all of its offsets (no prediction where it held in part); a claim replicates in a run when every check "
    "compared there replicates; over the confirmation runs that compare it, a claim's (or a check's) replication "
    "*holds* when it replicates in every one, *does not hold* in none, and *holds in part* otherwise")
# Why a check did not replicate (lengthgen/replication.py, ``cause``), decided from numbers that can point
# either way: in each run, on how many of its seeds the check, computed on that seed alone, fails (k of n,
# lengthgen/bootstrap.py; summed over the offsets compared), whether the seed bootstrap decides its outcome
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
