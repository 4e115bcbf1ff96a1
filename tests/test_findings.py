"""What this reproduction finds: each abstract claim's row, from constructed claims and replication tables."""

import pandas as pd
import pytest

from lengthgen.claims import check, with_keys
from lengthgen.findings import FINDINGS, MECHANISM, NO_CONFIRMATION, NOT_TESTED, Part, findings_table

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
    assert linear["sentence"] == (f"Not tested under this config: `linear` (the config sets no linear section), "
                                  f"`multiseed` (linear) (no checks in this run).")


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
    assert "`transformer` (steps) (in no verdict): 1 of 1 evidence checks hold" in graceful["sentence"]
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
