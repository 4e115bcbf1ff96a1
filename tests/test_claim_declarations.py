"""The claims as data (lengthgen/experiments/claims.py) and their judgment in each condition
(lengthgen/studies/judgments/judge.py)."""

from pathlib import Path

import pandas as pd
import pytest

from lengthgen.checks.judgment import HOLDS, UNTESTABLE
from lengthgen.experiments.catalog import CATALOG
from lengthgen.experiments.claims import CLAIMS, CLAIMS_BY_NAME, unknown_statistics
from lengthgen.studies.confirmation.runs import StudyRun
from lengthgen.studies.judgments.judge import Condition, claim_judgments, conditions_of, judge_claim

LIBRARY = Path(__file__).resolve().parents[1] / "lengthgen"


def test_every_statistic_a_claim_names_is_a_headline_an_experiment_exports():
    assert unknown_statistics() == []
    assert unknown_statistics(headlines={}) != []  # the check can fail


def test_each_claim_is_told_by_an_experiment_of_the_catalog_and_has_a_rule():
    experiments = {experiment.name for experiment in CATALOG}
    for claim in CLAIMS:
        assert claim.page in experiments, claim.name
        assert claim.rule.comparison in (">=", "<=", ">"), claim.name


def test_the_softmax_control_claims_the_lead_its_statistic_measures_and_no_failure_of_the_linear_head():
    """Its statistic is the matched softmax head's accuracy at 4x minus the linear head's: its words say that lead,
    and presuppose nothing of the linear head's own extrapolation, which the linear control judges apart."""
    paper = CLAIMS_BY_NAME["softmax control"].paper
    assert "extrapolates further than the linear head" in paper and "failure" not in paper


def test_no_claim_text_is_written_in_two_modules():
    """A claim's words live in claims.py alone: no other module links to a claim by copying its text."""
    texts = [text for claim in CLAIMS for text in (claim.says, claim.paper, claim.measured)]
    for module in LIBRARY.rglob("*.py"):
        if module.name == "claims.py" and module.parent.name == "experiments":
            continue
        source = module.read_text()
        copied = [text for text in texts if text in source]
        assert not copied, f"{module} repeats claim text: {copied}"


def by_seed(rows: dict[str, dict[int, list[float]]]) -> pd.DataFrame:
    return pd.DataFrame([{"headline": name, "offset": offset, "seed": seed, "value": value}
                         for name, offsets in rows.items() for offset, values in offsets.items()
                         for seed, value in enumerate(values)])


GAP = CLAIMS_BY_NAME["gap"]
TASK = {"vocab_size": 16, "train_length_max": 32}


def test_a_claim_is_judged_per_k_with_chance_as_its_baseline_and_its_precondition_gates_a_k():
    table = by_seed({GAP.primary: {1: [0.7, 0.8, 0.75, 0.72], 2: [0.9, 0.95, 0.92, 0.97]},
                     GAP.preconditions[0]: {1: [1.0] * 4, 2: [0.5] * 4}})
    judged = judge_claim(GAP, table, TASK)
    assert list(judged["verdict"]) == [HOLDS, UNTESTABLE]
    assert judged["baseline"].tolist() == pytest.approx([1 / 16] * 2)
    assert judged["threshold"].tolist() == pytest.approx([5 / 16] * 2)


def test_a_baseline_statistic_is_its_mean_over_seeds_at_the_same_k():
    pinning = CLAIMS_BY_NAME["pinning"]
    table = by_seed({pinning.primary: {1: [1.0, 1.0, 0.8]}, pinning.baseline.statistic: {1: [0.2, 0.1, 0.3]},
                     pinning.preconditions[0]: {1: [1.0] * 3}})
    assert judge_claim(pinning, table, TASK)["baseline"].tolist() == pytest.approx([0.2])


def test_every_condition_is_judged_with_its_own_task_and_a_claim_not_measured_is_left_out():
    table = by_seed({GAP.primary: {1: [0.2] * 4}, GAP.preconditions[0]: {1: [1.0] * 4}})
    conditions = [Condition("this run", "run", True, "", "", TASK),
                  Condition("small_vocab", "confirmation", False, "task.vocab_size: 16 -> 8", "task.vocab_size 8",
                            {"vocab_size": 4, "train_length_max": 32})]
    judged = claim_judgments(conditions, [table, table])
    assert set(judged["claim"]) == {"gap"}
    # each condition's threshold from its own task: 5 x chance, chance 1 / V
    assert judged.set_index("condition")["threshold"].to_dict() == pytest.approx({"this run": 5 / 16,
                                                                                  "small_vocab": 5 / 4})
    assert not judged.set_index("condition").loc["small_vocab", "seen"]


def test_an_out_of_sample_run_that_is_no_confirmation_run_is_a_config_error():
    config = {"task": TASK, "confirmation": {"out_of_sample": ["unseen_seeds"]}}
    with pytest.raises(ValueError, match="confirmation.out_of_sample names unseen_seeds, which is not in "
                                         r"confirmation.runs \(fresh_seeds\)"):
        conditions_of(config, {"fresh_seeds": None}, {})
    assert [condition["name"] for condition in conditions_of(config, {}, {})] == ["this run"]  # no runs: nothing


def test_a_rule_s_timing_is_its_own_where_the_claim_names_it():
    """The softmax control's margin was fixed before any run of its head; the linear experiment's other rules after."""
    from lengthgen.checks.rule_history import BEFORE, RuleChange, rule_timing
    history = (RuleChange("linear: CHANCE_MULTIPLE", "a1", "the run", ("linear",), False),
               RuleChange("linear: MIN_SOFTMAX_ADVANTAGE", "b2", "none of its head's", ("linear",), True))
    assert rule_timing("linear", history) != BEFORE
    assert rule_timing("linear", history, rule="MIN_SOFTMAX_ADVANTAGE") == BEFORE
    assert CLAIMS_BY_NAME["softmax control"].threshold_name == "MIN_SOFTMAX_ADVANTAGE"


@pytest.mark.parametrize("blind, timing", [
    ((True, True), "set before the data"), ((False, True), "set after the data"),
    ((True, None, False), "set before, revised after the data"),
    ((None, False), "set at a time not recorded, revised after the data"),
    ((True, None), "timing not recorded"), ((), "timing not recorded")])
def test_a_change_after_the_data_decides_a_rule_s_timing_whatever_the_record_does_not_say(blind, timing):
    """A rule revised after the data judges no run blind, though its first fixing went unrecorded: only where no
    change is known to be after the data does an unrecorded one leave the timing unknown."""
    from lengthgen.checks.rule_history import RuleChange, rule_timing
    history = tuple(RuleChange("transformer: A_RULE", f"c{index}", "", ("transformer",), value)
                    for index, value in enumerate(blind))
    assert rule_timing("transformer", history) == timing


def test_every_condition_of_a_run_carries_its_kind_whether_seen_what_it_changes_and_its_task():
    config = {"task": TASK, "confirmation": {"out_of_sample": ["unseen_seeds"]}}

    def run(note, changed, vocab):
        return StudyRun("", {}, {"confirmation": {"note": note}, "task": {**TASK, "vocab_size": vocab}}, changed)
    confirmation = {"fresh_seeds": run("", {"seed": (0, 5), "seeds": (3, 4)}, 16),
                    "unseen_seeds": run("seeds never looked at", {"seed": (0, 9)}, 8)}
    robustness = {"d_model_32": StudyRun("", {}, {"task": TASK}, {"model.d_model": (64, 32), "model.n_heads": (4, 2)})}
    conditions = conditions_of(config, confirmation, robustness)
    assert [(c["name"], c["kind"], c["seen"], c["changes"], c["settings"], c["task"]["vocab_size"])
            for c in conditions] == [
        ("this run", "run", True, "", "", 16),
        ("fresh_seeds", "confirmation", True, "seed: 0 -> 5; seeds: 3 -> 4", "seed 5 and seeds 4", 16),
        ("unseen_seeds", "confirmation", False, "seeds never looked at", "seed 9", 8),
        ("d_model_32", "robustness", True, "model.d_model: 64 -> 32; model.n_heads: 4 -> 2",
         "model.d_model 32 and model.n_heads 2", 16)]
    assert all(set(c["task"]) == {"vocab_size", "train_length_max"} for c in conditions)
    with pytest.raises(ValueError, match=r"names a, b, which are not in confirmation.runs \(fresh_seeds, small\)"):
        conditions_of({"task": TASK, "confirmation": {"out_of_sample": ["b", "a"]}},
                      {"fresh_seeds": None, "small": None}, {})


def test_secondary_statistics_give_every_other_statistic_a_claim_reads_its_mean_and_interval_per_k():
    from lengthgen.studies.judgments.judge import secondary_statistics
    name = sorted(set(GAP.statistics()) - {claim.primary for claim in CLAIMS})[0]
    table = by_seed({name: {2: [0.4, 0.8], 1: [0.1, 0.3]}, GAP.primary: {1: [0.9, 0.9]}})
    rows = secondary_statistics([Condition("this run", "run", True, "", "", TASK)], [table])
    assert list(rows.columns) == ["statistic", "condition", "offset", "n_seeds", "mean", "ci_low", "ci_high"]
    assert rows[["statistic", "condition", "offset", "n_seeds"]].values.tolist() == [
        [name, "this run", 1, 2], [name, "this run", 2, 2]]
    assert rows["mean"].tolist() == pytest.approx([0.2, 0.6])
    nothing = secondary_statistics([Condition("this run", "run", True, "", "", TASK)], [by_seed({GAP.primary: {1: [0.9]}})])
    assert nothing.empty and list(nothing.columns) == list(rows.columns)
    assert rows["ci_low"].tolist() == pytest.approx([0.1, 0.4]) and rows["ci_high"].tolist() == pytest.approx([0.3, 0.8])


def test_a_fixed_baseline_is_its_value_and_a_baseline_statistic_missing_at_a_k_is_nan():
    softmax = CLAIMS_BY_NAME["softmax control"]
    fits = {precondition: {1: [1.0] * 3} for precondition in softmax.preconditions}
    judged = judge_claim(softmax, by_seed({softmax.primary: {1: [0.3, 0.4, 0.5]}, **fits}), TASK)
    assert judged["baseline"].tolist() == [softmax.baseline.value]
    pinning = CLAIMS_BY_NAME["pinning"]
    table = by_seed({pinning.primary: {1: [1.0] * 3, 2: [1.0] * 3}, pinning.baseline.statistic: {1: [0.2] * 3},
                     pinning.preconditions[0]: {1: [1.0] * 3, 2: [1.0] * 3}})
    baseline = judge_claim(pinning, table, TASK)["baseline"]
    assert baseline.iloc[0] == pytest.approx(0.2) and pd.isna(baseline.iloc[1])


def test_the_judgments_table_carries_each_claim_s_comparison_and_each_condition_s_kind_in_one_index():
    table = by_seed({GAP.primary: {1: [0.2] * 4, 2: [0.2] * 4}, GAP.preconditions[0]: {1: [1.0] * 4, 2: [1.0] * 4}})
    conditions = [Condition("this run", "run", True, "", "", TASK),
                  Condition("d_model_32", "robustness", True, "model.d_model: 64 -> 32", "model.d_model 32", TASK)]
    judged = claim_judgments(conditions, [table, table])
    assert judged.index.tolist() == [0, 1, 2, 3]
    assert judged["kind"].tolist() == ["run", "run", "robustness", "robustness"]
    assert judged["changes"].tolist() == ["", "", "model.d_model: 64 -> 32", "model.d_model: 64 -> 32"]
    unseen = claim_judgments([conditions[0]._replace(seen=False)], [table])
    assert unseen["seen"].tolist() == [False, False] and judged["seen"].tolist() == [True] * 4
    assert set(judged["comparison"]) == {GAP.rule.comparison}
