"""What this reproduction finds: each abstract claim's row, from constructed claims and replication tables."""

import re

import pandas as pd
import pytest

from lengthgen.checks.check import check, with_keys
from lengthgen.report.findings import FINDINGS, MECHANISM, NO_CONFIRMATION, NOT_TESTED, Part, findings_table

CARRIER = "the learned rule is a low-rank carrier aligned with K"
DILUTION = "graceful decay follows the dilution law"


def claims_of(**experiments: list[dict]) -> pd.DataFrame:
    return pd.concat([with_keys(checks, name, name) for name, checks in experiments.items()], ignore_index=True)


def frequency(share_k1: float, share_k2: float, alignment: float = 0.95) -> list[dict]:
    return [check(CARRIER, "lowest top-4 energy share over seeds", share_k1, ">=", 0.8, offset=1),
            check(CARRIER, "lowest top-4 energy share over seeds", share_k2, ">=", 0.8, offset=2),
            check(CARRIER, "lowest energy-weighted top-4 alignment over seeds", alignment, ">=", 0.8, offset=1)]


def prop1(attention_mae: float, accuracy_mae: float) -> list[dict]:
    return [check(DILUTION, "mean_field: MAE of predicted target_attention past the training range", attention_mae,
                  "<=", 0.1, offset=1),
            check(DILUTION, "mean_field: MAE of predicted accuracy past the training range", accuracy_mae, "<=", 0.1,
                  offset=1)]


def row(table: pd.DataFrame, finding: str) -> pd.Series:
    return table.set_index("finding").loc[finding]


def test_every_claim_of_the_abstract_has_a_row_in_its_order():
    table = findings_table(claims_of(frequency=frequency(0.9, 0.95)))
    assert list(table["finding"]) == [finding.name for finding in FINDINGS]
    assert {"equivariance", "pinning", "the carrier", "the dilution law", "the dilution mechanism", "the linear control",
            "transfer to the transformer"} <= set(table["finding"])


def test_a_claim_whose_every_check_holds_is_confirmed_and_named_by_the_check_closest_to_its_threshold():
    carrier = row(findings_table(claims_of(frequency=frequency(0.9, 0.95))), "the carrier")
    assert carrier["verdict"] == "holds"
    assert carrier["tested_by"] == ["`frequency`"]
    assert "3 of 3 evidence checks hold" in carrier["sentence"]
    assert "(K=1): lowest top-4 energy share over seeds = 0.9 (rule >= 0.8)" in carrier["sentence"]  # 0.9 < 0.95
    assert "contradict" not in carrier["sentence"]
    assert "`multiseed` (frequency) (no checks in this run)" in carrier["sentence"]


def test_a_claim_no_check_of_which_holds_is_a_plain_contradiction_with_the_furthest_miss():
    carrier = row(findings_table(claims_of(frequency=frequency(0.5, 0.7, alignment=0.1))), "the carrier")
    assert carrier["verdict"] == "does not hold"
    assert carrier["sentence"].startswith("The data contradict the paper: none of the 3 evidence checks holds")
    assert "lowest energy-weighted top-4 alignment over seeds = 0.1 (rule >= 0.8)" in carrier["sentence"]


def test_a_mixed_claim_says_it_is_contradicted_in_part_by_its_failing_check():
    carrier = row(findings_table(claims_of(frequency=frequency(0.9, 0.95, alignment=0.6))), "the carrier")
    assert carrier["verdict"] == "holds in part"
    assert "contradict the paper in part: 1 of 3 evidence checks fail" in carrier["sentence"]
    assert "alignment over seeds = 0.6" in carrier["sentence"]


def test_a_claim_whose_headline_check_fails_does_not_hold_though_its_other_checks_do():
    carrier = row(findings_table(claims_of(frequency=frequency(0.6, 0.95))), "the carrier")  # the headline, K=1
    assert carrier["verdict"] == "does not hold"
    assert "contradict the paper in part: 1 of 3 evidence checks fail" in carrier["sentence"]


def test_a_sanity_check_counts_in_no_verdict_and_a_failing_one_is_called_a_bug():
    checks = [check("rope attention logits depend on relative offset alone", "max float64 change", 1.0, "<=", 1e-9,
                    offset=1, kind="sanity"),
              check("learned attention logits change under a position shift", "min change", 5.0, ">=", 0.1, offset=1)]
    equivariance = row(findings_table(claims_of(shift=checks)), "equivariance")
    assert equivariance["verdict"] == "holds"
    assert "a sanity check fails, a bug to fix before this row can be read" in equivariance["sentence"]
    assert "max float64 change = 1 (rule <= 1e-09)" in equivariance["sentence"]


def test_a_claim_none_of_whose_experiments_ran_is_not_tested_with_the_reason():
    table = findings_table(claims_of(frequency=frequency(0.9, 0.95)),
                           left_out={"linear": "the config sets no linear section"})
    linear = row(table, "the linear control")
    assert linear["verdict"] == linear["replication"] == NOT_TESTED
    assert linear["tested_by"] == []
    assert linear["sentence"] == ("Not tested under this config: `linear` (the config sets no linear section), "
                                  "`multiseed` (linear) (no checks in this run).")


ERRORS_CLAIM = "rope's wrong answers past the training range are mostly dilution errors"
RANKING_CLAIM = "dilution rather than ranking errors sets rope's accuracy past the range"


def errors_checks(dilution_share: float) -> list[dict]:
    return [check(ERRORS_CLAIM, "rope: share of wrong answers past the training range that are dilution errors",
                  dilution_share, ">=", 0.5, offset=1),
            check("rope's ranking errors past the training range come from offsets unseen in training",
                  "rope: share of ranking errors whose winning key is at an unseen offset", 0.9, ">=", 0.5, offset=1)]


def ranking_checks(*differences: float) -> list[dict]:
    """prop1's comparison of the dilution law with ranking, per offset (1, 2, ...): it holds below 0."""
    return [check(RANKING_CLAIM, "accuracy MAE past the training range, mean_field minus ranking", difference, "<",
                  0.0, offset=offset) for offset, difference in enumerate(differences, start=1)]


def test_the_dilution_law_and_its_mechanism_are_two_claims_judged_apart():
    """The law's fits are one claim (a rival account can pass them too); the direct tests of the mechanism against
    that rival, prop1's comparison with ranking and errors' split, are the other, with what their failure means."""
    headline = [check("prop1: mean-field target-attention error past the range", "fraction of runs meeting the "
                      "headline's threshold", 0.9, "==", 1.0)]
    claims = claims_of(prop1=prop1(0.04, 0.06) + ranking_checks(0.055, 0.021), errors=errors_checks(0.0475),
                       multiseed=headline)
    table = findings_table(claims)
    law, mechanism = row(table, "the dilution law"), row(table, "the dilution mechanism")
    assert law["verdict"] == "holds in part"  # its headline, prop1's accuracy MAE, holds; multiseed's does not
    assert law["tested_by"] == ["`prop1` (graceful decay follows the dilution law)", "`multiseed` (prop1)"]
    assert law["sentence"].startswith("The data contradict the paper in part: 1 of 3 evidence checks fail")
    assert mechanism["verdict"] == "does not hold"
    assert mechanism["tested_by"] == ["`prop1` (dilution rather than ranking errors)", f"`errors` ({ERRORS_CLAIM})"]
    assert mechanism["sentence"].startswith(
        "The direct tests of its mechanism contradict the paper's account: none of the 3 holds (the ranking "
        "predictor predicts rope's accuracy past the range better than the dilution law: `prop1`, accuracy MAE past "
        "the training range, mean_field minus ranking = 0.055 (K=1), 0.021 (K=2); most of rope's wrong answers past "
        "the range are ranking errors, not dilution errors: `errors`, rope: share of wrong answers past the training "
        "range that are dilution errors = 0.0475 (K=1))")


def test_the_dilution_mechanism_says_when_the_errors_experiment_did_not_run():
    without = row(findings_table(claims_of(prop1=prop1(0.04, 0.06) + ranking_checks(-0.01))), "the dilution mechanism")
    assert without["verdict"] == "holds"
    assert without["sentence"].startswith("The direct tests of its mechanism hold: 1 of 1; the closest to its "
                                          "threshold is `prop1`")
    assert f"{NOT_TESTED}: `errors` ({ERRORS_CLAIM}) (no checks in this run)" in without["sentence"]


def test_the_mechanism_clause_counts_by_the_part_not_by_the_words_of_a_statistic():
    """prop1's comparison with ranking is an MAE statistic, yet a test of the mechanism, because its part says so;
    when it holds at one offset and fails at another only the failing value is listed."""
    claims = claims_of(prop1=prop1(0.04, 0.06) + ranking_checks(-0.01, 0.03))
    assert row(findings_table(claims), "the dilution law")["sentence"].startswith("2 of 2 evidence checks hold")
    sentence = row(findings_table(claims), "the dilution mechanism")["sentence"]
    assert ("contradict the paper's account: 1 of 2 fail (the ranking predictor predicts rope's accuracy past the "
            "range better than the dilution law: `prop1`, accuracy MAE past the training range, mean_field minus "
            "ranking = 0.03 (K=2))") in sentence


def transformer_checks(drop: float, step_factor: float) -> list[dict]:
    return [check("phenomenon", "rope: lowest accuracy over seeds and every evaluation length past the range, last "
                  "window", 0.58, ">=", 0.3125, offset=2),
            check("phenomenon", "rope: largest drop over seeds of the mean accuracy from the window before a position "
                  "past the range to the window from it on", drop, "<", 0.25, offset=2),
            check("carrier", "retrieval head: lowest top-4 energy share over seeds", 0.98, ">=", 0.8, offset=2),
            check("steps", "retrieval head: largest factor between its kernel's predicted step and the found step, "
                  "over seeds with a step", step_factor, "<=", 1.5, offset=2)]


def test_the_transformer_row_counts_the_papers_findings_and_shows_the_steps_hypothesis_apart():
    transfer = row(findings_table(claims_of(transformer=transformer_checks(drop=0.4, step_factor=float("inf")))),
                   "transfer to the transformer")
    assert transfer["verdict"] == "holds in part"  # the step contradicts graceful decay; the kernel's miss counts in nothing
    assert transfer["tested_by"] == ["`transformer` (phenomenon; carrier)"]
    assert transfer["sentence"].startswith(
        "The data contradict the paper in part: 1 of 3 evidence checks fail; the furthest from its threshold is "
        "`transformer`, phenomenon (K=2): rope: largest drop over seeds")
    assert ("beyond the paper, this pipeline's own hypothesis `transformer` (steps) (in no verdict): 0 of 1 evidence "
            "checks hold; the furthest from its threshold is `transformer`, steps (K=2)") in transfer["sentence"]
    assert "`transformer` (equivariance) (no checks in this run)" in transfer["sentence"]
    graceful = row(findings_table(claims_of(transformer=transformer_checks(drop=0.1, step_factor=1.0))),
                   "transfer to the transformer")
    assert graceful["verdict"] == "holds"
    assert ("beyond the paper, this pipeline's own hypothesis `transformer` (steps) (in no verdict): 1 of 1 evidence "
            "checks hold; the closest to its threshold is `transformer`, steps (K=2): retrieval head: largest factor "
            "between its kernel's predicted step and the found step, over seeds with a step = 1 (rule <= 1.5)"
            ) in graceful["sentence"]
    no_steps = row(findings_table(claims_of(transformer=transformer_checks(0.1, 1.0)[:3])),
                   "transfer to the transformer")
    assert "steps" not in no_steps["sentence"]  # no step found: nothing to predict, no hypothesis to say


def test_an_equality_that_holds_does_not_decide_while_an_inequality_can():
    headline = [check("frequency: energy share of the top 4 rotary blocks", "fraction of runs meeting the headline's "
                      "threshold", 1.0, "==", 1.0)]
    carrier = row(findings_table(claims_of(frequency=frequency(0.9, 0.95), multiseed=headline)), "the carrier")
    assert carrier["tested_by"] == ["`frequency`", "`multiseed` (frequency)"]
    assert "4 of 4 evidence checks hold" in carrier["sentence"]
    assert "= 0.9 (rule >= 0.8)" in carrier["sentence"]


def replication_rows(claims: pd.DataFrame, run: str, replicates: list[str], causes: list[str]) -> pd.DataFrame:
    return claims.assign(run=run, replicates=replicates, cause=causes)


def test_a_claims_replication_is_over_its_own_checks_in_each_confirmation_run():
    claims = claims_of(frequency=frequency(0.9, 0.95), prop1=prop1(0.04, 0.06))  # 3 frequency checks, then 2
    table = pd.concat([
        replication_rows(claims, "exploratory", [""] * 5, [""] * 5),
        replication_rows(claims, "fresh", ["yes"] * 5, [""] * 5),
        replication_rows(claims, "small", ["no", "no", "yes", "yes", "yes"], ["rule", "rule", "", "", ""]),
    ], ignore_index=True)
    found = findings_table(claims, table)
    assert row(found, "the carrier")["replication"] == "holds in part (1 by rule)"  # one check at two offsets: one cause
    assert row(found, "the dilution law")["replication"] == "holds"
    assert row(found, "pinning")["replication"] == NOT_TESTED
    assert row(findings_table(claims), "the carrier")["replication"] == NO_CONFIRMATION


def test_a_check_no_confirmation_run_compares_leaves_its_claim_not_tested_there():
    claims = claims_of(frequency=frequency(0.9, 0.95))
    table = pd.concat([replication_rows(claims, "exploratory", [""] * 3, [""] * 3),
                       replication_rows(claims, "fresh", [""] * 3, [""] * 3)], ignore_index=True)
    assert row(findings_table(claims, table), "the carrier")["replication"] == "untestable"


def test_a_part_names_a_known_kind_and_a_test_of_a_mechanism_says_what_its_failure_means():
    with pytest.raises(ValueError, match="unknown part kind 'fit'"):
        Part("prop1", tests="fit")
    with pytest.raises(ValueError, match="says what its failure means"):
        Part("errors", "rope's wrong answers", MECHANISM)
    with pytest.raises(ValueError, match="says what its failure means"):
        Part("prop1", if_failing="a meaning without a mechanism")


# --- Mutation testing (docs/mutation.md): each row's words and numbers, worked out by hand ----------------

from lengthgen.checks.check import VERDICT_RULE  # noqa: E402
from lengthgen.report.findings import (BASELINES, CHANCE, PRECONDITION, PREDICTION, RIVAL, TESTS, Headline, deciding_check,  # noqa: E402
                                describe, evidence_clauses, findings_markdown, listed_offsets)

FIT = "both encodings fit the training range"
FAR = "rope stays well above chance at 4x the training length"
FAR_STATISTIC = "rope: mean accuracy at the longest length <= 4x the training maximum"
CHANCE_CLAIM = "learned is at chance past the training range"


def generalization(learned_fit: float = 1.0, rope_far: float = 0.9) -> list[dict]:
    """The gap's checks at K=1: its precondition (both fit the range), rope far out, learned at chance."""
    return [check(FIT, "rope: lowest mean accuracy in training range", 1.0, ">=", 0.99, offset=1),
            check(FIT, "learned: lowest mean accuracy in training range", learned_fit, ">=", 0.99, offset=1),
            check(FAR, FAR_STATISTIC, rope_far, ">=", 0.625, offset=1),
            check(CHANCE_CLAIM, "learned: largest distance from chance", 0.01, "<=", 0.05, offset=1)]


def test_a_precondition_gates_the_row_and_is_no_evidence_for_it():
    """The gap's precondition (both heads fit the range) is not counted among its evidence checks (2 of 2, not
    3 of 3 or 4 of 4); failing, it makes the row untestable and the sentence says so first, with the failing check.
    Closest to its threshold: rope far out, (0.9 - 0.625) / 0.625 = 0.44, before learned, (0.05 - 0.01) / 0.05 = 0.8."""
    far = (f"`generalization`, {FAR} (K=1): {FAR_STATISTIC} = 0.9 (rule >= 0.625)")
    holding = row(findings_table(claims_of(generalization=generalization())), "the gap")
    assert holding["verdict"] == "holds"
    assert holding["tested_by"] == ["`generalization`"]  # one part of all its checks: no claim names listed
    assert holding["sentence"] == (f"2 of 2 evidence checks hold; the closest to its threshold is {far}; "
                                   f"not tested under this config: `multiseed` (generalization) (no checks in this run).")
    failing = row(findings_table(claims_of(generalization=generalization(learned_fit=0.5))), "the gap")
    assert failing["verdict"] == "untestable"
    assert failing["sentence"] == (
        "Untestable: a precondition fails, so its evidence cannot be read (`generalization`, both encodings fit the "
        "training range (K=1): learned: lowest mean accuracy in training range = 0.5 (rule >= 0.99)); 2 of 2 evidence "
        f"checks hold; the closest to its threshold is {far}; not tested under this config: `multiseed` "
        "(generalization) (no checks in this run).")


def test_a_failing_headline_does_not_make_an_untestable_row_fail():
    """The headline (rope far out) fails, but the failing precondition gates the row: untestable, not 'does not hold'."""
    gated = row(findings_table(claims_of(generalization=generalization(learned_fit=0.5, rope_far=0.1))), "the gap")
    assert gated["verdict"] == "untestable"


def test_a_failing_headline_that_is_a_sanity_check_leaves_the_verdict_to_the_evidence():
    """Equivariance's headline is a sanity check (a theorem of the code); its failing is a bug, said apart, and the
    evidence (the learned head's logits move) still holds."""
    checks = [check("rope attention logits depend on relative offset alone",
                    "max over seeds, lengths and shifts of the float64 max abs attention logit change", 1.0, "<=", 1e-9,
                    offset=1, kind="sanity"),
              check("learned attention logits change under a position shift", "min change", 5.0, ">=", 0.1, offset=1)]
    assert row(findings_table(claims_of(shift=checks)), "equivariance")["verdict"] == "holds"
    as_evidence = [dict(checks[0], kind="evidence"), checks[1]]
    assert row(findings_table(claims_of(shift=as_evidence)), "equivariance")["verdict"] == "does not hold"


def test_a_row_with_only_sanity_checks_says_it_has_no_evidence():
    """Equivariance with its sanity check alone: no evidence, so untestable; the holding sanity check is named."""
    checks = [check("rope attention logits depend on relative offset alone", "max float64 change", 1e-12, "<=", 1e-9,
                    offset=1, kind="sanity")]
    equivariance = row(findings_table(claims_of(shift=checks)), "equivariance")
    assert equivariance["verdict"] == "untestable"
    assert equivariance["replication"] == NO_CONFIRMATION
    assert equivariance["sentence"] == (
        "No evidence check; its sanity checks (tests of the code, in no verdict) hold, the closest to its threshold "
        "being `shift`, rope attention logits depend on relative offset alone (K=1): max float64 change = 1e-12 "
        "(rule <= 1e-09); not tested under this config: `multiseed` (shift) (no checks in this run).")


def test_a_check_pooled_over_offsets_is_described_without_an_offset():
    """A multiseed headline has no offset: ``claim: statistic = value (rule ...)``, no ``(K=...)`` and no ``(all)``.
    The value is given to 3 significant digits."""
    headline = [check("frequency: energy share of the top 4 rotary blocks", "fraction of runs meeting the headline's "
                      "threshold", 0.7519, "==", 1.0, rule="== 1: each of 4 runs")]
    carrier = row(findings_table(claims_of(frequency=frequency(0.9, 0.95), multiseed=headline)), "the carrier")
    assert carrier["verdict"] == "holds in part"  # its headline (frequency at K=1) holds
    assert carrier["sentence"] == (
        "The data contradict the paper in part: 1 of 4 evidence checks fail; the furthest from its threshold is "
        "`multiseed`, frequency: energy share of the top 4 rotary blocks: fraction of runs meeting the headline's "
        "threshold = 0.752 (rule == 1: each of 4 runs).")


def test_a_value_that_is_nan_is_the_furthest_from_its_threshold():
    """A failing check without a value decides over one that misses by a measured amount."""
    carrier = row(findings_table(claims_of(frequency=frequency(0.1, float("nan")))), "the carrier")
    assert carrier["verdict"] == "does not hold"  # the headline check fails (both offsets)
    assert carrier["sentence"].startswith(
        f"The data contradict the paper in part: 2 of 3 evidence checks fail; the furthest from its threshold is "
        f"`frequency`, {CARRIER} (K=2): lowest top-4 energy share over seeds = nan (rule >= 0.8)")


def test_deciding_check_by_hand():
    """Failing: the one furthest past its threshold; all holding: the one closest to it, equalities only where
    nothing else holds. Margins relative to the threshold: 0.5 vs 0.4 misses by 0.2, 0.3 vs 0.2 (<=) by 0.5."""
    checks = pd.DataFrame([check("c", "a", 0.4, ">=", 0.5), check("c", "b", 0.3, "<=", 0.2),
                           check("c", "d", 0.9, ">=", 0.5), check("c", "e", 1.0, "==", 1.0)])
    assert deciding_check(checks)["statistic"] == "b"
    assert deciding_check(checks.iloc[[0, 2, 3]])["statistic"] == "a"
    holding = pd.DataFrame([check("c", "a", 0.9, ">=", 0.5), check("c", "b", 0.1, "<=", 0.2),
                            check("c", "e", 1.0, "==", 1.0)])
    assert deciding_check(holding)["statistic"] == "b"  # (0.2 - 0.1) / 0.2 = 0.5 < (0.9 - 0.5) / 0.5 = 0.8
    assert deciding_check(holding.iloc[[2]])["statistic"] == "e"


def test_describe_and_listed_offsets_by_hand():
    rows = with_keys([check("c", "s", 0.123456, ">=", 0.1, offset=2), check("c", "s", 12345.0, "<=", 2e4)], "e", "e")
    assert describe(rows.iloc[0]) == "`e`, c (K=2): s = 0.123 (rule >= 0.1)"
    assert describe(rows.iloc[1]) == "`e`, c: s = 1.23e+04 (rule <= 2e+04)"
    assert listed_offsets(rows) == "= 0.123 (K=2), 1.23e+04"


PREDICTS = Part("prop1", "graceful", PREDICTION)
CAUSES = Part("errors", "wrong answers", MECHANISM, "the rival explains them")


def part_rows(experiment: str, claim: str, *values: float, statistic: str = "s") -> pd.DataFrame:
    """Checks ``value >= 0.5`` at offsets 1, 2, ..."""
    return with_keys([check(claim, statistic, value, ">=", 0.5, offset=offset)
                      for offset, value in enumerate(values, start=1)], experiment, experiment)


def test_predictions_and_mechanism_are_said_apart_and_contrasted():
    """A row with both kinds of part: its predictions first; the mechanism after, with 'but' where the
    predictions are said and the mechanism contradicts the paper."""
    predictions = part_rows("prop1", "graceful", 0.9, 0.6)  # both hold; K=2 is the closer, (0.6 - 0.5) / 0.5
    mechanism_holds = part_rows("errors", "wrong answers", 0.7)
    assert evidence_clauses([(PREDICTS, predictions), (CAUSES, mechanism_holds)]) == [
        "its predictions against the measurements hold: 2 of 2 evidence checks; the closest to its threshold is "
        "`prop1`, graceful (K=2): s = 0.6 (rule >= 0.5)",
        "the direct tests of its mechanism hold: 1 of 1; the closest to its threshold is `errors`, wrong answers "
        "(K=1): s = 0.7 (rule >= 0.5)"]
    mechanism_fails = part_rows("errors", "wrong answers", 0.2, 0.3, 0.8)
    assert evidence_clauses([(PREDICTS, part_rows("prop1", "graceful", 0.9, 0.1)), (CAUSES, mechanism_fails)]) == [
        "its predictions against the measurements hold in 1 of 2 evidence checks; the furthest from its threshold is "
        "`prop1`, graceful (K=2): s = 0.1 (rule >= 0.5)",
        "but the direct tests of its mechanism contradict the paper's account: 2 of 3 fail (the rival explains "
        "them: `errors`, s = 0.2 (K=1), 0.3 (K=2))"]
    assert evidence_clauses([(CAUSES, mechanism_fails)])[0].startswith("the direct tests")  # no predictions, no 'but'


def test_a_failing_mechanism_lists_each_statistic_with_its_failing_values_in_order():
    """Per part, each failing statistic in the order of the checks, its values at their offsets."""
    rows = pd.concat([part_rows("errors", "wrong answers", 0.1, 0.9, 0.2, statistic="z share"),
                      part_rows("errors", "wrong answers", 0.3, statistic="a share")], ignore_index=True)
    rival = part_rows("prop1", "ranking", 0.4)
    ranking = Part("prop1", "ranking", MECHANISM, "ranking predicts better")
    (said,) = evidence_clauses([(CAUSES, rows), (ranking, rival)])
    assert said == ("the direct tests of its mechanism contradict the paper's account: 4 of 5 fail (the rival explains "
                    "them: `errors`, z share = 0.1 (K=1), 0.2 (K=3); `errors`, a share = 0.3 (K=1); ranking predicts "
                    "better: `prop1`, s = 0.4 (K=1))")
    (said,) = evidence_clauses([(CAUSES, rows), (ranking, part_rows("prop1", "ranking", 0.9))])  # ranking holds
    assert said == ("the direct tests of its mechanism contradict the paper's account: 3 of 5 fail (the rival explains "
                    "them: `errors`, z share = 0.1 (K=1), 0.2 (K=3); `errors`, a share = 0.3 (K=1))")


def test_a_precondition_selected_by_its_statistic_is_taken_out_of_its_claims_part():
    """The transformer's in-range fit is a precondition within its phenomenon claim, chosen by its statistic: it
    gates the row, and the phenomenon part counts the other checks only (3 of 3)."""
    unfit = check("phenomenon", "rope: lowest accuracy over seeds and in-range lengths", 0.5, ">=", 0.99, offset=2)
    transfer = row(findings_table(claims_of(transformer=transformer_checks(0.1, 1.0) + [unfit])),
                   "transfer to the transformer")
    assert transfer["verdict"] == "untestable"
    assert transfer["tested_by"] == ["`transformer` (phenomenon; carrier)"]
    assert transfer["sentence"].startswith(
        "Untestable: a precondition fails, so its evidence cannot be read (`transformer`, phenomenon (K=2): rope: "
        "lowest accuracy over seeds and in-range lengths = 0.5 (rule >= 0.99)); 3 of 3 evidence checks hold; ")
    fit = row(findings_table(claims_of(transformer=transformer_checks(0.1, 1.0) + [dict(unfit, value=1.0, holds=True)])),
              "transfer to the transformer")
    assert fit["verdict"] == "holds" and fit["sentence"].startswith("3 of 3 evidence checks hold; ")


def test_replication_per_run_with_causes_and_the_runs_where_the_row_is_untestable():
    """The gap in four confirmation runs: 'fresh' replicates; in 'small' one evidence check does not (cause:
    margin; it fails there, which is no precondition); in 'large_vocab' and 'tiny_task' the precondition fails, so those runs are left out of the verdict and
    named. A
    sanity check that does not replicate and the precondition's own rows count in nothing."""
    claims = claims_of(generalization=generalization())
    table = pd.concat([
        replication_rows(claims, "exploratory", [""] * 4, [""] * 4),
        replication_rows(claims, "fresh", ["yes"] * 4, [""] * 4),
        replication_rows(claims, "small", ["no", "no", "no", "yes"], ["rule", "rule", "margin", ""]).assign(
            holds=[True, True, False, True]),  # rope far out fails there, its preconditions hold: testable
        replication_rows(claims, "large_vocab", ["yes", "no", "no", "no"], ["", "rule", "rule", "rule"]).assign(
            holds=[True, False, True, True]),
        replication_rows(claims, "tiny_task", ["no", "yes", "yes", "yes"], ["rule", "", "", ""]).assign(
            holds=[False, True, True, True]),
    ], ignore_index=True)
    assert row(findings_table(claims, table), "the gap")["replication"] == (
        "holds in part (1 by margin, untestable in large vocab, tiny task)")
    table = table[table["run"] != "tiny_task"]
    without_small = table[table["run"] != "small"]
    assert row(findings_table(claims, without_small), "the gap")["replication"] == "holds (untestable in large vocab)"
    sanity = claims.assign(kind="sanity")
    sanity_table = pd.concat([replication_rows(claims, "fresh", ["yes"] * 4, [""] * 4),
                              replication_rows(sanity, "fresh", ["no"] * 4, ["rule"] * 4)], ignore_index=True)
    assert row(findings_table(claims, sanity_table), "the gap")["replication"] == "holds"


def test_the_markdown_section_by_hand():
    """The section: its heading, its paragraph with the verdict rule, and a table whose cells are the rows' words,
    the verdict in bold, '-' where nothing ran, and a '|' in a sentence escaped."""
    piped = [check(CARRIER, "lowest top-4 energy share over seeds", 0.9, ">=", 0.8, offset=1, rule=">= 0.8 | untrained")]
    text = findings_markdown(claims_of(frequency=piped))
    heading, paragraph, table = text.split("\n\n")
    assert heading == "## What this reproduction finds"
    assert paragraph == (
        "One row per claim of the paper's abstract. Its verdict counts the evidence checks of the experiments that "
        f"test it ({VERDICT_RULE}); its replication is over the confirmation runs (the rule of the replication "
        "section, applied to this row's checks); what decides it is the check furthest past its threshold where "
        "some fail, else the one closest to it (distances relative to the threshold). Where a row has direct tests "
        "of the mechanism it names, against a rival account, they are said apart from the checks of its "
        "predictions, which the rival can pass too; this pipeline's own hypotheses are said beside a row, in no "
        "verdict. The multiseed checks a row counts are the headlines of its experiments, in every seed at every "
        "offset.")
    lines = table.splitlines()
    assert [cell.strip() for cell in lines[0].strip("|").split("|")] == [
        "the paper claims", "tested by", "verdict", "replication", "what decides it"]
    assert len(lines) == 2 + len(FINDINGS)
    carrier = [line for line in lines if "**the carrier**" in line][0]
    cells = [cell.strip() for cell in carrier.replace("\\|", "<pipe>").strip("|").split("|")]
    assert cells == [f"**the carrier**: {FINDINGS[3].paper}", "`frequency`", "**holds**", NO_CONFIRMATION,
                     "1 of 1 evidence checks hold; the closest to its threshold is `frequency`, " + CARRIER
                     + " (K=1): lowest top-4 energy share over seeds = 0.9 (rule >= 0.8 <pipe> untrained); not tested "
                     "under this config: `multiseed` (frequency) (no checks in this run)."]
    linear = [line for line in lines if "**the linear control**" in line][0]
    assert [cell.strip() for cell in linear.strip("|").split("|")][1:4] == ["-", f"**{NOT_TESTED}**", NOT_TESTED]


def test_a_headline_names_a_known_baseline_and_only_a_rival_baseline_names_its_rival():
    with pytest.raises(ValueError, match=re.escape(
            "unknown baseline 'random'; one of chance, untrained, rival, rest, none")):
        Headline("e", "c", "s", "m", "random")
    with pytest.raises(ValueError, match=re.escape(
            "headline 'c': a rival baseline, and only one, names its rival check")):
        Headline("e", "c", "s", "m", RIVAL)
    with pytest.raises(ValueError, match=re.escape("headline 'c': a rival baseline, and only one, names its rival")):
        Headline("e", "c", "s", "m", CHANCE, rival=("c2", "s2"))
    assert Headline("e", "c", "s", "m", RIVAL, rival=("c2", "s2")).rival == ("c2", "s2")
    assert BASELINES == ("chance", "untrained", "rival", "rest", "none")


def test_a_parts_errors_name_the_kinds_and_the_part():
    assert TESTS == ("claim", "prediction", "mechanism", "beyond", "precondition")
    with pytest.raises(ValueError, match=re.escape(
            "unknown part kind 'fit'; one of claim, prediction, mechanism, beyond, precondition")):
        Part("prop1", tests="fit")
    with pytest.raises(ValueError, match=re.escape(
            "part `errors` (rope's wrong answers): a test of a mechanism, and only one, says what its failure means")):
        Part("errors", "rope's wrong answers:", MECHANISM)
    assert Part("multiseed", "generalization:").name() == "`multiseed` (generalization)"
    assert Part("prop1").name() == "`prop1`"
    assert Part("linear", "arm X:").name() == "`linear` (arm X)"  # only the closing colon goes


def test_a_part_selects_by_experiment_claim_start_and_statistic_start():
    checks = pd.concat([part_rows("transformer", "phenomenon", 0.9, statistic="rope: lowest in-range"),
                        part_rows("transformer", "phenomenon", 0.9, statistic="rope: far"),
                        part_rows("transformer", "the phenomenon", 0.9, statistic="rope: lowest in-range"),
                        part_rows("shift", "phenomenon", 0.9, statistic="rope: lowest in-range")], ignore_index=True)
    selected = Part("transformer", "phenomenon", PRECONDITION, statistic_prefix="rope: lowest").select(checks)
    assert selected.index.tolist() == [0]
    assert Part("transformer", "phenomenon").select(checks).index.tolist() == [0, 1]
    assert Part("transformer").select(checks).index.tolist() == [0, 1, 2]


def test_a_row_whose_parts_count_nothing_is_not_tested():
    """A row of only a precondition and this pipeline's own hypothesis counts no check: its verdict and replication
    are 'not tested', its counted checks an empty table with the claims' columns, and over confirmation runs it
    replicates nowhere (untestable)."""
    from lengthgen.report.findings import counted_checks, finding_row, finding_verdict, replication_of, selections

    nothing = nothing_counts()
    claims = claims_of(generalization=generalization())
    counted = counted_checks(selections(nothing, claims), claims)
    assert counted.empty and list(counted.columns) == list(claims.columns)
    assert finding_verdict(nothing, claims) == NOT_TESTED
    table = replication_rows(claims, "fresh", ["yes"] * 4, [""] * 4)
    found = finding_row(nothing, claims, table, {})
    assert (found["verdict"], found["replication"]) == (NOT_TESTED, NOT_TESTED)
    assert replication_of(nothing, claims, table) == "untestable"


def test_evidence_of_a_row_that_counts_nothing_is_empty():
    from lengthgen.report.findings import evidence_of

    assert evidence_of(nothing_counts(), claims_of(generalization=generalization())).empty


def nothing_counts():
    """A row of only a precondition and this pipeline's own hypothesis."""
    from lengthgen.report.findings import BEYOND, Finding

    return Finding("nothing counts", "a claim", (Part("generalization", FIT, PRECONDITION),
                                                 Part("generalization", FAR, BEYOND)),
                   Headline("generalization", FAR, FAR_STATISTIC, "m", CHANCE), "short", "generalization")


def test_tested_by_names_each_claim_without_its_closing_colon_only():
    from lengthgen.report.findings import tested_by

    rows = part_rows("linear", "arm X: fits", 0.9)
    assert tested_by([(Part("linear", "arm X:"), rows), (Part("linear", "arm 2"), rows)]) == ["`linear` (arm X; arm 2)"]
    assert tested_by([(Part("linear", "arm X:"), rows), (Part("linear"), rows)]) == ["`linear`"]


def test_evidence_of_a_row_is_its_counted_evidence_checks():
    """The gap's evidence: its two evidence checks, not its precondition's (taken out), nor a sanity check of the
    same experiment, nor another experiment's."""
    from lengthgen.report.findings import evidence_of

    sanity = check("rope stays finite", "rope: largest logit", 3.0, "<=", 1e6, offset=1, kind="sanity")
    claims = claims_of(generalization=generalization() + [sanity], frequency=frequency(0.9, 0.95))
    gap = [finding for finding in FINDINGS if finding.name == "the gap"][0]
    evidence = evidence_of(gap, claims)
    assert evidence["claim"].tolist() == [FAR, CHANCE_CLAIM] and evidence.index.tolist() == [2, 3]


def test_the_markdown_section_passes_on_the_replication_and_what_this_config_leaves_out():
    """With a replication table the replication column is the row's over the confirmation runs; what the config
    leaves out is said with its reason; a row tested by two experiments lists both."""
    claims = claims_of(frequency=frequency(0.9, 0.95), multiseed=[check(
        "frequency: energy share of the top 4 rotary blocks", "fraction of runs meeting the headline's threshold", 1.0,
        "==", 1.0)])
    table = pd.concat([replication_rows(claims, "exploratory", [""] * 4, [""] * 4),
                       replication_rows(claims, "fresh", ["yes"] * 4, [""] * 4)], ignore_index=True)
    text = findings_markdown(claims, table, {"linear": "the config sets no linear section"})
    lines = text.split("\n\n")[2].splitlines()
    carrier = [line for line in lines if "**the carrier**" in line][0]
    assert [cell.strip() for cell in carrier.strip("|").split("|")][1:4] == [
        "`frequency`, `multiseed` (frequency)", "**holds**", "holds"]
    linear = [line for line in lines if "**the linear control**" in line][0]
    assert "`linear` (the config sets no linear section)" in linear
