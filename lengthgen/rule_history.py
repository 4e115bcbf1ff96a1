"""When each claim rule was fixed, and what data had been looked at by then (read from the git history).

A confirmation tests a rule only if the rule was fixed before its data was seen; a rule chosen or
changed after looking at a run's data may fit that run. This record, kept beside ``lengthgen/thresholds.py``
(``git log -p lengthgen/thresholds.py`` and the commit messages are its sources, the commits named), is
printed in the replication section of RESULTS.md. Add an entry whenever a rule changes, naming the data
that had been looked at.
"""

from typing import NamedTuple

import pandas as pd


class RuleChange(NamedTuple):
    rules: str  # the rules (names in lengthgen/thresholds.py) and the experiment they judge
    commit: str  # where they were fixed or changed
    data_seen: str  # the data that had been looked at when they were
    experiments: tuple[str, ...]  # the experiments whose checks these rules decide
    blind: bool | None  # fixed before any run's data they judge was seen; None where that is not recorded


RULE_HISTORY = (
    RuleChange("generalization (then named base): NEAR_PERFECT, ABOVE_CHANCE_FACTOR, CHANCE_TOLERANCE", "8f0d0a9",
               "none of this pipeline's runs: fixed from the claim's wording in SCIENCE.md",
               experiments=("generalization",), blind=True),
    RuleChange("mechanics: MIN_MODAL_FRACTION, MIN_MASS_IN_RANGE; shift: ROPE_MAX_CHANGE, ABSOLUTE_MIN_CHANGE",
               "525f81a", "none of this pipeline's runs: fixed from the claims' wording (and float64 rounding) "
               "before the first full run (6cba31c)",
               experiments=("mechanics", "shift"), blind=True),
    RuleChange("prop1: PROP1_CLAIM_PREDICTOR (mean_field), MAX_ATTENTION_MAE, MAX_ACCURACY_MAE; frequency: "
               "MIN_TOP4_SHARE, MIN_TOP4_ALIGNMENT", "525f81a",
               "the feasibility run quoted in SCIENCE.md (mean-field error about 0.07; top-4 share and alignment "
               "0.91-0.99), not this pipeline's runs; before the first full run (6cba31c)",
               experiments=("prop1", "frequency"), blind=True),
    RuleChange("linear: every rule (MIN_IN_RANGE_ACCURACY kept; MAX_CONDITION_NUMBER, MIN_CONVERGENCE_COSINE, "
               "MAX_KERNEL_ERROR, MIN_FAR_WEIGHT_RATIO, MAX_RELATIVE_KERNEL_ERROR new)", "90d601d",
               "the full default runs 6cba31c and 26b93d0, whose old linear checks were found not to test the "
               "claim; arm 2's relative kernel error replaced a cosine of 0.9 after a tiny run of the new arms",
               experiments=("linear",), blind=False),
    RuleChange("linear: LINEAR_HEAD_FIT_ACCURACY (arm 2 fits every in-range length of every run before its "
               "extrapolation checks are judged); arm 1's checks made sanity checks", "676e18b",
               "the committed run's arm-2 fit (held-out 0.77-0.98) and, before the rule, arm-2 heads trained for the "
               "purpose at bases 1e4 and 0.05 (3 and 5 seeds x K=1..3: their held-out fit, accuracy past the range "
               "and kernel distance); the extrapolation rules were kept as they were",
               experiments=("linear",), blind=False),
    RuleChange("linear: arm 1's extrapolation and far-weight checks at its configured width dropped (its outcome "
               "is set by width and base, so failing them is neither a bug nor evidence), and its multiseed headline "
               "with them", "d880ecc",
               "the tiny run, where arm 1 at d = 16 passes 4 of 6 and the report called the failures bugs; the "
               "committed run's arm 1 (0.73 at 4x); no run of the remaining rules changed",
               experiments=("linear", "multiseed"), blind=False),
    RuleChange("cures: MIN_RECOVERED_FRACTION, CURES_CLAIM_PREDICTOR and the cures checks", "f13f14c",
               "a feasibility prototype on 6 default-size rope heads (2 seeds x 3 offsets); before any "
               "default-size run of the pipeline",
               experiments=("cures",), blind=True),
    RuleChange("variants: VARIANT_FIT_ACCURACY, EXTRAPOLATES_ACCURACY, VARIANT_LENGTH_FACTOR, "
               "MONOTONE_FAILS_FROM_OFFSET", "e8b5530",
               "the feasibility notes of SCIENCE.md (ALiBi cannot select K >= 2); not recorded beyond that",
               experiments=("variants",), blind=True),
    RuleChange("variants: VARIANT_SPREAD_WIDTH (a caveat in the text; it decides no check)", "8f4a5e8",
               "the first default-size variants run",
               experiments=("variants",), blind=False),
    RuleChange("transformer: MIN_RETRIEVAL_ATTENTION (the other checks reuse the single head's rules)", "8431d83",
               "not recorded",
               experiments=("transformer",), blind=None),
    RuleChange("replication: SPREAD_INTERVAL, DECIDED_FRACTION, the replication and cause rules "
               "(lengthgen/replication.py)", "the rules commit above",
               "the exploratory RESULTS.md committed before it, and issue 9's account of a run by hand on another "
               "task; no confirmation run",
               experiments=("replication",), blind=True),
    RuleChange("frequency and transformer: MIN_SHARE_MARGIN_OVER_UNTRAINED (the top-4 share against the same "
               "heads at init)", "b93632a",
               "the committed RESULTS.md (frequency top-4 shares) and default-size transformers at init (10 seeds x 4 "
               "heads, no training); no run of the rule itself",
               experiments=("frequency", "transformer"), blind=False),
    RuleChange("prop1: MIN_MAE_GAIN_OVER_TRIVIAL, MAX_CLAIM_MINUS_RANKING_MAE and the ranking predictor's form",
               "b93632a",
               "untrained rope heads (3 seeds, K=1,2) and 9 default-size rope heads trained for the purpose (3 seeds "
               "x K=1..3), on which the ranking predictor's form was chosen (accuracy MAE 0.023 against mean_field's "
               "0.066). The commit does not name their seeds; retrained at the default config, seeds 0, 1, 2 give "
               "its ranking MAEs to the digit (0.013, 0.029, 0.025 per offset; seeds 3-5 give 0.013, 0.019, 0.022). "
               "Those are the sweep's own seeds 0-2, 9 of the 30 rope heads every default run judges, so the full "
               "runs do not test the form blind; the confirmation runs (fresh seeds, other tasks) do",
               experiments=("prop1",), blind=False),
    RuleChange("errors: MIN_DILUTION_SHARE (the paper's prediction), MIN_UNSEEN_WINNER_SHARE", "b93632a",
               "issue 18's account of seed 0's rope heads (winning keys at unseen offsets), the tiny run and 3 "
               "default-size rope heads of seed 0 trained for the purpose (dilution shares 0.035-0.28). Seed 0 is one of "
               "the sweep's seeds, so the full runs judge MIN_DILUTION_SHARE on heads whose shares were seen (it is "
               "the paper's number, not fitted to them); the confirmation runs judge it on fresh seeds and tasks",
               experiments=("errors",), blind=False),
    RuleChange("variants: the predicted class of each encoding from its declared properties, "
               "RANDOM_POSITIONS_FAIL_FROM_OFFSET", "b93632a",
               "the previous full run's variants classes (17 of 19 predictions match; FIRE's 2 do not, and the rule "
               "was kept) and a quick run of the new variants (alibi@slope, fire_fixed, 3 seeds)",
               experiments=("variants",), blind=False),
    RuleChange("cures: MAX_RECOVERY_ERROR_OF_CEILING (the dilution law predicts each sharpening cure's recovery)",
               "72b1ed0",
               "the full run committed in 61e5b5b: its cures section (recoveries +0.073 log_length and +0.070 yarn, "
               "hard-attention ceiling +0.076, mean_field's predicted recoveries -0.051 and -0.030) and its "
               "confirmation runs' (committed with it), and a tiny run. Not blind, and no run since tests it: the "
               "next full run (426117b) and its confirmation runs reuse those seeds and configs and recomputed the "
               "same recoveries to the digit; only a run on new seeds or another task can",
               experiments=("cures",), blind=False),
    RuleChange("transformer: STEP_MIN_DROP, STEP_KERNEL_MARGIN, STEP_PREDICTION_FACTOR (steps by position and the "
               "retrieval head's kernel)", "72b1ed0",
               "the committed run's and fresh_seeds' transformer_by_position tables (drops 0.04-0.84, rope steps at "
               "positions 560/561), from which STEP_MIN_DROP was set: not fixed blind",
               experiments=("transformer",), blind=False),
    RuleChange("rope_bases: ORDER_MIN_ACCURACY_GAP (each account predicts the rope-base variants' order)", "66f0e73",
               "the variants' accuracy of the three bases in earlier full runs (their order, no prediction of it) and "
               "the smoke run (1 seed, K=2); fixed before the full run that first judges it",
               experiments=("rope_bases",), blind=True),
    RuleChange("replication: the cause rule (CAUSE_RULE: per-seed failing shares, SHARES_DIFFER_LEVEL, "
               "RECURRING_RUNS; RULE_CAUSE_MAX_MISS kept)", "b93632a",
               "the full confirmation study (fresh_seeds, small_vocab, large_vocab), whose 18 non-replicating checks "
               "the old rule all classed measurement; it decides causes only, no claim's verdict",
               experiments=("replication",), blind=False),
    RuleChange("replication: the cause rule's clearance of a check that holds on its threshold (an equality, a share "
               "at its bound: one seed's share, was 0) and per-seed counts declared per check (claims.check per_seed; "
               "the share over untrained heads and cures' t-interval pooled only), was inferred from each run's "
               "outcome", "12b1ac8",
               "the committed confirmation study's replication section, audited for issue 17 (every equality miss "
               "classed claim; the cures t-interval counted in 3 runs of 4, the frequency margin in 8 of 9): fixed "
               "after reading it, and the next run draws the same seeds, so not blind; on the committed tables it "
               "moves 3 checks from claim to rule (mechanics' rope contrast in small_vocab, two multiseed "
               "headlines); it decides causes only, no claim's verdict",
               experiments=("replication",), blind=False),
    # Issue 17's fair tests, all fixed after reading the committed run at 426117b (RESULTS.md and
    # results/tables/claims.parquet): its seeds are the next run's, so none of these is blind.
    RuleChange("variants: the predicted class of an encoding with no position term (NoPE) is 'fails in range' at "
               "every K, and random position ids at K >= RANDOM_POSITIONS_FAIL_FROM_OFFSET are an impossibility: "
               "both sanity checks now, like a monotone term at K >= 2 (lengthgen/variant_predictions.py); the "
               "Training table calls a failure to fit expected only where that class is predicted for a single "
               "softmax head", "65575ef, de5afa1",
               "the committed run 426117b: NoPE's lowest in-range accuracy 0.163-0.168 (K=1 had no prediction), "
               "the randomized encodings' 0.27-0.36 at K=2,3 (evidence checks, all holding), and its Training table, "
               "which called alibi@slope=0.5 at K=1 (held-out 0.97) and the randomized encodings at K=1 expected",
               experiments=("variants",), blind=False),
    RuleChange("errors: the check on MIN_UNSEEN_WINNER_SHARE made a sanity check (its rule text states rope's "
               "ranking-error rate past the range); shift: an absolute encoding measured at its seeded init is a "
               "sanity check, asked to move by more than ROPE_MAX_CHANGE instead of ABSOLUTE_MIN_CHANGE", "df70c6a",
               "the committed run 426117b: unseen-winner shares 0.99995, 1 and 1; sinusoidal at init 1.70 at "
               "K = 1, 2 and 3 (both evidence there, all holding)",
               experiments=("errors", "shift"), blind=False),
    RuleChange("multiseed: headlines pairing prop1's MAE with MIN_MAE_GAIN_OVER_TRIVIAL, frequency's top-4 share with "
               "MIN_SHARE_MARGIN_OVER_UNTRAINED, the learned head's distance from chance with its fit (NEAR_PERFECT) "
               "and linear arm 2's accuracy at 4x with its fit (LINEAR_HEAD_FIT_ACCURACY), per run", "37b9240, 389593e",
               "the committed run 426117b's multiseed section (prop1's MAE headline met by 29 of 30 runs) and prop1's "
               "untrained MAE there (6.8e-5); the new headlines' values were not seen (their tables are not "
               "committed); the untrained frequency shares of 600 default heads at init, measured for the wording",
               experiments=("multiseed",), blind=False),
    RuleChange("cures: each MAE check of the cured rope heads paired with MIN_MAE_GAIN_OVER_TRIVIAL (prop1's "
               "gain over the better trivial baseline)", "8fc4a3b",
               "the committed run 426117b's cures section (interpolate: MAE 0.009 and 0.028 while rope lost 0.62 of "
               "its accuracy past the range); the gains themselves were not seen",
               experiments=("cures",), blind=False),
    RuleChange("mechanics: no threshold changed; each check's rule text states the same statistic on the same heads "
               "at their seeded init and whether they pass", "5259861",
               "the committed run 426117b and the default heads at init (10 seeds x K = 1..3, no training), which "
               "fail every pinning check (modal fraction <= 0.013, mass in range 0.031)",
               experiments=("mechanics",), blind=False),
    RuleChange("thresholds.py: every constant's effect size and reason in words (no number changed); confirmation: "
               "RULE_FILES extended to every file that decides a check (encodings, catalog, variant predictions, "
               "range-fit rule and filter, prediction_errors, stats)", "389593e, c70f4db",
               "the committed run 426117b (quoted where a comment cites a value)",
               experiments=(), blind=None),
    RuleChange("transformer: rope's phenomenon judged at every evaluation length past the range (the lowest "
               "over seeds of the last window, >= ABOVE_CHANCE_FACTOR x chance, beside the 4x check) and its graceful "
               "decay (the largest drop past the range under STEP_MIN_DROP, the size of a step); the kernel's step "
               "prediction moved from the carrier to a finding of its own, steps, this pipeline's hypothesis",
               "f702d16",
               "the committed runs' per-length tables and steps: rope's lowest window is under the bar in "
               "fresh_seeds (K=2, n=1024: 0.217) and small_vocab (K=1, n=192-768: 0.186-0.219), and rope steps "
               "down past the range in all four runs (largest drops 0.25 and 0.40 in the default run, 0.84, 0.80, "
               "0.38 in fresh_seeds, small_vocab, large_vocab). Fixed after those data, which the next runs on the "
               "same seeds and configs recompute: not blind, and not yet tested by any run",
               experiments=("transformer",), blind=False),
    RuleChange("findings: the transfer row counts the transformer's phenomenon, equivariance and carrier, not its "
               "steps (shown beside the row, in no verdict or replication); the dilution-law row says its "
               "predictions (prop1's MAE checks, rope_bases' order, the multiseed headline) apart from the direct "
               "tests of its mechanism (prop1's comparison with ranking, errors' split); no verdict of that row "
               "changes", "a41f554",
               "the committed RESULTS.md, whose dilution-law row named a 0.0475 dilution share as a contradiction in "
               "part while 6 of its 7 failing checks test the mechanism directly",
               experiments=(), blind=False),  # how the findings table groups checks: no rule of a check
    RuleChange("findings: the dilution account split into two claims, the law's fit to the decay (its predictions) "
               "and dilution as the decay's cause (the direct tests against ranking); a claim whose headline check "
               "is evidence and fails does not hold, however many of its other checks do (findings.finding_verdict); "
               "no threshold of a check changes", "c2a66cb",
               "the committed RESULTS.md (234e4ad) and a cold read of its new first screen, which found the "
               "dilution row holding in part on 16 of 23 checks with its mechanism at 0 of 6, and pinning, the "
               "linear control and the cures holding in part while their headline numbers failed",
               experiments=(), blind=False),  # how claims are graded from their checks: no rule of a check
)


def history_markdown(history: tuple[RuleChange, ...] = RULE_HISTORY) -> str:
    lines = ["**When each rule was fixed, and what had been looked at by then** (from `git log -p "
             "lengthgen/thresholds.py` and the commit messages; `lengthgen/rule_history.py`):", ""]
    table = pd.DataFrame([[change.rules, change.commit, change.data_seen] for change in history],
                         columns=["rules", "fixed in", "data looked at before"])
    return "\n".join(lines + [table.to_markdown(index=False, disable_numparse=True)])


# When an experiment's rules were fixed, relative to the data they judge (``rule_timing``).
BEFORE, REVISED_AFTER, AFTER, NOT_RECORDED = "set before the data", "set before, revised after the data", \
    "set after the data", "timing not recorded"


def rule_timing(experiment: str, history: tuple[RuleChange, ...] = RULE_HISTORY) -> str:
    """Whether ``experiment``'s rules were fixed before its data was seen: *before the data* where every change
    of them was blind, *after the data* where even the first was not, *set before, revised after* where a later
    change was not, *not recorded* where a change does not say (or none names the experiment)."""
    changes = [change for change in history if experiment in change.experiments]
    if not changes or any(change.blind is None for change in changes):
        return NOT_RECORDED
    if all(change.blind for change in changes):
        return BEFORE
    return AFTER if not changes[0].blind else REVISED_AFTER
