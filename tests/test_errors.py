"""The error split on heads whose cause of error is known by construction, its checks, section and figure."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import markdown_rows
from lengthgen.tables import io as tables
from lengthgen.checks.check import with_keys
from lengthgen.experiments.errors import analysis as errors
from lengthgen.models.head import AttentionHead, HeadConfig
from lengthgen.training.loop import init_head
from lengthgen.experiments.errors import figures as plots
from lengthgen.experiments.errors import section as prose
from lengthgen.tables.registry import schema_named

VOCAB = 4
D_MODEL = VOCAB + 1  # dimension 0 carries the position, 1..VOCAB the token
TRAIN_MAX = 8
SETTINGS = {"task": {"vocab_size": VOCAB, "train_length_min": 4, "train_length_max": TRAIN_MAX,
                     "eval_lengths": [8, 32]}}


def one_position_head(position: int, logit: float) -> AttentionHead:
    """A learned head whose logit is ``logit`` at key ``position`` and 0 at every other key, and whose
    output logits are the attention mass on each token: it answers the token with the most mass.

    Token v embeds as e_(1+v), position p as table[p, 0] e0; the key keeps dimension 0, the query is
    sqrt(D) e0 (so score_p = table[p, 0]), the value keeps dimensions 1..V and unembeds token v's.
    """
    model = AttentionHead(HeadConfig(VOCAB, D_MODEL, "learned", trained_positions=256))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        model.token_embedding.weight[:, 1:] = torch.eye(VOCAB)
        model.query.bias[0] = math.sqrt(D_MODEL)
        model.key.weight[0, 0] = 1.0
        model.value.weight[1:, 1:] = torch.eye(VOCAB)
        model.unembedding.weight[:, 1:] = torch.eye(VOCAB)
        model.encoding.table[position, 0] = logit
    return model.eval()


def eval_set(length: int, offset: int, n: int = 200, seed: int = 0) -> dict:
    tokens = torch.randint(VOCAB, (n, length), generator=torch.Generator().manual_seed(seed))
    return {length: (tokens, tokens[:, -1 - offset])}


def measured_row(model, length, offset):
    measured = errors.measure_errors(model, eval_set(length, offset), {"pe": "learned", "offset": offset, "seed": 0},
                                     TRAIN_MAX)
    return measured["errors_by_length"].iloc[0], measured["errors_winning_offset"]


def test_a_flat_softmax_on_the_target_makes_dilution_errors():
    length, offset = 64, 2
    # The target's logit is the highest, by 0.5: it holds 1.6 / 64.6 of the weight, and the answer is the
    # token with the most mass, mostly not the target's.
    row, histogram = measured_row(one_position_head(length - 1 - offset, 0.5), length, offset)
    assert row["n_wrong"] > row["n_sequences"] / 2
    assert row["n_dilution_error"] == row["n_wrong"] and row["n_ranking_error"] == 0
    assert row["n_outranked"] == 0 and row["dilution_share_of_wrong"] == 1.0
    assert math.isnan(row["median_winning_offset"]) and histogram["count"].sum() == 0


@pytest.mark.parametrize("winning_offset", [3, 20])
def test_a_distractor_with_the_highest_logit_makes_ranking_errors(winning_offset):
    length, offset = 32, 1
    # One key far above the rest takes nearly all the weight: the head answers its token.
    row, histogram = measured_row(one_position_head(length - 1 - winning_offset, 30.0), length, offset)
    tokens, targets = eval_set(length, offset)[length]
    wrong = int((tokens[:, -1 - winning_offset] != targets).sum())
    assert row["n_wrong"] == wrong == row["n_ranking_error"] and row["n_dilution_error"] == 0
    assert row["n_outranked"] == row["n_sequences"]  # right or wrong, the distractor outranks the target
    assert row["median_winning_offset"] == winning_offset
    seen = winning_offset < TRAIN_MAX
    assert (row["n_winning_seen"], row["n_winning_unseen"]) == ((wrong, 0) if seen else (0, wrong))
    hit = histogram[histogram["count"] > 0].iloc[0]
    assert len(histogram[histogram["count"] > 0]) == 1 and hit["count"] == wrong and hit["seen"] == seen
    assert hit["winning_offset_min"] <= winning_offset <= hit["winning_offset_max"]


def test_shares_add_up():
    row, _ = measured_row(one_position_head(40, 1.5), 64, 3)
    assert row["n_ranking_error"] + row["n_dilution_error"] == row["n_wrong"]
    assert row["ranking_share"] + row["dilution_share"] == pytest.approx(1 - row["accuracy"])
    assert row["ranking_share_of_wrong"] + row["dilution_share_of_wrong"] == pytest.approx(1.0)


def test_offset_bins_split_at_the_training_range():
    edges = errors.offset_bins(train_length_max=12, longest=100)
    assert edges.tolist() == [0, 1, 2, 4, 8, 12, 16, 32, 64, 128]


def head_runs():
    """(run, model) pairs: a rope-labelled head whose wrong answers are ranking errors won at offset 20, and a
    learned one whose wrong answers are dilution errors; both on sequences of length 32, offset 1."""
    ranking = one_position_head(32 - 1 - 20, 30.0)
    dilution = one_position_head(32 - 1 - 1, 0.5)
    return [({"pe": "rope", "offset": 1, "seed": 0}, ranking), ({"pe": "learned", "offset": 1, "seed": 0}, dilution)]


# The dilution law's predicted accuracy of the rope-labelled head at each length (prop1_prediction's rows).
LAW_ACCURACY = {8: 0.9, 32: 0.7}


def law_predictions() -> pd.DataFrame:
    return pd.DataFrame([{"offset": 1, "seed": 0, "length": length, "predictor": predictor, "predicted_accuracy": accuracy}
                         for length, accuracy in LAW_ACCURACY.items() for predictor in ("mean_field", "ranking")])


@pytest.fixture(scope="module")
def analyzed():
    inputs = {"models": head_runs(), "eval_sets": {1: {**eval_set(8, 1), **eval_set(32, 1)}},
              "prop1_prediction": law_predictions()}
    return errors.analyze(inputs, SETTINGS)


def test_the_dilution_law_predicts_its_error_as_dilution_errors(analyzed):
    split = analyzed["errors_predicted_split"]
    # The rope-labelled head has a learned table, so it has no kernel: only the law's rows, from prop1_prediction.
    assert set(split["predictor"]) == {"mean_field"} and set(split["pe"]) == {"rope"}
    measured = analyzed["errors_by_length"].query("pe == 'rope'").set_index("length")
    for row in split.itertuples():
        assert row.predicted_dilution_share == pytest.approx(1 - LAW_ACCURACY[row.length])
        assert row.predicted_ranking_share == 0.0
        assert row.measured_ranking_share == measured.loc[row.length, "ranking_share"]


def test_predicted_ranking_share_matches_random_sequences():
    """1 - mean P_rank is exact over uniform tokens: on random sequences it is the rate at which some key of
    another token than the target's has a higher logit than the target."""
    model = init_head(HeadConfig(VOCAB, 8, "rope", trained_positions=256), 5)
    with torch.no_grad():
        model.query.weight.mul_(4.0)
        model.key.weight.mul_(4.0)
    length, offset = 24, 2
    tokens = torch.randint(VOCAB, (4000, length), generator=torch.Generator().manual_seed(1))
    target = length - 1 - offset
    with torch.no_grad():
        scores, _ = model.eval().attention(tokens)
    other_token = tokens != tokens[:, target:target + 1]
    beaten = ((scores > scores[:, target:target + 1]) & other_token).any(-1).double().mean().item()
    predicted = errors.predicted_outranked_share(model, offset, length)
    assert 0.2 < predicted < 0.8  # a head where the question is open (0.71)
    assert predicted == pytest.approx(beaten, abs=0.03)


def test_tables_have_their_schemas(analyzed):
    assert set(analyzed) == set(errors.TABLES)
    for name, frame in analyzed.items():
        tables.to_arrow(frame, schema_named(name))  # raises if a column is missing or mistyped
    histogram = analyzed["errors_winning_offset"]
    by_run = histogram.groupby(["pe", "length"])["count"].sum()
    assert by_run.to_dict() == analyzed["errors_by_length"].set_index(["pe", "length"])["n_ranking_error"].to_dict()


def test_checks_measure_rope_past_the_range(analyzed):
    checks = with_keys(errors.checks(analyzed, SETTINGS), "errors", "errors").set_index("claim")
    dilution = checks.loc["rope's wrong answers past the training range are mostly dilution errors"]
    unseen = checks.loc["rope's ranking errors past the training range come from offsets unseen in training"]
    assert dilution["value"] == 0.0 and not dilution["holds"]  # every wrong answer is a ranking error
    assert unseen["value"] == 1.0 and unseen["holds"]  # won at offset 20 > TRAIN_MAX
    # The dilution share tests the paper's account; where the winners lie follows from equivariance and the fit.
    assert (dilution["kind"], unseen["kind"]) == ("evidence", "sanity")
    assert unseen["rule"].endswith("answers, every seed's pooled)")


def test_checks_need_lengths_past_the_range(analyzed):
    in_range = analyzed["errors_by_length"].query("length <= @TRAIN_MAX")
    with pytest.raises(ValueError, match="past the training range"):
        errors.errors_checks(in_range)


def test_section_splits_the_wrong_answers_by_cause(analyzed):
    checks = with_keys(errors.checks(analyzed, SETTINGS), "errors", "errors")
    text = prose.section(analyzed, checks, SETTINGS)
    rows = {(row[0], row[1]): row for row in markdown_rows(text, "|encoding|K|")}
    assert set(rows) == {(pe, "1") for pe in ("rope", "learned")}
    # rope's wrong answers are all ranking errors won at an unseen offset; the learned head makes none
    assert [rows[("rope", "1")][cell] for cell in (3, 4, 5)] == ["0.000", "1.000", "1.000"]
    assert rows[("learned", "1")][4:] == ["0.000", "-"]
    assert "This contradicts the account" in text


def by_length_frame() -> pd.DataFrame:
    """Two seeds of rope at K=1: 10 and 30 sequences per length, with known counts."""
    rows = []
    for seed, n, wrong, ranking in ((0, 10, 4, 3), (1, 30, 12, 9)):
        for length in (8, 32):
            rows.append({"pe": "rope", "offset": 1, "seed": seed, "length": length, "n_sequences": n,
                         "n_wrong": wrong, "n_ranking_error": ranking, "n_dilution_error": wrong - ranking,
                         "past_training_range": length > TRAIN_MAX})
    return pd.DataFrame(rows)


def test_stacked_shares_pool_over_seeds():
    shares = plots.stacked_shares(by_length_frame(), "rope", 1)
    assert shares.loc[32].to_dict() == pytest.approx({"correct": 24 / 40, "dilution error": 4 / 40,
                                                      "ranking error": 12 / 40})
    assert shares.sum(axis=1).to_numpy() == pytest.approx(1.0)


def test_winning_offset_shares_leave_out_offsets_past_a_length():
    histogram = pd.DataFrame({"pe": "rope", "offset": 1, "seed": 0, "length": [8, 8, 32, 32],
                              "winning_offset_min": [0, 8, 0, 8], "winning_offset_max": [7, 15, 7, 15],
                              "count": [2, 0, 1, 3]})
    bins = histogram[["winning_offset_min", "winning_offset_max"]].drop_duplicates()
    shares = plots.winning_offset_shares(histogram, "rope", 1, bins)
    assert shares[32].tolist() == [0.25, 0.75]
    assert shares[8].iloc[0] == 1.0 and np.isnan(shares[8].iloc[1])  # a length-8 sequence has no offset 8


def test_figure_shows_the_split(analyzed):
    figure = plots.draw(analyzed, SETTINGS)["error_split"]
    panels = {ax.get_title(): ax for ax in figure.axes}
    for pe in ("rope", "learned"):
        expected = plots.stacked_shares(analyzed["errors_by_length"], pe, 1)
        panel = panels[f"{pe}, K = 1: answers by cause"]
        bars = {container.get_label(): container.datavalues for container in panel.containers}
        for cause in plots.CAUSES:
            assert bars[cause] == pytest.approx(expected[cause].to_numpy())
    (law,) = [line for line in panels["rope, K = 1: answers by cause"].get_lines() if line.get_marker() == "_"]
    assert law.get_ydata() == pytest.approx([LAW_ACCURACY[8], LAW_ACCURACY[32]])
    (line,) = panels["rope, K = 1: winning keys of ranking errors"].get_lines()
    heights = line.get_ydata()
    assert np.nansum(heights) == pytest.approx(1.0) and heights[np.nanargmax(heights)] == 1.0
    assert len(figure.legends) == 1
