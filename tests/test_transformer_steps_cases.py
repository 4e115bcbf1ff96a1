"""Step detection and accuracy windows of the transformer experiment, pinned to values worked out by hand.

A step is a position p where the mean accuracy over the ``width`` positions before p minus that over the
``width`` from p on is at least ``STEP_MIN_DROP`` (0.25). The curves below place a fall at a known position:
of exactly 0.25, at the first and the last position whose windows fit, twice, in a shorter evaluation
length only, and nowhere. Every accuracy is a multiple of 1/4, so every window mean is exact in binary."""

import math

import numpy as np
import pandas as pd
import pytest

from lengthgen.experiments.transformer import analysis as experiment
from lengthgen.experiments.transformer import section as prose
from lengthgen.experiments.transformer import summaries
from lengthgen.experiments.transformer.summaries import prediction_factor, rope_floor_by_length
from lengthgen.experiments.transformer.thresholds import STEP_MIN_DROP
from lengthgen.checks.rule_history import RuleChange, changes_naming
from conftest import markdown_rows

WIDTH = 4


def steps_of(accuracy, first_position=0):
    return experiment.run_steps(np.arange(len(accuracy)) + first_position, np.array(accuracy, dtype=float), WIDTH)


def test_the_rule_is_a_quarter():
    assert STEP_MIN_DROP == 0.25  # the cases below are sized for it


def test_window_means_by_hand():
    index, before, after = summaries.window_means(np.array([1.0, 1.0, 0.5, 0.5, 0.0, 0.0]), 2)
    assert index.tolist() == [2, 3, 4]  # the first index with 2 values before it, the last with 2 from it on
    assert before.tolist() == [1.0, 0.75, 0.5] and after.tolist() == [0.5, 0.25, 0.0]


def test_a_fall_of_exactly_a_quarter_is_a_step():
    # at 8: before 1, after 0.75; at 7 and 9 the windows straddle the fall: 0.1875 only
    assert steps_of([1.0] * 8 + [0.75] * 8) == [(8, 1.0, 0.75)]


def test_a_fall_just_under_a_quarter_is_not_a_step():
    assert steps_of([1.0] * 8 + [0.8125] * 8) == []


def test_a_steep_stretch_is_one_step_at_its_largest_drop():
    # a fall of 0.5 at 8: drops 0.25, 0.375, 0.5, 0.375, 0.25 at 6..10, one stretch
    assert steps_of([1.0] * 8 + [0.5] * 8) == [(8, 1.0, 0.5)]


def test_two_falls_are_two_steps():
    assert steps_of([1.0] * 8 + [0.5] * 8 + [0.0] * 8) == [(8, 1.0, 0.5), (16, 0.5, 0.0)]


def test_a_rise_and_a_flat_curve_are_no_steps():
    assert steps_of([0.0] * 8 + [1.0] * 8) == [] and steps_of([0.5] * 16) == []


def test_a_fall_at_the_first_position_whose_windows_fit():
    assert steps_of([1.0] * 4 + [0.0] * 12) == [(4, 1.0, 0.0)]
    # a fall at 3 is before any window fits: found at 4, with 0.75 before it
    assert steps_of([1.0] * 3 + [0.0] * 13) == [(4, 0.75, 0.0)]


def test_a_fall_at_the_last_position_whose_windows_fit():
    # 16 values: the last window from p on starts at 12; drops 0.25, 0.5, 0.75, 1 at 9..12
    assert steps_of([1.0] * 12 + [0.0] * 4) == [(12, 1.0, 0.0)]
    # a fall at 13 leaves no full window after it: the largest drop seen is 0.75, at 12
    assert steps_of([1.0] * 13 + [0.0] * 3) == [(12, 1.0, 0.25)]


def test_too_short_for_two_windows_has_no_step():
    assert steps_of([1.0] * 4 + [0.0] * 3) == []
    assert steps_of([1.0] * 4 + [0.0] * 4) == [(4, 1.0, 0.0)]  # exactly two windows


def test_positions_are_reported_not_indices():
    # the first position with a target is K = 2: the fall at index 8 is at position 10
    assert steps_of([1.0] * 8 + [0.5] * 8, first_position=2) == [(10, 1.0, 0.5)]


def by_position(curves: dict, offset=1):
    """{(pe, seed, length): accuracy from position ``offset`` on} as a by-position table."""
    rows = [{"pe": pe, "offset": offset, "seed": seed, "length": length, "position": offset + i, "accuracy": value,
             "loss": 0.0}
            for (pe, seed, length), curve in curves.items() for i, value in enumerate(curve)]
    return pd.DataFrame(rows).sample(frac=1, random_state=0)  # the functions must sort by position themselves


def test_find_steps_reads_the_longest_length_of_each_run():
    table = by_position({
        ("rope", 0, 17): [1.0] * 8 + [0.5] * 8,  # the longest: a step at index 8, position 9
        ("rope", 0, 13): [1.0] * 4 + [0.0] * 8,  # a shorter length's step is not looked at
        ("rope", 1, 17): [1.0] * 16,
        ("learned", 0, 17): [1.0] * 4 + [0.25] * 12,
    })
    steps = experiment.find_steps(table, WIDTH)
    assert list(steps.itertuples(index=False, name=None)) == [("learned", 1, 0, 5, 1.0, 0.25),
                                                              ("rope", 1, 0, 9, 1.0, 0.5)]


def test_largest_drop_from_the_start_on():
    table = by_position({("rope", 0, 25): [1.0] * 8 + [0.5] * 8 + [0.25] * 8})  # falls at positions 9 and 17
    drop = summaries.largest_drops(table, WIDTH, start=9).iloc[0]
    assert (drop["position"], drop["accuracy_before"], drop["accuracy_after"]) == (9, 1.0, 0.5)
    later = summaries.largest_drops(table, WIDTH, start=10).iloc[0]  # 9 left out: the straddling 10 vs 17
    assert (later["position"], later["accuracy_before"], later["accuracy_after"]) == (10, 0.875, 0.5)
    assert summaries.largest_drops(table, WIDTH, start=12)["position"].tolist() == [17]
    assert summaries.largest_drops(table, WIDTH, start=21)["position"].tolist() == [21]  # the last that fits
    assert summaries.largest_drops(table, WIDTH, start=22).empty


TRAIN_MAX = 8


def test_windows_at_the_range_boundary():
    # lengths 8 (= train_length_max), 15 (the window starts at 7: across the boundary) and 16 (starts at 8)
    curve = {length: [1.0 if position < 10 else 0.0 for position in range(1, length)] for length in (8, 15, 16)}
    windows = experiment.accuracy_windows(by_position({("rope", 0, n): c for n, c in curve.items()}), TRAIN_MAX)
    rows = windows.set_index("length")
    assert rows["window_start"].tolist() == [1, 7, 8]  # max(K, n - train_length_max)
    assert rows["in_training_range"].tolist() == [True, False, False]
    assert rows["past_training_range"].tolist() == [False, False, True]
    # 8: positions 1..7, all right; 15: 7..14, three right of 8; 16: 8..15, two right
    assert rows["accuracy"].tolist() == [1.0, 3 / 8, 2 / 8]


def test_no_step_anywhere_still_gives_the_step_columns():
    """A run without a step gives no row, and the table keeps its columns: the found-step join reads them."""
    table = by_position({("rope", 0, 17): [1.0] * 16, ("learned", 0, 17): [0.25] * 16})
    steps = experiment.find_steps(table, WIDTH)
    assert steps.empty
    assert list(steps.columns) == ["pe", "offset", "seed", "position", "accuracy_before", "accuracy_after"]
    predicted = pd.DataFrame({"offset": [1], "seed": [0], "predicted_step": [12]})
    assert experiment.with_found_steps(predicted, steps, TRAIN_MAX)["found_step"].isna().all()


def test_a_step_at_the_first_position_past_the_range_is_found():
    """A window from train_length_max on is past the range: a step there is the run's found step."""
    steps = pd.DataFrame({"pe": "rope", "offset": 1, "seed": [0, 1], "position": [TRAIN_MAX - 1, TRAIN_MAX],
                          "accuracy_before": 1.0, "accuracy_after": 0.5})
    predicted = pd.DataFrame({"offset": [1, 1], "seed": [0, 1], "predicted_step": [12, 12]})
    joined = experiment.with_found_steps(predicted, steps, TRAIN_MAX)
    assert joined["found_step"].tolist() == [pd.NA, TRAIN_MAX]  # seed 0's step lies inside the range


# drift and replication match checks across runs by (claim, statistic, offset): the statistic is the text every
# earlier run has, so a reworded one reads as one check removed and another added
GRACEFUL_STATISTIC = ("rope: largest drop over seeds of the mean accuracy from the window before a position past the "
                      "range to the window from it on")


def test_graceful_decay_per_offset_and_without_a_rope_window():
    """Offset 2 has a rope step (1 to 0.5 at position 10, windows of TRAIN_MAX = 8); offset 1 has only a learned
    run: its check has no drop to judge (NaN, does not hold) and says so."""
    table = pd.concat([by_position({("learned", 0, 24): [1.0] * 23}, offset=1),
                       by_position({("rope", 3, 26): [1.0] * 8 + [0.5] * 16}, offset=2)], ignore_index=True)
    empty, stepped = experiment.claims_graceful(table, TRAIN_MAX)
    assert (empty["offset"], stepped["offset"]) == (1, 2)
    assert np.isnan(empty["value"]) and not empty["holds"]
    assert empty["rule"] == "< 0.25, a step (no rope window past the range)"
    assert stepped["value"] == 0.5 and not stepped["holds"]
    assert stepped["rule"] == "< 0.25, a step (largest: seed 3 at position 10, 1.000 to 0.500)"
    assert empty["statistic"] == stepped["statistic"] == GRACEFUL_STATISTIC


def test_step_prediction_checks_by_offset_in_order_with_their_rule():
    predictions = pd.DataFrame({"offset": [3, 3, 1], "seed": [0, 1, 0], "predicted_step": [30, None, 20],
                                "found_step": [20, 40, 10]}).astype({"predicted_step": "Int64", "found_step": "Int64"})
    rows = experiment.claims_step_prediction(predictions)
    assert [row["offset"] for row in rows] == [1, 3]  # ascending, as the section lists them
    assert rows[0]["value"] == 2.0 and rows[1]["value"] == math.inf  # 20 vs 10; seed 1 of offset 3 has none
    factor = f"<= {experiment.STEP_PREDICTION_FACTOR:g}"
    assert rows[0]["rule"] == f"{factor} (found vs predicted: seed 0: 10 vs 20)"
    assert rows[1]["rule"] == f"{factor} (found vs predicted: seed 0: 20 vs 30, seed 1: 40 vs none)"
    assert rows[0]["statistic"] == ("strongest head: largest factor between its kernel's predicted step and the found "
                                    "step, over seeds with a step")  # the key drift matches, as GRACEFUL_STATISTIC


def test_kernel_lead_is_over_the_median_of_the_other_in_range_offsets():
    """s(K) = 1.0 at K = 2, every other in-range offset 0.2: the lead is 0.8; the closest unseen offset (0.6) is
    (1.0 - 0.6) / 0.8 = 0.5 leads short of s(K), so no step is predicted; one unseen offset at 1.0 is the step."""
    kernel = np.full(20, 0.2)
    kernel[2], kernel[15] = 1.0, 0.6
    prediction = experiment.predict_step(kernel, offset=2, train_length_max=TRAIN_MAX)
    assert prediction["kernel_at_offset"] == 1.0 and prediction["kernel_lead"] == pytest.approx(0.8)
    assert prediction["closest_unseen_gap"] == pytest.approx(0.5) and prediction["predicted_step"] is None
    kernel[11] = 1.0
    assert experiment.predict_step(kernel, offset=2, train_length_max=TRAIN_MAX)["predicted_step"] == 11


def test_no_rope_window_past_the_range_fits():
    """rope's longest length 12 leaves no position p >= 8 with 8 positions before and 8 from p on: no drop, and the
    graceful check has nothing to judge (NaN) and says so."""
    table = by_position({("rope", 0, 12): [1.0] * 11, ("learned", 0, 12): [1.0] * 11})
    drops = summaries.largest_drops(table, TRAIN_MAX, TRAIN_MAX)
    assert drops.empty and list(drops.columns) == ["pe", "offset", "seed", "position", "accuracy_before",
                                                   "accuracy_after"]
    (check,) = experiment.claims_graceful(table, TRAIN_MAX)
    assert np.isnan(check["value"]) and check["rule"] == "< 0.25, a step (no rope window past the range)"


def test_largest_drops_lists_runs_in_order():
    table = by_position({("rope", 2, 17): [1.0] * 8 + [0.5] * 8, ("rope", 0, 17): [1.0] * 8 + [0.5] * 8,
                         ("learned", 1, 17): [1.0] * 16})
    drops = summaries.largest_drops(table, WIDTH, 0)
    assert list(zip(drops["pe"], drops["seed"])) == [("learned", 1), ("rope", 0), ("rope", 2)]
    # two seeds with the same largest drop: the rule names the first, seed 0
    (check,) = experiment.claims_graceful(table, TRAIN_MAX)
    assert "largest: seed 0 at position 9" in check["rule"]


def test_a_margin_widens_the_return_to_within_margin_leads_of_s_k(monkeypatch):
    """The rule for any margin m: the first unseen offset whose s is at least s(K) - m x lead. With m = 0.5 and the
    lead 0.8 of the kernel above, the bar is 0.6: offset 15 (0.6) returns, offset 10 (0.5) does not."""
    monkeypatch.setattr(experiment, "STEP_KERNEL_MARGIN", 0.5)
    kernel = np.full(20, 0.2)
    kernel[2], kernel[10], kernel[15] = 1.0, 0.5, 0.6
    assert experiment.predict_step(kernel, offset=2, train_length_max=TRAIN_MAX)["predicted_step"] == 15


def test_phenomenon_checks_come_in_ascending_offset():
    windows = pd.DataFrame({"pe": "rope", "offset": [3, 1], "seed": 0, "length": [32, 32], "window_start": 24,
                            "accuracy": [0.9, 0.8], "in_training_range": False, "past_training_range": True})
    rows = experiment.claims_phenomenon(windows, vocab_size=4, train_length_max=TRAIN_MAX)
    offsets = [row["offset"] for row in rows]
    assert offsets == sorted(offsets) and set(offsets) == {1, 3}


PHENOMENON_STATISTICS = [  # the keys drift matches across runs, as GRACEFUL_STATISTIC
    "rope: lowest accuracy over seeds and in-range windows",
    "learned: lowest accuracy over seeds and in-range windows",
    "rope: lowest accuracy over seeds, last window at 4x the training maximum",
    "rope: lowest accuracy over seeds and every evaluation length past the range, last window",
    "learned: largest distance from chance over seeds and windows past the range",
]


def test_phenomenon_checks_by_hand():
    """V = 16 (chance 1/16, the bar 5 x chance = 5/16), train_length_max 8, so 4x is n = 32. Offset 1: rope's
    in-range floor 0.2 (seed 1 at n = 8), its floors past the range 0.7 (n = 16) and 0.3 (n = 32, under the bar);
    learned 0.99 in range, 0.1 and 0.05 past it (distances 0.0375 and 0.0125 from chance). Offset 2: rope only,
    its floor 0.2 at n = 16, which no check of offset 1 may read."""
    rows = [("rope", 1, 0, 8, 1.0), ("rope", 1, 1, 8, 0.2), ("rope", 1, 0, 16, 0.9), ("rope", 1, 1, 16, 0.7),
            ("rope", 1, 0, 32, 0.3), ("rope", 1, 1, 32, 0.65), ("learned", 1, 0, 8, 0.99), ("learned", 1, 0, 16, 0.1),
            ("learned", 1, 0, 32, 0.05), ("rope", 2, 0, 8, 1.0), ("rope", 2, 0, 16, 0.2), ("rope", 2, 0, 32, 0.35)]
    windows = pd.DataFrame(rows, columns=["pe", "offset", "seed", "length", "accuracy"]).assign(
        window_start=lambda f: f["length"] - TRAIN_MAX, in_training_range=lambda f: f["length"] <= TRAIN_MAX,
        past_training_range=lambda f: f["length"] > TRAIN_MAX)
    checks = experiment.claims_phenomenon(windows, vocab_size=16, train_length_max=TRAIN_MAX)
    assert [check["statistic"] for check in checks] == PHENOMENON_STATISTICS * 2
    assert [check["offset"] for check in checks] == [1] * 5 + [2] * 5
    values = [check["value"] for check in checks]
    assert values[:5] == pytest.approx([0.2, 0.99, 0.3, 0.3, 0.0375])
    assert values[5] == 1.0 and np.isnan(values[6]) and values[7:9] == [0.35, 0.2] and np.isnan(values[9])
    bar = "5 x chance = 0.312"  # 5/16 = 0.3125 to 3 decimals
    assert checks[2]["rule"] == f">= {bar} (n=32)"
    assert checks[3]["rule"] == f">= {bar} (lowest at n=32; under it at n=32)"
    assert checks[8]["rule"] == f">= {bar} (lowest at n=16; under it at n=16)"
    assert checks[4]["rule"] == "<= 0.05 (chance = 0.0625)"
    assert [check["holds"] for check in checks[:5]] == [False, True, False, False, True]


def test_every_length_check_names_each_length_under_the_bar():
    bar = 5 / 16  # exact in binary: a floor equal to it is not under it
    floor = pd.DataFrame({"offset": 1, "length": [16, 32, 64, 128], "accuracy": [0.2, 0.1, bar, 0.5]})
    check = experiment.every_length_check(floor, bar, 1)
    assert check["value"] == 0.1 and not check["holds"]
    assert check["rule"] == ">= 5 x chance = 0.312 (lowest at n=32; under it at n=16, 32)"
    at_bar = experiment.every_length_check(floor[floor["length"] >= 64], bar, 1)
    assert at_bar["value"] == bar and at_bar["holds"] and at_bar["rule"] == ">= 5 x chance = 0.312 (lowest at n=64)"
    none = experiment.every_length_check(floor.iloc[:0], bar, 1)
    assert np.isnan(none["value"]) and not none["holds"]
    assert none["rule"] == ">= 5 x chance = 0.312 (no rope window past the range)"


# --- Mutation testing (docs/mutation.md): the summaries the checks and the section share -----------------------

def test_rope_floor_is_the_lowest_seed_per_offset_and_length_and_ignores_learned():
    """Per (offset, length), rope's lowest accuracy over seeds: seed 1 at n=32 (0.5), seed 0 at n=64 (0.25); a
    learned window lower than all of them is not rope's."""
    windows = pd.DataFrame({"pe": ["rope"] * 5 + ["learned"], "offset": [1, 1, 1, 1, 2, 1],
                            "seed": [0, 1, 0, 1, 0, 0], "length": [32, 32, 64, 64, 32, 32],
                            "accuracy": [0.75, 0.5, 0.25, 1.0, 0.125, 0.0]})
    floor = rope_floor_by_length(windows)
    assert floor.to_dict("list") == {"offset": [1, 1, 2], "length": [32, 64, 32], "accuracy": [0.5, 0.25, 0.125]}


def test_prediction_factor_is_the_larger_over_the_smaller_either_way_and_inf_without_a_prediction():
    assert prediction_factor(600, 400) == 1.5 and prediction_factor(400, 600) == 1.5
    assert prediction_factor(300, 300) == 1.0
    assert prediction_factor(None, 300) == math.inf and prediction_factor(pd.NA, 300) == math.inf


def test_every_rope_models_largest_drop_is_counted_steps_or_not():
    """Hand-made curves from position 1 at length 33 (positions 1..32), windows of 8 from position 8 on: seed 0
    falls from 1 to 0.6 at position 17 (a drop of 0.4: a step), seed 1 from 1 to 0.9 at 21 (0.1: a drop, not a
    step), seed 2 never falls (its largest drop 0, at 9, the first position with a window before it); learned is not
    counted."""
    table = by_position({("rope", 0, 33): [1.0] * 16 + [0.6] * 16, ("rope", 1, 33): [1.0] * 20 + [0.9] * 12,
                         ("rope", 2, 33): [1.0] * 32, ("learned", 0, 33): [1.0] * 7 + [0.0] * 25})
    drops = summaries.rope_drops(table, TRAIN_MAX)
    assert drops["seed"].tolist() == [0, 1, 2] and set(drops["pe"]) == {"rope"}
    assert drops["position"].tolist() == [17, 21, 9]
    assert drops["size"].tolist() == pytest.approx([0.4, 0.1, 0.0])
    assert drops["step"].tolist() == [True, False, False]
    history = [RuleChange("transformer: STEP_MIN_DROP", "abc1234", "the runs' drops", ("transformer",), False),
               RuleChange("transformer: STEP_MIN_DROP judged at every length", "def5678", "more", ("transformer",),
                          None)]
    assert prose.step_rule_timing(lambda rule, experiment: history) == (
        "was set in abc1234, after data it judges had been seen (the runs' drops); its use changed in def5678, at a "
        "time the rule history does not record")
    # the kernel's predictions counted against every drop: seed 0's 17 (its step) within 1.5 (at 20), seed 1's 21 not
    # (at 40: a false alarm, as seed 1 has no step), seed 2 without a prediction
    predicted = pd.DataFrame({"offset": 1, "seed": [0, 1, 2], "predicted_step": [20, 40, None],
                              "found_step": [17, None, None], "closest_unseen_gap": [-0.1, 0.0, 0.2]}).astype(
        {"predicted_step": "Int64", "found_step": "Int64"})
    assert prose.steps_finding(drops, predicted, lambda rule, experiment: history).startswith(
        "At K=1, 1 of 3 rope models fall in a step; the kernel predicts 1 of the 1 steps and 1 of the 3 largest drops "
        "within a factor 1.5, and a step in 1 of the 2 models without one (false alarms). The step rule (0.25) was "
        "set in abc1234, after data it judges had been seen")
    assert [row[:3] + row[4:] for row in markdown_rows(prose.steps_markdown(drops, predicted), "|K|seed|")] == [
        ["1", "0", "17", "0.400", "yes", "17", "20", "-0.100"], ["1", "1", "21", "0.100", "no", "none", "40", "0.000"],
        ["1", "2", "9", "0.000", "no", "none", "none", "0.200"]]


def test_the_step_rule_s_timing_is_read_from_the_rule_history():
    """The rule history records STEP_MIN_DROP as set after its data was seen: the page says so, and names its commit."""
    changes = changes_naming("STEP_MIN_DROP", "transformer")
    assert changes and not changes[0].blind
    text = prose.step_rule_timing()
    assert text.startswith(f"was set in {changes[0].commit}, after data it judges had been seen")
    assert prose.step_rule_timing(lambda rule, experiment: []) == "has no entry in the rule history"


def test_every_head_that_retrieves_is_named_with_its_carrier():
    """Heads at offset K = 1 with attention 0.9 and 0.79 (both retrieve) in seed 0, 0.9 and 0.3 in seed 1, 0.4 and
    0.3 in seed 2 (none retrieves)."""
    attention = {(0, 0): 0.9, (0, 1): 0.79, (1, 0): 0.9, (1, 1): 0.3, (2, 0): 0.4, (2, 1): 0.3}
    carrier = pd.DataFrame([{"offset": 1, "seed": seed, "layer": 0, "head": head, "attention_at_offset": weight,
                             "retrieves": summaries.retrieves(weight), "top4_share": 0.9 + head / 20,
                             "top4_alignment": 0.8 + seed / 10} for (seed, head), weight in attention.items()])
    assert summaries.retrieving(carrier)[["seed", "head"]].values.tolist() == [[0, 0], [0, 1], [1, 0]]
    assert summaries.strongest_heads(carrier)[["seed", "head"]].values.tolist() == [[0, 0], [1, 0], [2, 0]]
    # at init, every head attends 0.1 to K; head 1's top-4 share is above the bar (0.85), head 0's not (0.5)
    untrained = carrier[["offset", "seed", "layer", "head"]].assign(attention_at_offset=0.1,
                                                                    top4_share=[0.5, 0.85] * 3)
    assert prose.carrier_finding(carrier, untrained, 16) == (
        "In 1 of 3 rope models more than one head retrieves; the carrier checks judge every one. No head retrieves in "
        "1 of 3 rope models: the work is split over heads or layers, as each head's peak offset shows. The baseline is "
        "each head at its seeded init (the weights its training started from), measured the same way: there 3 of 6 "
        "heads already have a top-4 share of at least 0.8, so a retrieving head's share counts as learned only where "
        "it exceeds the same head's at init.")
    # with 4 blocks per head or fewer, every head's top 4 hold all its energy: the share's check cannot hold
    assert "cannot hold" in prose.carrier_finding(carrier, untrained, 4)
    # every head is listed with its carrier, the offset it attends to most, whether it retrieves, and itself at init
    heads = pd.DataFrame([{"offset": 1, "seed": seed, "layer": 0, "head": head, "delta": delta, "mean_weight": weight}
                          for (seed, head), attention in attention.items()
                          for delta, weight in ((1, attention), (0, 1 - attention))])
    table = markdown_rows(prose.carrier_markdown(carrier.assign(peak_delta=1, kernel_logit_correlation=0.5), heads,
                                                 untrained), "|K|seed|head|")
    assert [row[:8] + row[-1:] for row in table] == [
        ["1", "0", "L0H0", "0.900", "yes", "1 (0.90)", "0.900", "0.800", "0.100, 0.500"],
        ["1", "0", "L0H1", "0.790", "yes", "1 (0.79)", "0.950", "0.800", "0.100, 0.850"],
        ["1", "1", "L0H0", "0.900", "yes", "1 (0.90)", "0.900", "0.900", "0.100, 0.500"],
        ["1", "1", "L0H1", "0.300", "no", "0 (0.70)", "0.950", "0.900", "0.100, 0.850"],
        ["1", "2", "L0H0", "0.400", "no", "0 (0.60)", "0.900", "1.000", "0.100, 0.500"],
        ["1", "2", "L0H1", "0.300", "no", "0 (0.70)", "0.950", "1.000", "0.100, 0.850"]]


def test_the_kernel_step_rule_reads_without_a_zero_factor():
    """A margin of 0 is "reaches s(K)", not "within 0 x its lead"; any other margin is said with its factor."""
    assert prose.step_reach(0.0) == "reaches s(K)"
    assert prose.step_reach(0.25) == "comes back within 0.25 x its lead of s(K)"
