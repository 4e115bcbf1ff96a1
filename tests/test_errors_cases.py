"""The ranking/dilution split pinned to counts made by hand on a head whose logits and answers are fixed.

A stub head returns chosen attention logits and output logits per sequence, so which wrong answer is a
ranking error (another key scores at least as high as the target) and which a dilution error is known
before the code runs; every count, share, winning offset and bin below was worked out by hand."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from lengthgen.checks.bootstrap import seed_bootstrap
from lengthgen.checks.check import with_keys
from lengthgen import evaluation
from lengthgen.experiments.errors import analysis as errors
from lengthgen.experiments.errors.summaries import pooled_past_range

LENGTH, OFFSET, TRAIN_MAX, VOCAB = 6, 1, 3, 4
TARGET = LENGTH - 1 - OFFSET  # position 4


class StubHead(torch.nn.Module):
    """Row i of tokens carries i in column 0; attention logits and answers are looked up by it."""

    def __init__(self, scores, answers):
        super().__init__()
        self.dummy = torch.nn.Parameter(torch.zeros(1))
        self.scores = torch.tensor(scores, dtype=torch.float32)
        self.answers = torch.tensor(answers)

    def token_tables(self, length):
        return ("tables of length", length)

    def attention(self, tokens, tables):
        assert tables == self.token_tables(tokens.shape[1])
        scores = self.scores[tokens[:, 0]]
        return scores, scores.softmax(-1)

    def predict(self, tokens, tables):
        assert tables == self.token_tables(tokens.shape[1])
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
    monkeypatch.setattr(evaluation, "TOKENS_PER_BATCH", 2 * LENGTH)  # chunks of 2 sequences, last one of 1
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
    with warnings.catch_warnings():
        # the usual cell in range (no ranking error) leaves no numpy "mean of empty slice" warning in the run's log
        warnings.simplefilter("error")
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


def test_the_bootstrap_by_seed_sums_gives_the_recomputed_shares_and_intervals():
    """Seed 0 has no wrong answer at offset 1 (a resample of it alone has no share: NaN) and seed 2 no ranking error
    at offset 2; seed 1's in-range and learned cells must stay out of the sums as they stay out of the recomputation."""
    frame = by_length([
        ("rope", 1, 0, 16, True, 100, 0, 0, 0, 0, 0), ("rope", 1, 1, 32, True, 100, 30, 6, 24, 5, 1),
        ("rope", 1, 1, 8, False, 100, 90, 90, 0, 0, 90), ("learned", 1, 1, 32, True, 100, 50, 50, 0, 50, 0),
        ("rope", 1, 2, 16, True, 100, 10, 4, 6, 0, 4), ("rope", 2, 0, 16, True, 200, 50, 40, 10, 2, 38),
        ("rope", 2, 1, 16, True, 200, 80, 30, 50, 4, 26), ("rope", 2, 2, 16, True, 200, 20, 0, 20, 0, 0),
    ])

    def summed(errors_by_length):
        return with_keys(errors.errors_checks(errors_by_length), "errors", "errors")

    spreads = [seed_bootstrap(claims_of, {"errors_by_length": frame}, resamples=200, seed=0)
               for claims_of in (summed, lambda errors_by_length: summed(errors_by_length).assign(seed_sums=None))]
    pd.testing.assert_frame_equal(*spreads)
    assert spreads[0]["holds_fraction"].between(0, 1, inclusive="neither").all()  # no outcome decided by every draw


def test_a_share_at_its_bar_holds():
    """Half the wrong answers dilution errors, 9 ranking errors in 10 won at unseen offsets: both at their bars."""
    frame = by_length([("rope", 1, 0, 16, True, 100, 12, 10, 2, 1, 9), ("rope", 1, 1, 16, True, 100, 8, 0, 8, 0, 0)])
    dilution, unseen = errors.errors_checks(frame)
    assert (dilution["value"], unseen["value"]) == (errors.MIN_DILUTION_SHARE, errors.MIN_UNSEEN_WINNER_SHARE)
    assert dilution["holds"] and unseen["holds"]


def test_share_by_hand():
    assert errors.share(1, 4) == 0.25
    assert errors.share(1, 1) == 1.0 and errors.share(3, 3) == 1.0  # a whole of one or more is divided, not NaN
    assert math.isnan(errors.share(0, 0))  # no whole (no wrong answer, no ranking error): undefined, not 0


def test_the_error_message_names_what_is_missing():
    frame = by_length([("rope", 1, 0, 8, False, 100, 10, 5, 5, 0, 5)])
    with pytest.raises(ValueError, match=r"^errors needs evaluation lengths past the training range$"):
        errors.errors_checks(frame)


def test_checks_of_every_offset_with_their_rules():
    frame = by_length([
        ("rope", 1, 0, 16, True, 100, 10, 4, 6, 1, 3),
        ("rope", 1, 1, 32, True, 100, 30, 6, 24, 5, 1),
        ("rope", 2, 0, 16, True, 200, 50, 40, 10, 2, 38),
    ])
    rows = errors.errors_checks(frame)
    assert [(row["offset"], row["kind"]) for row in rows] == [(1, "evidence"), (1, "sanity"), (2, "evidence"), (2, "sanity")]
    # Offset 1 pools 200 answers, 40 wrong (30 dilution, 10 ranking, 4 of them won at unseen offsets); offset 2:
    # 200 answers, 50 wrong (10 dilution, 40 ranking, 38 unseen).
    assert [row["value"] for row in rows] == pytest.approx([30 / 40, 4 / 10, 10 / 50, 38 / 40])
    assert [row["holds"] for row in rows] == [True, False, False, True]  # rules: >= 0.5, >= 0.9
    # the checks pool every seed's answers (the claim's statistic is a mean over seeds): their rules say so
    assert rows[0]["rule"] == f">= {errors.MIN_DILUTION_SHARE:g} (40 wrong of 200 answers, every seed's pooled)"
    assert rows[3]["rule"] == (f">= {errors.MIN_UNSEEN_WINNER_SHARE:g} (40 ranking errors among 200 answers, "
                               "every seed's pooled)")
    # The statistic is part of a check's key (claim, statistic, offset): drift and replication match the checks
    # of two runs by it, so it is the text every earlier run has.
    assert rows[0]["statistic"] == "rope: share of wrong answers past the training range that are dilution errors"
    assert rows[1]["statistic"] == ("rope: share of ranking errors past the training range whose winning key is at "
                                    "an unseen offset")


def split_inputs():
    """measured rows (two rope runs at offset 1 and a learned one), the law's accuracy and the ranking shares."""
    measured = pd.DataFrame({
        "pe": ["rope", "rope", "rope", "learned"], "offset": [1, 1, 1, 1], "seed": [0, 0, 1, 0],
        "length": [8, 32, 32, 32], "past_training_range": [False, True, True, True],
        "ranking_share": [0.0, 0.1, 0.2, 0.9], "dilution_share": [0.05, 0.3, 0.4, 0.0]})
    law = pd.DataFrame({"offset": 1, "seed": [0, 0, 1, 0, 0], "length": [8, 32, 32, 32, 64],
                        "predictor": ["mean_field", "mean_field", "mean_field", "ranking", "mean_field"],
                        "predicted_accuracy": [0.9, 0.6, 0.5, 0.01, 0.2]})
    ranking = pd.DataFrame({"offset": 1, "seed": [0, 0, 1], "length": [8, 32, 32],
                            "predicted_ranking_share": [0.02, 0.25, 0.35]})
    return measured, ranking, law


def test_predicted_split_by_hand():
    split = errors.predicted_split(*split_inputs())
    assert errors.DILUTION_LAW_PREDICTOR == "mean_field"
    got = {(row.seed, row.length, row.predictor): (row.predicted_ranking_share, row.predicted_dilution_share,
                                                   row.measured_ranking_share, row.measured_dilution_share)
           for row in split.itertuples()}
    # The law predicts every wrong answer a dilution error (1 - its accuracy); the ranking account every one a
    # ranking error. prop1's rows of another predictor (its own "ranking") and lengths nobody measured are left out.
    expected = {
        (0, 8, "mean_field"): (0.0, 0.1, 0.0, 0.05), (0, 32, "mean_field"): (0.0, 0.4, 0.1, 0.3),
        (1, 32, "mean_field"): (0.0, 0.5, 0.2, 0.4),
        (0, 8, "ranking"): (0.02, 0.0, 0.0, 0.05), (0, 32, "ranking"): (0.25, 0.0, 0.1, 0.3),
        (1, 32, "ranking"): (0.35, 0.0, 0.2, 0.4)}
    assert set(got) == set(expected)
    for key, shares in expected.items():
        assert got[key] == pytest.approx(shares), key
    assert len(split) == 6 and set(split["pe"]) == {"rope"} and set(split["offset"]) == {1}
    assert split.set_index(["seed", "length"])["past_training_range"].to_dict() == {
        (0, 8): False, (0, 32): True, (1, 32): True}


def test_predicted_split_refuses_a_run_measured_twice():
    measured, ranking, law = split_inputs()
    twice = pd.concat([measured, measured.iloc[[1]]], ignore_index=True)  # rope, seed 0, length 32 twice
    with pytest.raises(pd.errors.MergeError):
        errors.predicted_split(twice, ranking, law)


def token_ranked_rope_head(key_logits):
    """A rope head whose attention logit is ``key_logits[b]`` for a key holding token b, at every offset and for every
    query token: the query and key live in rotary block 1 only, whose frequency base^(-1/2) = 1e-15 turns no key
    by any visible angle (cos(31e-15) = 1 in float64)."""
    from lengthgen.models.head import AttentionHead, HeadConfig
    model = AttentionHead(HeadConfig(VOCAB, 4, "rope", trained_positions=64, rope_base=1e30))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        model.token_embedding.weight[:, 2] = torch.tensor(key_logits, dtype=torch.float32)
        model.key.weight[2, 2] = 1.0
        model.query.bias[2] = 2.0  # times the key's entry, over sqrt(d_model) = 2
    return model.eval()


# For target token t and query token a, with n - 2 uniform distractors (every key but the query's own and the target):
# - logits b (token b outranks every lower token): P_rank[a, t] = ((t + 1) / V)^(n - 2) if a <= t else 0 (the query's
#   own key outranks), so mean P_rank = sum_j j^(n - 1) / V^n;
# - logits [1, 0, 0, 0] (token 0 outranks the rest): P_rank[a, 0] = 1, and for t != 0: ((V - 1) / V)^(n - 2) if a != 0
#   else 0, so mean P_rank = (V + (V - 1)^2 ((V - 1) / V)^(n - 2)) / V^2.
def by_token_share(n):
    return 1 - sum(j ** (n - 1) for j in range(1, VOCAB + 1)) / VOCAB ** n


def token_zero_share(n):
    return 1 - (VOCAB + (VOCAB - 1) ** 2 * ((VOCAB - 1) / VOCAB) ** (n - 2)) / VOCAB ** 2


@pytest.mark.parametrize("n", [3, 8, 32])
def test_predicted_outranked_share_by_hand(n):
    assert errors.predicted_outranked_share(token_ranked_rope_head([0, 1, 2, 3]), 1, n) == pytest.approx(by_token_share(n))
    assert errors.predicted_outranked_share(token_ranked_rope_head([1, 0, 0, 0]), 2, n) == pytest.approx(
        token_zero_share(n))


def test_analyze_predicts_the_ranking_split_of_every_rope_head():
    """Two rope heads (offsets 1 and 2) and a learned one: the ranking account's rows are each rope head's own share
    at every evaluation length, worked out by hand above; the learned head has none."""
    from lengthgen.models.head import AttentionHead, HeadConfig
    lengths = [8, 32]
    eval_sets = {offset: {n: (tokens := torch.randint(VOCAB, (40, n), generator=torch.Generator().manual_seed(n)),
                              tokens[:, -1 - offset]) for n in lengths} for offset in (1, 2)}
    learned = AttentionHead(HeadConfig(VOCAB, 4, "learned", trained_positions=64))
    models = [({"pe": "rope", "offset": 1, "seed": 3}, token_ranked_rope_head([0, 1, 2, 3])),
              ({"pe": "learned", "offset": 1, "seed": 3}, learned),
              ({"pe": "rope", "offset": 2, "seed": 4}, token_ranked_rope_head([1, 0, 0, 0]))]
    law = pd.DataFrame([{"offset": offset, "seed": seed, "length": n, "predictor": "mean_field",
                         "predicted_accuracy": 0.5} for offset, seed in ((1, 3), (2, 4)) for n in lengths])
    settings = {"task": {"train_length_max": TRAIN_MAX, "eval_lengths": lengths}}
    tables = errors.analyze({"models": models, "eval_sets": eval_sets, "prop1_prediction": law}, settings)
    split = tables["errors_predicted_split"]
    ranking = split[split["predictor"] == "ranking"]
    got = {(row.offset, row.seed, row.length): row.predicted_ranking_share for row in ranking.itertuples()}
    assert got == pytest.approx({(1, 3, 8): by_token_share(8), (1, 3, 32): by_token_share(32),
                                 (2, 4, 8): token_zero_share(8), (2, 4, 32): token_zero_share(32)})
    assert (ranking["predicted_dilution_share"] == 0.0).all()
    assert len(split) == 8 and set(split["pe"]) == {"rope"}
    measured = tables["errors_by_length"]
    assert sorted(zip(measured["pe"], measured["offset"], measured["length"])) == [
        ("learned", 1, 8), ("learned", 1, 32), ("rope", 1, 8), ("rope", 1, 32), ("rope", 2, 8), ("rope", 2, 32)]


POOLED_COUNTS = ["n_sequences", "n_wrong", "n_ranking_error", "n_dilution_error", "n_winning_seen", "n_winning_unseen"]


def test_pooled_past_range_sums_one_encodings_cells_past_the_range_per_offset():
    """rope at K=1: two cells past the range summed, (10, 6, 2, 4, 1, 1) + (20, 8, 3, 5, 2, 1); its in-range cell and
    the learned cell are left out; K=2 is its one cell."""
    cells = [("rope", 1, True, (10, 6, 2, 4, 1, 1)), ("rope", 1, True, (20, 8, 3, 5, 2, 1)),
             ("rope", 1, False, (100, 50, 50, 0, 50, 0)), ("learned", 1, True, (100, 90, 0, 90, 0, 0)),
             ("rope", 2, True, (30, 9, 9, 0, 5, 4))]
    by_length = pd.DataFrame([{"pe": pe, "offset": offset, "past_training_range": past, **dict(zip(POOLED_COUNTS, counts))}
                              for pe, offset, past, counts in cells])
    pooled = pooled_past_range(by_length, "rope")
    assert pooled.index.tolist() == [1, 2] and list(pooled.columns) == POOLED_COUNTS
    assert pooled.loc[1].tolist() == [30, 14, 5, 9, 3, 2] and pooled.loc[2].tolist() == [30, 9, 9, 0, 5, 4]
    assert pooled_past_range(by_length, "learned").loc[1].tolist() == [100, 90, 0, 90, 0, 0]
