"""The ranking/dilution split pinned to counts made by hand on a head whose logits and answers are fixed.

A stub head returns chosen attention logits and output logits per sequence, so which wrong answer is a
ranking error (another key scores at least as high as the target) and which a dilution error is known
before the code runs; every count, share, winning offset and bin below was worked out by hand."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from lengthgen.experiments.errors import analysis as errors
from lengthgen.experiments.errors.summaries import split_errors

LENGTH, OFFSET, TRAIN_MAX, VOCAB = 6, 1, 3, 4
TARGET = LENGTH - 1 - OFFSET  # position 4


class StubHead(torch.nn.Module):
    """Row i of tokens carries i in column 0; attention logits and answers are looked up by it."""

    def __init__(self, scores, answers):
        super().__init__()
        self.dummy = torch.nn.Parameter(torch.zeros(1))
        self.scores = torch.tensor(scores, dtype=torch.float32)
        self.answers = torch.tensor(answers)

    def attention(self, tokens):
        scores = self.scores[tokens[:, 0]]
        return scores, scores.softmax(-1)

    def predict(self, tokens):
        return torch.nn.functional.one_hot(self.answers[tokens[:, 0]], VOCAB).float(), None


# Each row: (attention logits over positions 0..5, answer); every target token is 0.
ROWS = [
    ([0, 1, 0, 0, 5, 2], 0),  # right, target on top
    ([0, 1, 0, 0, 5, 2], 1),  # wrong, target on top: dilution
    ([0, 5, 0, 0, 5, 2], 2),  # tie at position 1 (offset 4): ranking, winner unseen
    ([0, 0, 0, 6, 5, 2], 3),  # position 3 (offset 2) outscores: ranking, winner seen
    ([0, 0, 0, 0, 5, 9], 0),  # query key (offset 0) outscores but the answer is right: no error
    ([0, 0, 7, 0, 5, 2], 1),  # position 2 = offset 3 = TRAIN_MAX: ranking, winner unseen (boundary)
    ([8, 0, 8, 0, 5, 2], 2),  # two others tie above the target: the lowest position 0, offset 5
]


def stub_inputs():
    tokens = torch.zeros(len(ROWS), LENGTH, dtype=torch.long)
    tokens[:, 0] = torch.arange(len(ROWS))
    return StubHead([r[0] for r in ROWS], [r[1] for r in ROWS]), tokens, torch.zeros(len(ROWS), dtype=torch.long)


def test_read_answers_by_hand():
    answers = errors.read_answers(*stub_inputs(), OFFSET)
    assert answers.correct.tolist() == [True, False, False, False, True, False, False]
    assert answers.target_on_top.tolist() == [True, True, False, False, False, False, False]
    assert answers.ranking_error.tolist() == [False, False, True, True, False, True, True]
    assert answers.dilution_error.tolist() == [False, True, False, False, False, False, False]
    # best other key: row 0/1 position 5 (offset 0); 2: position 1 (4); 3: 3 (2); 4: 5 (0); 5: 2 (3); 6: 0 (5)
    assert answers.winning_offset.tolist() == [0, 0, 4, 2, 0, 3, 5]


def test_read_answers_chunked_matches(monkeypatch):
    monkeypatch.setattr(errors, "TOKENS_PER_BATCH", 2 * LENGTH)  # chunks of 2 sequences, last one of 1
    answers = errors.read_answers(*stub_inputs(), OFFSET)
    assert answers.correct.tolist() == [True, False, False, False, True, False, False]
    assert answers.target_on_top.tolist() == [True, True, False, False, False, False, False]
    assert answers.winning_offset.tolist() == [0, 0, 4, 2, 0, 3, 5]


def test_error_counts_by_hand():
    row = errors.error_counts(errors.read_answers(*stub_inputs(), OFFSET), TRAIN_MAX)
    assert row["n_sequences"] == 7 and row["n_wrong"] == 5
    assert row["n_ranking_error"] == 4 and row["n_dilution_error"] == 1 and row["n_outranked"] == 5
    assert row["n_winning_seen"] == 1 and row["n_winning_unseen"] == 3  # offsets 2 | 4, 3, 5
    assert row["median_winning_offset"] == 3.5  # median of 2, 3, 4, 5
    assert row["accuracy"] == pytest.approx(2 / 7)
    assert row["ranking_share"] == pytest.approx(4 / 7) and row["dilution_share"] == pytest.approx(1 / 7)
    assert row["ranking_share_of_wrong"] == pytest.approx(4 / 5)
    assert row["dilution_share_of_wrong"] == pytest.approx(1 / 5)


def test_seen_boundary_is_strict():
    answers = errors.Answers(np.array([False, False]), np.array([False, False]), np.array([TRAIN_MAX - 1, TRAIN_MAX]))
    row = errors.error_counts(answers, TRAIN_MAX)
    assert (row["n_winning_seen"], row["n_winning_unseen"]) == (1, 1)


def test_no_wrong_answers_gives_nan_shares_of_wrong():
    answers = errors.Answers(np.array([True, True]), np.array([True, False]), np.array([0, 1]))
    row = errors.error_counts(answers, TRAIN_MAX)
    assert row["n_wrong"] == 0 and row["n_ranking_error"] == 0 and row["n_outranked"] == 1
    assert math.isnan(row["ranking_share_of_wrong"]) and math.isnan(row["median_winning_offset"])
    assert row["accuracy"] == 1.0


def test_offset_bins_by_hand():
    assert errors.offset_bins(3, 6).tolist() == [0, 1, 2, 3, 4, 8]
    assert errors.offset_bins(8, 9).tolist() == [0, 1, 2, 4, 8, 16]
    assert errors.offset_bins(5, 1).tolist() == [0, 1, 2, 5]


def test_histogram_by_hand():
    answers = errors.read_answers(*stub_inputs(), OFFSET)
    edges = errors.offset_bins(TRAIN_MAX, LENGTH)
    histogram = errors.winning_offset_histogram(answers, edges, TRAIN_MAX)
    assert histogram["winning_offset_min"].tolist() == [0, 1, 2, 3, 4]
    assert histogram["winning_offset_max"].tolist() == [0, 1, 2, 3, 7]
    assert histogram["seen"].tolist() == [True, True, True, False, False]
    assert histogram["count"].tolist() == [0, 0, 1, 1, 2]  # ranking winners at 2 | 3 | 4, 5


def by_length(rows):
    columns = ["pe", "offset", "seed", "length", "past_training_range", "n_sequences", "n_wrong",
               "n_ranking_error", "n_dilution_error", "n_winning_seen", "n_winning_unseen"]
    return pd.DataFrame(rows, columns=columns)


def test_checks_pool_past_the_range_only():
    frame = by_length([
        ("rope", 1, 0, 8, False, 100, 90, 90, 0, 0, 90),  # in range: left out
        ("rope", 1, 0, 16, True, 100, 10, 4, 6, 1, 3),
        ("rope", 1, 1, 32, True, 100, 30, 6, 24, 5, 1),
        ("learned", 1, 0, 32, True, 100, 50, 50, 0, 50, 0),  # not rope: left out
    ])
    dilution, unseen = errors.errors_checks(frame)
    assert dilution["value"] == pytest.approx(30 / 40) and dilution["offset"] == 1
    assert unseen["value"] == pytest.approx(4 / 10) and unseen["kind"] == "sanity"


def test_split_errors_by_hand():
    split = pd.DataFrame({"offset": [1, 1, 1], "predictor": ["ranking"] * 3, "past_training_range": [True, True, False],
                          "predicted_ranking_share": [0.5, 0.1, 0.9], "measured_ranking_share": [0.2, 0.3, 0.0],
                          "predicted_dilution_share": [0.0, 0.0, 0.0], "measured_dilution_share": [0.4, 0.1, 1.0]})
    row = split_errors(split).iloc[0]
    assert row["ranking_share_error"] == pytest.approx((0.3 + 0.2) / 2)
    assert row["dilution_share_error"] == pytest.approx((0.4 + 0.1) / 2)
