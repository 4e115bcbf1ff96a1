"""The pinning statistics pinned to values worked out by hand on a stub head whose attention is fixed.

A stub head gives sequence i of every length a weight of 0.6 on one chosen key and spreads the other 0.4
evenly over the rest, so every argmax, mode, mass and target weight below is known before the code runs.
The by-length rows of the checks are written by hand too, so each statistic is a count made here."""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import bootstrap_both_ways
from lengthgen.checks.check import with_keys
from lengthgen import evaluation
from lengthgen.experiments.mechanics import analysis as mechanics
from lengthgen.experiments.mechanics.thresholds import SAME_POSITION_TOLERANCE

TRAIN_MAX, OFFSET, PEAK = 4, 1, 0.6
# length -> the key each of the 4 sequences peaks at. 4 = TRAIN_MAX is in range; at 5 the mode is 4, the first
# position past the range; at 8 the mode is 3, the last position inside it.
PEAKS = {4: [1, 1, 2, 3], 5: [4, 4, 4, 3], 8: [3, 3, 0, 7]}


def rest(length):
    """The weight of every key but the peak."""
    return (1 - PEAK) / (length - 1)


class StubHead(torch.nn.Module):
    """Row i of tokens carries i in column 0; its weights peak at ``PEAKS[length][i]``."""

    def __init__(self):
        super().__init__()
        self.dummy = torch.nn.Parameter(torch.zeros(1))
        self.config = SimpleNamespace(pe="learned")

    def token_tables(self, length):
        return ("tables of length", length)

    def attention(self, tokens, tables):
        length = tokens.shape[1]
        assert tables == self.token_tables(length)
        weights = torch.full((len(tokens), length), rest(length))
        weights[torch.arange(len(tokens)), torch.tensor(PEAKS[length])[tokens[:, 0]]] = PEAK
        return weights.log(), weights


def measured():
    sets = {}
    for length in PEAKS:
        tokens = torch.zeros(4, length, dtype=torch.long)
        tokens[:, 0] = torch.arange(4)
        sets[length] = tokens
    return mechanics.measure_mechanics(StubHead(), sets, OFFSET, 3, TRAIN_MAX)


def test_by_length_rows_by_hand():
    rows = measured()["mechanics_by_length"].set_index("length")
    assert rows["past_training_range"].tolist() == [False, True, True]  # 4 = TRAIN_MAX is not past it
    assert rows["modal_position"].tolist() == [1, 4, 3]
    assert rows["modal_fraction"].tolist() == [0.5, 0.75, 0.5]
    assert rows["modal_in_training_range"].tolist() == [True, False, True]  # 4 is outside [0, 4), 3 inside
    assert rows["n_sequences"].tolist() == [4, 4, 4]
    # length 4: every key is in range; 5: one peak in range (0.6 + 3 x 0.1), three out (4 x 0.1)
    # 8: three peaks in range (0.6 + 3 x 0.4/7), one out (4 x 0.4/7)
    assert rows.loc[4, "mass_in_training_range"] == pytest.approx(1.0)
    assert rows.loc[5, "mass_in_training_range"] == pytest.approx((0.9 + 3 * 0.4) / 4)
    assert rows.loc[8, "mass_in_training_range"] == pytest.approx((3 * (0.6 + 3 * rest(8)) + 4 * rest(8)) / 4)
    # the target sits at length - 2: at 4 position 2 (one peak), at 5 position 3 (one), at 8 position 6 (none)
    assert rows.loc[4, "target_attention"] == pytest.approx((0.6 + 3 * rest(4)) / 4)
    assert rows.loc[5, "target_attention"] == pytest.approx((0.6 + 3 * rest(5)) / 4)
    assert rows.loc[8, "target_attention"] == pytest.approx(rest(8))
    assert rows["max_weight"].tolist() == pytest.approx([PEAK] * 3)
    assert set(rows["seed"]) == {3} and set(rows["offset"]) == {OFFSET} and set(rows["pe"]) == {"learned"}


def test_histogram_and_profile_by_hand():
    tables = measured()
    histogram = tables["mechanics_argmax_histogram"]
    assert list(histogram[["length", "position", "count"]].itertuples(index=False, name=None)) == [
        (4, 1, 2), (4, 2, 1), (4, 3, 1), (5, 3, 1), (5, 4, 3), (8, 0, 1), (8, 3, 2), (8, 7, 1)]
    profile = tables["mechanics_attention_profile"].set_index(["length", "position"])["mean_weight"]
    assert profile[5].tolist() == pytest.approx([0.1, 0.1, 0.1, (0.6 + 0.3) / 4, (3 * 0.6 + 0.1) / 4])
    assert profile[8, 3] == pytest.approx((2 * 0.6 + 2 * rest(8)) / 4)
    assert profile[8, 7] == pytest.approx((0.6 + 3 * rest(8)) / 4)


def test_a_tie_between_modes_goes_to_the_lower_position():
    weights = torch.full((4, 6), 0.1, dtype=torch.float64)
    weights[[0, 1, 2, 3], [5, 2, 5, 2]] = 0.5
    stats = mechanics.argmax_statistics(weights, TRAIN_MAX, offset=2)
    assert stats["modal_position"] == 2 and stats["modal_fraction"] == 0.5 and stats["modal_in_training_range"]
    assert stats["target_attention"] == pytest.approx(0.1)  # position 6 - 1 - 2 = 3: never a peak
    assert stats["mass_in_training_range"] == pytest.approx((2 * 0.4 + 2 * 0.8) / 4)


COLUMNS = ["pe", "offset", "seed", "length", "past_training_range", "modal_position", "modal_in_training_range",
           "modal_fraction", "mass_in_training_range"]
BY_LENGTH = pd.DataFrame([
    ("learned", 1, 0, 4, False, 1, True, 0.1, 0.1),  # in range: left out of every statistic
    ("learned", 1, 0, 8, True, 3, True, 0.75, 0.9),
    ("learned", 1, 0, 16, True, 3, True, 0.5, 0.8),
    ("learned", 1, 1, 8, True, 2, True, 0.9, 0.6),
    ("learned", 1, 1, 16, True, 5, False, 0.9, 0.7),  # seed 1 moves: 2, then 5 (past the range)
    ("learned", 2, 0, 8, True, 0, True, 0.2, 0.05),  # offset 2: left out at offset 1
    ("learned", 2, 0, 16, True, 6, False, 0.3, 0.05),
    ("rope", 1, 0, 4, False, 3, True, 1.0, 1.0),  # in range: left out
    ("rope", 1, 0, 8, True, 7, False, 1.0, 0.1),
    ("rope", 1, 0, 16, True, 2, True, 1.0, 0.1),
    ("rope", 2, 0, 8, True, 7, False, 1.0, 0.1),
    ("rope", 2, 0, 16, True, 15, False, 1.0, 0.1),
], columns=COLUMNS)


def test_pinned_runs_by_hand():
    runs = mechanics.pinned_runs(BY_LENGTH).set_index(["pe", "offset", "seed"])
    # learned seed 0 at offset 1: position 3 at 8 and 16 (its in-range 1 is not counted)
    assert runs.loc[("learned", 1, 0), ["n_positions", "position", "spread", "same_position"]].tolist() == [1, 3, 0, True]
    assert runs.loc[("learned", 1, 1), ["n_positions", "position", "spread", "same_position"]].tolist() == [2, 2, 3, False]
    assert runs.loc[("learned", 2, 0), ["n_positions", "position"]].tolist() == [2, 0]
    assert runs.loc[("rope", 1, 0), ["n_positions", "position"]].tolist() == [2, 7]
    assert len(runs) == 5


@pytest.mark.parametrize("positions, same", [
    ((28, 28, 28, 29, 28), True),  # the committed run's K=1 seeds: one position of jitter is the same position
    ((30, 29, 29, 29, 29), True),
    ((28, 30, 29, 28, 29), False),  # 28 and 30 are two apart
    ((28, 24, 28, 24, 28), False),
])
def test_the_same_position_allows_one_position_of_jitter(positions, same):
    rows = pd.DataFrame([("learned", 1, 0, 64 * 2 ** index, True, position, True, 0.8, 0.9)
                         for index, position in enumerate(positions)], columns=COLUMNS)
    assert SAME_POSITION_TOLERANCE == 1
    assert mechanics.pinned_runs(rows)["same_position"].tolist() == [same]
    assert mechanics.pinning_statistics(rows, 1)[1].value.value() == float(same)


def test_pinning_statistics_by_hand():
    values = [statistic.value.value() for statistic in mechanics.pinning_statistics(BY_LENGTH, 1)]
    # learned past the range at offset 1: in range at (0, 8), (0, 16), (1, 8), not (1, 16); seed 0 keeps one
    # position, seed 1 does not; the lowest fraction at the mode 0.5, the lowest mass 0.6; rope: 8 out, 16 in
    assert values == pytest.approx([3 / 4, 1 / 2, 0.5, 0.6, 1 / 2])
    at_two = [statistic.value.value() for statistic in mechanics.pinning_statistics(BY_LENGTH, 2)]
    assert at_two == pytest.approx([1 / 2, 0.0, 0.2, 0.05, 0.0])


def test_checks_set_each_offset_beside_its_untrained_value():
    untrained = BY_LENGTH.assign(modal_fraction=0.05)
    rows = mechanics.mechanics_checks(BY_LENGTH, untrained)
    assert [row["offset"] for row in rows] == [1] * 5 + [2] * 5
    assert [row["holds"] for row in rows] == [False, False, True, True, False, False, False, False, False, True]
    assert rows[2]["rule"] == ">= 0.5 (untrained heads: 0.05, fail)"
    assert rows[3]["rule"] == ">= 0.5 (untrained heads: 0.6, pass)"  # the same mass, so the same verdict
    assert rows[9]["rule"] == "== 0 (untrained heads: 0, pass)"


def test_the_bootstrap_by_seed_sums_gives_the_recomputed_shares_and_worst_cells():
    """``BY_LENGTH`` with every seed at both offsets (seed 1 pinned at offset 2, seed 2 a rope head only): seed 1's
    moving mode at offset 1, seed 0's unpinned head at offset 2, rope's mode inside the range (seed 0 at offset 1,
    seed 2 at offset 2) and a draw of seed 2 alone (no learned cell: NaN) make each outcome turn on the seeds drawn
    (the means as shares of the drawn cells, the worst cell of the drawn seeds)."""
    frame = pd.concat([BY_LENGTH, pd.DataFrame([
        ("learned", 2, 1, 8, True, 3, True, 0.8, 0.7), ("learned", 2, 1, 16, True, 3, True, 0.6, 0.9),
        ("rope", 1, 2, 8, True, 7, False, 1.0, 0.1), ("rope", 1, 2, 16, True, 9, False, 1.0, 0.1),
        ("rope", 2, 2, 8, True, 7, False, 1.0, 0.1), ("rope", 2, 2, 16, True, 2, True, 1.0, 0.1),
    ], columns=COLUMNS)], ignore_index=True)
    tables = {"mechanics_by_length": frame, "mechanics_untrained_by_length": frame.assign(modal_fraction=0.05)}
    by_sums, redone = bootstrap_both_ways(
        lambda **tables: with_keys(mechanics.checks(tables, {}), "mechanics", "mechanics"), tables)
    pd.testing.assert_frame_equal(by_sums, redone)  # shares of counts and worst cells: exact, intervals too
    assert by_sums["holds_fraction"].between(0, 1, inclusive="neither").tolist() == [True] * 10
    assert by_sums["seeds_failing"].tolist() == [1, 1, 0, 0, 1, 1, 1, 1, 1, 1]


def test_no_length_past_the_range_is_an_error():
    with pytest.raises(ValueError, match=r"^mechanics needs evaluation lengths past the training range$"):
        mechanics.mechanics_checks(BY_LENGTH.assign(past_training_range=False), BY_LENGTH)


def test_a_missing_encoding_leaves_nan():
    learned_only = BY_LENGTH[BY_LENGTH["pe"] == "learned"]
    assert math.isnan(mechanics.pinning_statistics(learned_only, 1)[4].value.value())


def test_check_keys_are_the_texts_drift_matches_across_runs():
    """drift matches a check of two runs by (experiment, claim, statistic, offset): a reworded text is a check
    removed and another added, so the texts are pinned."""
    keys = [(statistic.claim, statistic.statistic) for statistic in mechanics.pinning_statistics(BY_LENGTH, 1)]
    assert keys == [
        ("learned modal argmax position lies inside the training range",
         "fraction of (seed, length) cells past the range with the modal position inside it"),
        ("learned modal argmax position is the same, within 1 position, at every length past the range",
         "fraction of seeds whose modal positions past the range lie within 1 position of each other"),
        ("learned head sends most sequences to the modal position",
         "min over (seed, length) past the range of the fraction of sequences at the modal position"),
        ("learned head keeps most attention mass inside the training range",
         "min over (seed, length) past the range of the mean attention mass on positions < train_length_max"),
        ("rope head does not pin inside the training range (contrast)",
         "fraction of (seed, length) cells past the range with the rope modal position inside it"),
    ]


def test_untrained_rows_are_the_head_at_its_own_seeded_init():
    """The baseline of a run is its head at the init its training started from (``init_head(config, seed)``), a
    different head per seed: each run's untrained rows are that head's, measured on the run's sets."""
    from lengthgen.models.head import AttentionHead, HeadConfig
    from lengthgen.training.loop import init_head
    config = HeadConfig(4, 4, "learned", trained_positions=16)
    sets = {length: torch.randint(4, (30, length), generator=torch.Generator().manual_seed(length)) for length in (6, 12)}
    runs = [({"pe": "learned", "offset": 1, "seed": seed}, AttentionHead(config).eval()) for seed in (5, 6)]
    got = mechanics.analyze({"models": runs, "eval_sets": {1: sets}}, {"task": {"train_length_max": TRAIN_MAX}})
    untrained = got["mechanics_untrained_by_length"]
    for seed in (5, 6):
        expected = mechanics.measure_mechanics(init_head(config, seed).eval(), sets, 1, seed, TRAIN_MAX)
        rows = untrained[untrained["seed"] == seed].reset_index(drop=True)
        pd.testing.assert_frame_equal(rows, expected["mechanics_by_length"])
    # the two seeds' inits differ, so a run measured at another seed's init would show
    first, second = (untrained.loc[untrained["seed"] == seed, "target_attention"].to_numpy() for seed in (5, 6))
    assert not np.allclose(first, second)


def test_weights_read_in_chunks_are_each_sequences_own(monkeypatch):
    """Long sequences are read a few at a time (TOKENS_PER_BATCH tokens): chunks of 3, 2 and 1 sequences at lengths
    4, 5 and 8 give every sequence its own weights, so the rows are the hand-counted ones of the whole batch."""
    monkeypatch.setattr(evaluation, "TOKENS_PER_BATCH", 12)
    rows = measured()["mechanics_by_length"].set_index("length")
    assert rows["modal_position"].tolist() == [1, 4, 3] and rows["modal_fraction"].tolist() == [0.5, 0.75, 0.5]
    assert rows.loc[8, "target_attention"] == pytest.approx(rest(8))
    assert rows.loc[5, "target_attention"] == pytest.approx((0.6 + 3 * rest(5)) / 4)
