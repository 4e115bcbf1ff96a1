"""The one judgment of a claim (lengthgen/checks/judgment.py): the mean over seeds and its seed-bootstrap interval
per K against the threshold, combined over K, over confirmation runs and over robustness settings."""

import pandas as pd
import pytest

from lengthgen.checks.check import COMPARISONS
from lengthgen.checks.judgment import (DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, UNTESTABLE, across_offsets, gated, judge,
                                       replication, robustness)


def runs(values_by_offset: dict[int, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"offset": offset, "seed": seed, "value": value}
                         for offset, values in values_by_offset.items() for seed, value in enumerate(values)])


def test_a_mean_that_clears_its_bar_holds_though_one_seed_fails_it():
    judged = judge(runs({1: [0.9] * 9 + [0.3]}), ">=", 0.5).iloc[0]
    assert judged["verdict"] == HOLDS
    assert judged["seeds_clearing"] == 9 and judged["n_seeds"] == 10
    assert judged["mean"] == pytest.approx(0.84)
    assert judged["ci_low"] > 0.5


def test_an_interval_that_straddles_the_threshold_is_inconclusive():
    judged = judge(runs({1: [0.2, 0.9, 0.3, 0.8, 0.4, 0.7]}), ">=", 0.55).iloc[0]
    assert judged["ci_low"] < 0.55 < judged["ci_high"]
    assert judged["verdict"] == INCONCLUSIVE


def test_an_interval_wholly_on_the_wrong_side_does_not_hold_and_the_direction_counts():
    assert judge(runs({1: [0.1, 0.12, 0.11]}), ">=", 0.5)["verdict"].iloc[0] == DOES_NOT_HOLD
    assert judge(runs({1: [0.1, 0.12, 0.11]}), "<=", 0.5)["verdict"].iloc[0] == HOLDS


def test_three_seeds_give_a_wide_interval_and_the_same_values_the_same_interval():
    values = runs({1: [0.4, 0.7, 1.0]})
    first, second = judge(values, ">=", 0.5).iloc[0], judge(values, ">=", 0.5).iloc[0]
    assert (first["ci_low"], first["ci_high"]) == (second["ci_low"], second["ci_high"])
    assert first["ci_low"] < 0.5 < first["ci_high"] and first["verdict"] == INCONCLUSIVE


def test_one_seed_is_inconclusive_whatever_its_value():
    judged = judge(runs({1: [0.99], 2: [0.01]}), ">=", 0.5)
    assert list(judged["verdict"]) == [INCONCLUSIVE, INCONCLUSIVE]
    assert judged["ci_low"].tolist() == judged["ci_high"].tolist() == [0.99, 0.01]


def test_nan_values_are_left_out_and_an_unknown_comparison_is_an_error():
    judged = judge(runs({1: [0.9, float("nan"), 0.95]}), ">=", 0.5).iloc[0]
    assert judged["n_seeds"] == 2 and judged["verdict"] == HOLDS
    with pytest.raises(ValueError, match="unknown comparison '=>'"):
        judge(runs({1: [0.9]}), "=>", 0.5)


def test_across_offsets_names_the_k_where_the_claim_does_not_hold():
    judged = judge(runs({1: [0.1] * 5, 2: [0.9] * 5, 3: [0.2, 0.9, 0.3, 0.8, 0.6]}), ">=", 0.5)
    assert across_offsets(judged) == "holds in part (does not hold at K=1; inconclusive at K=3)"
    assert across_offsets(judged[judged["offset"] == 2]) == HOLDS
    assert across_offsets(judged[judged["offset"] == 1]) == DOES_NOT_HOLD
    assert across_offsets(judged[judged["offset"] != 2]) == "inconclusive (does not hold at K=1; inconclusive at K=3)"


def test_a_failing_precondition_makes_its_k_untestable():
    judged = judge(runs({1: [0.9] * 4, 2: [0.9] * 4}), ">=", 0.5)
    fits = judge(runs({1: [1.0] * 4, 2: [0.3] * 4}), ">=", 0.99)
    gated_rows = gated(judged, fits)
    assert list(gated_rows["verdict"]) == [HOLDS, UNTESTABLE]
    assert across_offsets(gated_rows) == "holds in part (untestable at K=2)"
    assert across_offsets(gated(judged, fits.assign(verdict=DOES_NOT_HOLD))).startswith(UNTESTABLE)


def test_replication_counts_holding_runs_and_says_when_a_failure_replicates():
    assert replication([HOLDS, HOLDS, "holds in part (does not hold at K=1)"]) == "holds in 2 of 3 runs"
    assert replication([DOES_NOT_HOLD] * 3) == "does not hold in 3 of 3 runs"
    assert replication([DOES_NOT_HOLD, INCONCLUSIVE]) == "holds in 0 of 2 runs"
    assert replication([HOLDS, "untestable (a precondition fails at K=1)"]) == "holds in 1 of 1 runs, untestable in 1"
    assert replication([]) == "no confirmation runs"


def test_robustness_names_each_setting_and_k_where_the_claim_does_not_hold():
    holding = judge(runs({1: [0.9] * 5, 2: [0.9] * 5}), ">=", 0.5)
    failing = judge(runs({1: [0.1] * 5, 2: [0.9] * 5}), ">=", 0.5)
    text = robustness({"default": holding, "d_model_32": failing, "lr_0_03": holding})
    assert text == "holds at 2 of 3 settings, not fully at d_model_32 (does not hold at K=1)"
    assert robustness({"default": holding, "lr_0_03": failing.assign(verdict=DOES_NOT_HOLD)}) == \
        "holds at 1 of 2 settings, not fully at lr_0_03 (does not hold)"
    assert robustness({"default": failing, "lr_0_03": failing}) == \
        "holds at none of the 2 settings (holds in part at 2)"
    # where none holds, how many settings have each other verdict
    assert robustness({"default": failing.assign(verdict=DOES_NOT_HOLD), "lr_0_03": holding.assign(
        verdict=INCONCLUSIVE), "d_model_32": failing}) == \
        "holds at none of the 3 settings (holds in part at 1; does not hold at 1; inconclusive at 1)"
    untestable = holding.assign(verdict=UNTESTABLE)
    assert robustness({"default": holding, "lr_0_03": untestable}) == "holds at 1 of 2 settings; untestable at lr_0_03"


def test_two_seeds_give_an_interval_spanning_their_two_values():
    judged = judge(runs({1: [0.4, 0.8]}), ">=", 0.5).iloc[0]
    assert (judged["ci_low"], judged["ci_high"]) == pytest.approx((0.4, 0.8))
    assert judged["mean"] == pytest.approx(0.6) and judged["verdict"] == INCONCLUSIVE


def test_across_offsets_lists_the_k_of_one_verdict_in_order_whatever_the_rows_order():
    judged = judge(runs({1: [0.9] * 4, 2: [0.1] * 4, 3: [0.1] * 4}), ">=", 0.5)
    assert across_offsets(judged.iloc[::-1]) == "holds in part (does not hold at K=2, 3)"


def test_across_offsets_without_a_holding_k_names_untestable_ones_and_says_when_nothing_was_measured():
    judged = judge(runs({1: [0.1] * 4, 2: [0.9] * 4}), ">=", 0.5)
    fits = judge(runs({1: [1.0] * 4, 2: [0.3] * 4}), ">=", 0.99)
    assert across_offsets(gated(judged, fits)) == "does not hold (does not hold at K=1; untestable at K=2)"
    everywhere = gated(judged, fits.assign(verdict=DOES_NOT_HOLD))
    assert across_offsets(everywhere) == "untestable (a precondition fails at K=1, 2)"
    assert across_offsets(judged.iloc[:0]) == "untestable (nothing measured)"


def test_replication_names_its_runs_and_says_when_every_run_is_untestable():
    assert replication([HOLDS, DOES_NOT_HOLD], runs="seen runs") == "holds in 1 of 2 seen runs"
    untestable = "untestable (a precondition fails at K=1)"
    assert replication([untestable, untestable]) == "untestable in all 2 runs"
    assert replication([DOES_NOT_HOLD, untestable]) == "does not hold in 1 of 1 runs, untestable in 1"


def test_the_interval_is_a_95_percent_one_and_the_same_values_give_it_again():
    """With many seeds the bootstrap interval of the mean is the normal one: 1.96 standard errors either side."""
    values = [index / 99 for index in range(100)]
    first, second = judge(runs({1: values}), ">=", 0.5).iloc[0], judge(runs({1: values}), ">=", 0.5).iloc[0]
    standard_error = pd.Series(values).std(ddof=0) / len(values) ** 0.5
    assert (first["ci_high"] - first["ci_low"]) / 2 == pytest.approx(1.96 * standard_error, rel=0.03)
    assert (first["ci_low"], first["ci_high"]) == (second["ci_low"], second["ci_high"])


def test_robustness_names_every_failing_and_every_untestable_setting():
    holding = judge(runs({1: [0.9] * 5}), ">=", 0.5)
    failing = judge(runs({1: [0.1] * 5}), ">=", 0.5)
    untestable = holding.assign(verdict=UNTESTABLE)
    text = robustness({"default": holding, "d_model_32": failing, "lr_0_03": failing, "a": untestable,
                       "b": untestable})
    assert text == ("holds at 1 of 5 settings, not fully at d_model_32 (does not hold), lr_0_03 (does not hold); "
                    "untestable at a, b")


def test_judge_gives_its_rows_in_k_order_and_its_columns_even_when_nothing_was_measured():
    judged = judge(runs({3: [0.9] * 3, 1: [0.1] * 3, 2: [0.9] * 3}), ">=", 0.5)
    assert judged["offset"].tolist() == [1, 2, 3]
    nothing = judge(runs({1: [float("nan")] * 3}), ">=", 0.5)
    assert nothing.empty and across_offsets(nothing) == "untestable (nothing measured)"


def test_an_unknown_comparison_s_error_names_the_known_ones():
    with pytest.raises(ValueError) as error:
        judge(runs({1: [0.9]}), "=>", 0.5)
    assert str(error.value).endswith("one of " + ", ".join(COMPARISONS))


def test_only_a_missing_value_leaves_a_seed_out_not_a_gap_in_another_column():
    """A seed with its statistic measured counts though some other column of its row is empty."""
    by_seed = runs({1: [0.9, 0.8, 0.95]}).assign(note=[None, "rerun", None])
    judged = judge(by_seed, ">=", 0.5).iloc[0]
    assert judged["n_seeds"] == 3 and judged["mean"] == pytest.approx(0.8833333)
