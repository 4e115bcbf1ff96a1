"""Shift equivariance on hand-made cases: heads whose logits under a shift are known, and change tables whose
checks can be counted by hand (fast: tiny heads, no hypothesis search)."""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from conftest import SCHEMA, bootstrap_both_ways
from lengthgen.checks.check import with_keys
from lengthgen.experiments.shift import analysis as shift
from lengthgen.experiments.shift.summaries import summary_by_shift
from lengthgen.experiments.shift.thresholds import ABSOLUTE_MIN_CHANGE, ROPE_MAX_CHANGE
from lengthgen.models.head import HeadConfig
from lengthgen.pipeline.config import load_schema
from lengthgen.training.loop import init_head


class LinearShiftHead(nn.Module):
    """A fake head: attention logit of key t at shift s is w * (t + s) * token; output logit v is w * s * (v + 1).

    So the largest |attention change| at shift s is |w| * s * max(token), and of the output |w| * s * V.
    Shifts above ``last`` raise IndexError, as a finite learned table does. ``seen`` records the dtype each call
    computed in.
    """

    def __init__(self, weight: float = 0.5, vocab: int = 3, last: int = 10**9, pe: str = "fake"):
        super().__init__()
        self.weight = nn.Parameter(torch.tensor(weight))
        self.vocab, self.last, self.config = vocab, last, SimpleNamespace(pe=pe)
        self.seen = []

    def attention(self, tokens, position_offset=0):
        if position_offset > self.last:
            raise IndexError("past the table")
        self.seen.append((self.weight.dtype, self.training))
        positions = torch.arange(tokens.shape[1], dtype=self.weight.dtype) + position_offset
        scores = self.weight * positions * tokens.to(self.weight.dtype)
        return scores, scores.softmax(-1)

    def forward(self, tokens, position_offset=0):
        if position_offset > self.last:
            raise IndexError("past the table")
        values = torch.arange(1, self.vocab + 1, dtype=self.weight.dtype)
        return (self.weight * position_offset * values).expand(tokens.shape[0], -1), None


TOKENS = torch.tensor([[1, 2, 0], [0, 1, 1]])  # largest token 2, length 3, batch 2


def test_changes_are_the_largest_logit_moves_against_shift_zero():
    changes = shift.shift_changes(LinearShiftHead(0.5), TOKENS, [1, 4], dtypes=("float64",))
    # attention: |0.5 * s * token| at most 0.5 * s * 2 = s; output: 0.5 * s * 3 = 1.5 s.
    assert changes["attention_logit_change"].tolist() == [1.0, 4.0]
    assert changes["output_logit_change"].tolist() == [1.5, 6.0]
    # The scale: the largest |logit| at shift 0, 0.5 * position 2 * token 1 = 1.0 (row 1, key 2) or 0.5 * 1 * 2.
    assert changes["attention_logit_scale"].tolist() == [1.0, 1.0]
    assert changes["length"].tolist() == [3, 3] and changes["shift"].tolist() == [1, 4]
    assert changes["dtype"].tolist() == ["float64", "float64"] and changes["defined"].tolist() == [True, True]


def test_the_largest_change_is_of_the_absolute_difference():
    """A logit that falls counts as much as one that rises: |shifted - reference|, not the signed difference."""
    assert shift.max_abs_change(torch.tensor([[1.0, -3.0]]), torch.tensor([[2.0, 1.0]])) == 4.0
    assert shift.max_abs_change(torch.tensor([0.5, 2.5]), torch.tensor([0.5, 2.0])) == 0.5
    falling = shift.shift_changes(LinearShiftHead(-0.25), TOKENS, [2], dtypes=("float64",))
    assert falling["attention_logit_change"].item() == 1.0  # 0.25 * 2 * 2
    assert falling["attention_logit_scale"].item() == 0.5  # |-0.25 * 1 * 2|


def test_by_default_both_dtypes_are_measured_each_in_its_own_dtype_on_an_eval_copy():
    head = LinearShiftHead(0.5)
    head.train()
    changes = shift.shift_changes(head, TOKENS, [1, 2])
    assert changes["dtype"].tolist() == ["float32", "float32", "float64", "float64"]
    assert changes["shift"].tolist() == [1, 2, 1, 2]
    assert changes["attention_logit_change"].tolist() == [1.0, 2.0, 1.0, 2.0]
    assert head.seen == []  # the copies were measured, not the caller's head
    assert head.weight.dtype == torch.float32 and head.training


def test_a_real_rope_head_moves_by_rounding_in_float32_and_not_at_all_in_float64():
    """The float32 and float64 rows differ: float32 rounding at a large shift is far above ROPE_MAX_CHANGE, float64's below."""
    model = shift.untrained_head("rope", 8, 16, 64, 0)
    tokens = torch.randint(8, (4, 16), generator=torch.Generator().manual_seed(0))
    changes = shift.shift_changes(model, tokens, [100_000]).set_index("dtype")
    assert changes.loc["float64", "attention_logit_change"] <= ROPE_MAX_CHANGE
    assert changes.loc["float32", "attention_logit_change"] > 10 * ROPE_MAX_CHANGE
    assert all(parameter.dtype == torch.float32 for parameter in model.parameters())


def test_a_shift_past_the_table_is_a_missing_cell_not_an_error():
    changes = shift.shift_changes(LinearShiftHead(0.5, last=3), TOKENS, [3, 4], dtypes=("float64",))
    assert changes["defined"].tolist() == [True, False]
    assert changes["attention_logit_change"].iloc[0] == 3.0 and changes["output_logit_change"].iloc[0] == 4.5
    assert math.isnan(changes["attention_logit_change"].iloc[1]) and math.isnan(changes["output_logit_change"].iloc[1])
    assert changes["attention_logit_scale"].tolist() == [1.0, 1.0]  # the scale is shift 0's, defined either way


def test_measure_shift_runs_every_length_in_order_and_labels_the_head():
    short, long = TOKENS[:, :2], torch.tensor([[2, 0, 0, 1], [0, 0, 0, 0]])
    targets = torch.tensor([5, 5])
    head = LinearShiftHead(0.5, pe="linear")
    table = shift.measure_shift(head, {4: (long, targets), 2: short}, [1], offset=3, seed=7, dtypes=("float64",))
    # length 2 first: tokens [[1, 2], [0, 1]] (largest token 2 at key 1); length 4: largest token 2 at key 0.
    assert table["length"].tolist() == [2, 4]
    assert table["attention_logit_change"].tolist() == [1.0, 1.0]
    assert table["attention_logit_scale"].tolist() == [1.0, 1.5]  # 0.5 * 1 * 2; 0.5 * 3 * 1
    assert table.index.tolist() == [0, 1]
    assert table[["pe", "offset", "seed", "trained"]].drop_duplicates().values.tolist() == [["linear", 3, 7, True]]
    listed = shift.measure_shift(head, {4: [long, targets]}, [2], offset=1, seed=0, trained=False)
    assert listed["dtype"].tolist() == ["float32", "float64"] and not listed["trained"].any()
    assert listed["attention_logit_change"].tolist() == [2.0, 2.0]


def test_an_untrained_head_is_the_seeded_init_of_the_sweep_s_settings():
    head = shift.untrained_head("learned", 5, 8, 16, 3)
    reference = init_head(HeadConfig(5, 8, "learned", 16), 3)
    assert head.config == reference.config
    defaults = load_schema(SCHEMA)["properties"]["model"]["properties"]
    assert (head.config.rope_base, head.config.learned_init_std, head.config.init) == tuple(
        defaults[key]["default"] for key in ("rope_base", "learned_init_std", "init"))
    assert not head.training
    for (name, parameter), (_, expected) in zip(head.named_parameters(), reference.named_parameters(), strict=True):
        assert torch.equal(parameter, expected), name
    chosen = shift.untrained_head("rope", 5, 8, 16, 2, rope_base=100.0, learned_init_std=0.5, init="normal@std=0.3")
    assert (chosen.config.pe, chosen.config.vocab_size, chosen.config.d_model, chosen.config.trained_positions,
            chosen.config.rope_base, chosen.config.learned_init_std, chosen.config.init, chosen.config.init_seed) == (
        "rope", 5, 8, 16, 100.0, 0.5, "normal@std=0.3", 2)


def test_the_untrained_encodings_are_those_at_init_the_sweep_does_not_train():
    settings = {"shift": {"pe_at_init": ["sinusoidal", "rope", "learned", "nope"]}, "sweep": {"pe": ["rope", "learned"]}}
    assert shift.untrained_encodings(settings) == ["sinusoidal", "nope"]


class Heads(list):
    """(run, model) pairs with the settings every model holds, as the runner's ``ModelSet`` gives them."""

    expected = {"vocab_size": 8, "d_model": 8, "trained_positions": 64}


def test_analyze_measures_the_offset_s_heads_and_each_untrained_encoding_under_every_seed():
    trained = LinearShiftHead(0.5, pe="rope")
    tokens = torch.randint(8, (2, 6), generator=torch.Generator().manual_seed(1))
    inputs = {"models": Heads([({"pe": "rope", "seed": 5, "offset": 2}, trained)]),
              "eval_sets": {2: {6: (tokens, None), 3: (TOKENS, None)}, 1: {6: (tokens + 100, None)}}}
    settings = {"offset": 2, "sweep": {"pe": ["rope"], "seed": [5, 6]},
                "shift": {"shifts": [1, 3], "lengths": [6], "pe_at_init": ["rope", "sinusoidal"]}}
    changes = shift.analyze(inputs, settings)["shift_changes"]
    assert changes.index.tolist() == list(range(12))
    mine = changes[changes["trained"]]
    assert set(mine["pe"]) == {"rope"} and set(mine["seed"]) == {5} and set(mine["offset"]) == {2}
    largest = tokens.max().item()  # offset 2's tokens of length 6, not offset 1's
    assert mine["attention_logit_change"].tolist() == [0.5 * largest, 1.5 * largest] * 2
    at_init = changes[~changes["trained"]]
    assert set(at_init["pe"]) == {"sinusoidal"} and sorted(set(at_init["seed"])) == [5, 6]
    assert set(at_init["offset"]) == {2}  # the untrained heads are measured on, and filed under, the job's offset
    assert set(changes["length"]) == {6}
    for seed in (5, 6):
        expected = init_head(HeadConfig(8, 8, "sinusoidal", 64), seed).eval().double()
        with torch.no_grad():
            reference, _ = expected.attention(tokens.long())
            moved, _ = expected.attention(tokens.long(), position_offset=3)
        row = at_init[(at_init["seed"] == seed) & (at_init["dtype"] == "float64") & (at_init["shift"] == 3)]
        assert row["attention_logit_change"].item() == pytest.approx((moved - reference).abs().max().item(), rel=1e-12)


def changes_table(rows: list[tuple]) -> pd.DataFrame:
    """Rows (pe, seed, length, shift, dtype, offset, defined, trained, change, scale)."""
    columns = ["pe", "seed", "length", "shift", "dtype", "offset", "defined", "trained", "attention_logit_change",
               "attention_logit_scale"]
    return pd.DataFrame(rows, columns=columns)


# At offset 1 in float64: rope moves by rounding (largest 5e-11, scale up to 12.345); learned is trained (largest
# change per seed 2.0 and 0.7; its length 64 is undefined at every shift, with scale 50); sinusoidal is at init
# (largest per seed 0.02 and 0.04). The float32 rows and those of offset 2 would change every statistic.
CHANGES = changes_table([
    ("rope", 0, 16, 1, "float64", 1, True, True, 1e-11, 3.0),
    ("rope", 1, 16, 1, "float64", 1, True, True, 5e-11, 12.345),
    ("rope", 0, 16, 1, "float32", 1, True, True, 1e-4, 99.0),
    ("rope", 0, 16, 1, "float64", 2, True, True, 1e-3, 77.0),
    ("learned", 0, 16, 1, "float64", 1, True, True, 0.5, 4.25),
    ("learned", 0, 16, 9, "float64", 1, True, True, 2.0, 4.25),
    ("learned", 1, 16, 1, "float64", 1, True, True, 0.3, 3.0),
    ("learned", 1, 16, 9, "float64", 1, True, True, 0.7, 3.0),
    ("learned", 1, 64, 1, "float64", 1, False, True, math.nan, 50.0),
    ("learned", 1, 16, 9, "float32", 1, True, True, 0.01, 60.0),
    ("learned", 1, 16, 9, "float64", 2, True, True, 0.01, 60.0),
    ("sinusoidal", 0, 16, 1, "float64", 1, True, False, 0.01, 1.0),
    ("sinusoidal", 0, 16, 9, "float64", 1, True, False, 0.02, 1.0),
    ("sinusoidal", 1, 16, 1, "float64", 1, True, False, 0.04, 2.0),
    ("sinusoidal", 1, 16, 9, "float64", 1, True, False, 0.03, 2.0),
    ("sinusoidal", 1, 16, 9, "float32", 1, True, False, 1e-9, 2.0),
])

ROPE_STATISTIC = "max over seeds, lengths and shifts of the float64 max abs attention logit change"
ABSOLUTE_STATISTIC = ("min over seeds of the max over defined shifts and lengths of the float64 max abs attention "
                      "logit change")


def as_claimed(row: dict) -> dict:
    """A check's row as the claims table has it: without the statistic the seed bootstrap resamples."""
    return {key: value for key, value in row.items() if key != "seed_sums"}


def test_the_rope_check_is_the_largest_float64_change_at_its_offset():
    rope = as_claimed(shift.checks({"shift_changes": CHANGES}, {"offset": 1})[0])
    assert rope == {"claim": "rope attention logits depend on relative offset alone", "statistic": ROPE_STATISTIC,
                    "offset": 1, "value": 5e-11, "comparison": "<=", "threshold": ROPE_MAX_CHANGE,
                    "rule": "<= 1e-09 (logits up to 12.3)", "holds": True, "kind": "sanity", "per_seed": True}


def test_a_trained_absolute_head_is_held_to_order_one_by_its_weakest_seed():
    learned = as_claimed(shift.shift_checks(CHANGES, 1)[1])
    # seed 0 moves by at most 2.0, seed 1 by at most 0.7: the weakest seed's 0.7; the undefined length's scale
    # (50) is no logit the change was measured on.
    assert learned == {"claim": "learned attention logits change under a position shift",
                       "statistic": ABSOLUTE_STATISTIC, "offset": 1, "value": 0.7, "comparison": ">=",
                       "threshold": ABSOLUTE_MIN_CHANGE, "rule": ">= 0.1 (logits up to 4.25)", "holds": True,
                       "kind": "evidence", "per_seed": True}


def test_an_absolute_head_at_init_is_a_sanity_check_of_moving_more_than_rounding():
    sinusoidal = as_claimed(shift.shift_checks(CHANGES, 1)[2])
    assert sinusoidal == {"claim": "sinusoidal attention logits change under a position shift",
                          "statistic": ABSOLUTE_STATISTIC, "offset": 1, "value": 0.02, "comparison": ">",
                          "threshold": ROPE_MAX_CHANGE,
                          "rule": "> 1e-09, more than rounding (heads at their seeded init)", "holds": True,
                          "kind": "sanity", "per_seed": True}


def test_one_trained_seed_makes_the_encoding_evidence():
    mixed = CHANGES.assign(trained=np.where((CHANGES["pe"] == "sinusoidal") & (CHANGES["seed"] == 1), True,
                                            CHANGES["trained"]))
    sinusoidal = shift.shift_checks(mixed, 1)[2]
    assert (sinusoidal["kind"], sinusoidal["comparison"], sinusoidal["threshold"]) == ("evidence", ">=",
                                                                                      ABSOLUTE_MIN_CHANGE)
    assert sinusoidal["rule"] == ">= 0.1 (logits up to 2)" and not sinusoidal["holds"]  # 0.02 < 0.1


# CHANGES with a third seed that fails every check at offset 1: rope moves by more than rounding, the learned head
# by less than its bar, the sinusoidal one at init not at all.
THREE_SEEDS = pd.concat([CHANGES, changes_table([
    ("rope", 2, 16, 1, "float64", 1, True, True, 1e-8, 3.0),
    ("learned", 2, 16, 9, "float64", 1, True, True, 0.05, 3.0),
    ("sinusoidal", 2, 16, 9, "float64", 1, True, False, 0.0, 2.0),
])], ignore_index=True)


@pytest.mark.parametrize("changes, sinusoidal_seeds_failing", [
    (THREE_SEEDS, 1),
    # seed 1's sinusoidal head trained (0.04 < 0.1 fails alone): a resample that leaves it out checks heads at init
    (THREE_SEEDS.assign(trained=THREE_SEEDS["trained"] | ((THREE_SEEDS["pe"] == "sinusoidal")
                                                          & (THREE_SEEDS["seed"] == 1))), 2),
], ids=["as analyze makes them", "one seed trained of an encoding at init"])
def test_the_bootstrap_by_seed_sums_takes_the_extremes_of_the_drawn_seeds_as_recomputing_does(
        changes, sinusoidal_seeds_failing):
    def claims_of(shift_changes):
        return with_keys(shift.checks({"shift_changes": shift_changes}, {"offset": 1}), "shift", "shift_K1")

    by_sums, redone = bootstrap_both_ways(claims_of, {"shift_changes": changes})
    pd.testing.assert_frame_equal(by_sums, redone)  # extremes: exact, intervals too
    assert by_sums["holds_fraction"].between(0, 1, inclusive="neither").all()  # seed 2 turns every outcome
    assert by_sums["seeds_failing"].tolist() == [1, 1, sinusoidal_seeds_failing]


def test_the_checks_read_only_their_offset():
    at_two = shift.shift_checks(CHANGES, 2)
    assert [row["offset"] for row in at_two] == [2, 2, 2]
    assert at_two[0]["value"] == 1e-3 and not at_two[0]["holds"] and at_two[0]["rule"] == "<= 1e-09 (logits up to 77)"
    assert at_two[1]["value"] == 0.01 and not at_two[1]["holds"]
    assert math.isnan(at_two[2]["value"]) and at_two[2]["rule"] == ">= 0.1"


def test_a_missing_encoding_is_an_evidence_check_without_a_value():
    rows = shift.shift_checks(CHANGES[CHANGES["pe"] == "sinusoidal"], 1)
    rope, learned = rows[0], rows[1]
    assert math.isnan(rope["value"]) and not rope["holds"] and rope["rule"] == "<= 1e-09"
    assert math.isnan(learned["value"]) and not learned["holds"]
    assert (learned["kind"], learned["comparison"], learned["rule"]) == ("evidence", ">=", ">= 0.1")
    undefined = shift.shift_checks(CHANGES[CHANGES["pe"] != "learned"].assign(defined=lambda frame: frame["pe"] != "sinusoidal"), 1)[2]
    assert math.isnan(undefined["value"]) and undefined["kind"] == "evidence"  # no defined shift: nothing measured


def test_the_thresholds_are_boundaries_that_hold():
    at_bounds = CHANGES.assign(attention_logit_change=np.select(
        [CHANGES["pe"] == "rope", CHANGES["pe"] == "learned"], [ROPE_MAX_CHANGE, ABSOLUTE_MIN_CHANGE], 2 * ROPE_MAX_CHANGE))
    rope, learned, sinusoidal = shift.shift_checks(at_bounds, 1)
    assert rope["holds"] and learned["holds"] and sinusoidal["holds"]
    flat = at_bounds.assign(attention_logit_change=lambda frame: frame["attention_logit_change"].where(
        frame["pe"] != "sinusoidal", ROPE_MAX_CHANGE))
    assert not shift.shift_checks(flat, 1)[2]["holds"]  # at init, exactly rounding is not "more than rounding"


def test_logit_size_is_the_largest_scale_to_three_digits_or_nothing():
    assert shift.logit_size(CHANGES[CHANGES["pe"] == "rope"]) == " (logits up to 99)"
    assert shift.logit_size(changes_table([("rope", 0, 4, 1, "float64", 1, True, True, 0.0, 0.012345)])) == \
        " (logits up to 0.0123)"
    assert shift.logit_size(CHANGES.iloc[:0]) == ""


def test_summary_by_shift_is_the_largest_change_per_encoding_dtype_and_shift_at_the_offset():
    table = CHANGES.assign(output_logit_change=CHANGES["attention_logit_change"] * 10)
    summary = summary_by_shift(table, 1)
    assert summary.columns.tolist() == [1, 9] and summary.columns.name == "shift"
    assert summary.index.names == ["pe", "dtype"]
    assert summary.loc[("learned", "float64")].tolist() == [0.5, 2.0]
    assert summary.loc[("rope", "float64"), 1] == 5e-11 and math.isnan(summary.loc[("rope", "float64"), 9])
    assert summary.loc[("sinusoidal", "float64")].tolist() == [0.04, 0.03]
    assert summary.loc[("learned", "float32"), 9] == 0.01
    assert summary_by_shift(table, 2).loc[("rope", "float64"), 1] == 1e-3
    outputs = summary_by_shift(table, 1, "output_logit_change")
    assert outputs.loc[("learned", "float64")].tolist() == [5.0, 20.0]


def test_a_real_absolute_head_s_changes_are_its_logits_at_the_shift_against_shift_zero():
    """Attention and output logits are both read at the shift asked for (+3, not 0, -3 or 4), on a float64 copy."""
    model = shift.untrained_head("sinusoidal", 8, 16, 64, 1)
    tokens = torch.randint(8, (3, 10), generator=torch.Generator().manual_seed(2))
    changes = shift.shift_changes(model, tokens, [3], dtypes=("float64",)).iloc[0]
    double = init_head(HeadConfig(8, 16, "sinusoidal", 64), 1).double().eval()
    with torch.no_grad():
        scores = {s: double.attention(tokens, position_offset=s)[0] for s in (0, 3)}
        outputs = {s: double(tokens, position_offset=s)[0] for s in (0, 3)}
    assert changes["attention_logit_change"] == (scores[3] - scores[0]).abs().max().item()
    assert changes["output_logit_change"] == (outputs[3] - outputs[0]).abs().max().item()
    assert changes["attention_logit_scale"] == scores[0].abs().max().item()


class DeviceRecordingHead(nn.Module):
    """A fake head that records the device of the tokens it is given and returns zero logits on the CPU."""

    devices = []

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(()))

    def attention(self, tokens, position_offset=0):
        DeviceRecordingHead.devices.append(tokens.device.type)
        return torch.zeros(tokens.shape, dtype=torch.float64), None

    def forward(self, tokens, position_offset=0):
        return torch.zeros(tokens.shape[0], 2, dtype=torch.float64), None


def test_the_tokens_are_moved_to_the_head_s_device():
    """A head on an accelerator gets its tokens there (run on the meta device: no GPU needed)."""
    DeviceRecordingHead.devices.clear()
    shift.shift_changes(DeviceRecordingHead().to("meta"), TOKENS, [1], dtypes=("float64",))
    assert DeviceRecordingHead.devices == ["meta", "meta"]
