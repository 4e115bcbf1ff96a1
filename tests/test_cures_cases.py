"""The hard-attention limit pinned to answers worked out by hand.

A stub head gives each sequence chosen attention logits, so the key hard attention (the argmax) picks is
known, and chosen readout tables (token outputs, position outputs, unembedding bias) make that key's answer
known too: the bias turns token 2's readout into 1, and the key at position 0 reads as 3 whatever its token.
The limit's use, the recovery table's hard-attention row and the tolerance it sets, is pinned on
hand-written tables."""

from types import SimpleNamespace

import pandas as pd
import pytest
import torch

from lengthgen.checks import seed_sums
from lengthgen import evaluation
from lengthgen.experiments.cures import analysis as cures
from lengthgen.science.prediction_errors import PREDICTORS
from lengthgen.models.head import TokenTables
from lengthgen.experiments.cures.thresholds import CURES_CLAIM_PREDICTOR

VOCAB, LENGTH = 4, 5
# Each row: (tokens, attention logits over positions 0..4, target); the answer of the picked key by hand.
ROWS = [
    ([1, 0, 2, 3, 1], [0, 0, 0, 5, 1], 3),  # picks position 3, token 3: reads 3, right
    ([0, 2, 1, 1, 3], [0, 1, 4, 0, 0], 1),  # picks position 2, token 1 (not the target's key, same token): right
    ([3, 1, 0, 2, 0], [0, 0, 0, 6, 0], 2),  # picks token 2, which the bias reads as 1: wrong
    ([2, 3, 1, 0, 2], [7, 0, 0, 0, 0], 0),  # picks position 0: reads 3: wrong
    ([1, 2, 0, 3, 0], [7, 0, 0, 0, 0], 3),  # picks position 0 (token 1): reads 3, right only by the position term
    ([2, 0, 3, 0, 1], [0, 5, 5, 0, 0], 0),  # tie of positions 1 (token 0) and 2 (token 3): the first, right
    ([0, 0, 0, 2, 1], [0, 0, 0, 0, 3], 2),  # picks the query itself, token 1: wrong
]
RIGHT = 4 / 7


class StubHead(torch.nn.Module):
    def __init__(self, with_positions=True):
        super().__init__()
        self.dummy = torch.nn.Parameter(torch.zeros(1))  # where the head's device is read
        self.by_row = {tuple(tokens): torch.tensor(scores, dtype=torch.float32) for tokens, scores, _ in ROWS}
        position_outputs = torch.zeros(LENGTH, VOCAB)
        position_outputs[0, 3] = 4.0
        self.tables = TokenTables(logits=None, token_outputs=2 * torch.eye(VOCAB),
                                  position_outputs=position_outputs if with_positions else None)
        self.unembedding = SimpleNamespace(bias=torch.tensor([0.0, 1.0, -1.5, 0.0]))

    def token_tables(self, length):
        assert length == LENGTH
        return self.tables

    def attention(self, tokens, tables=None):
        assert tables is self.tables  # the hard readout's tables, not another length's
        scores = torch.stack([self.by_row[tuple(row.tolist())] for row in tokens])
        return scores, scores.softmax(-1)


def eval_set():
    return torch.tensor([row[0] for row in ROWS]), torch.tensor([row[2] for row in ROWS])


def test_readouts_by_hand():
    """What the stub's tables answer for a key of each token (the hand values the rows above rely on)."""
    head = StubHead()
    readout = head.tables.token_outputs + head.unembedding.bias
    assert readout.argmax(-1).tolist() == [0, 1, 1, 3]
    assert (readout + head.tables.position_outputs[0]).argmax(-1).tolist() == [3, 3, 3, 3]


def test_hard_attention_accuracy_by_hand():
    assert cures.hard_attention_accuracy(StubHead(), *eval_set()) == pytest.approx(RIGHT)


def test_without_position_outputs_the_key_reads_its_token_alone():
    # row 3 now reads token 2 as 1 (still wrong), row 4 reads token 1 as 1 (now wrong)
    assert cures.hard_attention_accuracy(StubHead(with_positions=False), *eval_set()) == pytest.approx(3 / 7)


@pytest.mark.parametrize("batch", [1, 2, 3, 7])
def test_chunks_keep_each_sequence_with_its_target(monkeypatch, batch):
    monkeypatch.setattr(evaluation, "TOKENS_PER_BATCH", batch * LENGTH)
    assert cures.hard_attention_accuracy(StubHead(), *eval_set()) == pytest.approx(RIGHT)


def by_length_rows():
    """rope at lengths 8 (in range) and 16, 32 (past it), seeds 0 and 1; the learned head apart.

    Past the range, uncured rope scores 0.5 and 0.2 (at both lengths) and its hard limit 0.9 and 0.6;
    log_length 0.7 and 0.5. In range everything is 0 with a hard limit of 1, so a filter that lets it in
    shows."""
    rows = []
    for seed, (uncured, hard, log_length) in enumerate([(0.5, 0.9, 0.7), (0.2, 0.6, 0.5)]):
        for length in (8, 16, 32):
            past = length > 8
            for cure in cures.CURES:
                accuracy = {"none": uncured, "log_length": log_length}.get(cure, uncured) if past else 0.0
                rows.append({"head": "rope", "cure": cure, "offset": 1, "seed": seed, "length": length,
                             "accuracy": accuracy, "hard_accuracy": hard if past else 1.0})
                rows.append({"head": "learned", "cure": cure, "offset": 1, "seed": seed, "length": length,
                             "accuracy": 0.0, "hard_accuracy": 1.0})
    return pd.DataFrame(rows)


def predictions_of(by_length):
    rope = by_length[by_length["head"] == "rope"]
    return pd.concat([rope.assign(predictor=name, predicted_accuracy=rope["accuracy"],
                                  predicted_attention=0.0) for name in PREDICTORS], ignore_index=True)


def test_recovery_table_limit_by_hand():
    by_length = by_length_rows()
    recovery = cures.recovery_table(by_length, predictions_of(by_length), 8).set_index(["cure", "source"])
    fraction = recovery["recovered_fraction"]
    lost = (0.5 + 0.8) / 2  # mean of 1 - uncured over the past-range runs
    assert fraction["hard_attention", "measured"] == pytest.approx(0.4 / lost)  # both seeds gain 0.4
    assert fraction["log_length", "measured"] == pytest.approx((0.2 + 0.3) / 2 / lost)
    assert fraction["yarn", "measured"] == pytest.approx(0.0)
    assert fraction["log_length", CURES_CLAIM_PREDICTOR] == pytest.approx((0.2 + 0.3) / 2 / lost)


def test_nothing_lost_leaves_the_limit_nan():
    by_length = by_length_rows().assign(accuracy=1.0)
    recovery = cures.recovery_table(by_length, predictions_of(by_length), 8).set_index(["cure", "source"])
    assert recovery["recovered_fraction"].isna().all()


def recovery(limit, measured, predicted):
    """``cures.recoveries`` as a one-seed run gives them: hard-attention ``limit``; per sharpening cure its
    measured and claim-predicted fractions; every other predictor exact (so only the claim predictor can fail)."""
    def fraction(value):
        return seed_sums.mean(pd.DataFrame({"seed": [0], "fraction": [value]}), "fraction")

    fractions = {("hard_attention", "measured"): fraction(limit)}
    for cure in cures.SHARPENING:
        fractions[cure, "measured"] = fraction(measured[cure])
        fractions.update({(cure, name): fraction(predicted[cure] if name == CURES_CLAIM_PREDICTOR else measured[cure])
                          for name in PREDICTORS})
    return fractions


def test_the_limit_sets_the_tolerance_of_the_recovery_prediction():
    # limit 0.5: tolerance 0.25 (exact in binary). log_length is off by exactly 0.25, yarn by 0.375.
    rows = cures.recovery_prediction_checks(recovery(0.5, {"log_length": 0.75, "yarn": 0.75},
                                                     {"log_length": 0.5, "yarn": 0.375}))
    assert [row["value"] for row in rows] == [0.25, 0.375]
    assert [row["threshold"] for row in rows] == [0.25, 0.25]
    assert [row["holds"] for row in rows] == [True, False]
    assert rows[0]["rule"] == "<= 0.5 x the hard-attention limit (0.5) = 0.25"
    # a wider limit lets yarn's error in; a negative one leaves no tolerance even for an exact prediction
    assert all(row["holds"] for row in cures.recovery_prediction_checks(
        recovery(0.75, {"log_length": 0.75, "yarn": 0.75}, {"log_length": 0.5, "yarn": 0.375})))
    assert not any(row["holds"] for row in cures.recovery_prediction_checks(
        recovery(-0.1, {"log_length": 0.75, "yarn": 0.75}, {"log_length": 0.75, "yarn": 0.75})))


def test_a_prediction_given_twice_is_refused():
    """Measured and predicted rows pair one to one: a run predicted twice would count twice in every MAE."""
    by_length = by_length_rows()
    predictions = predictions_of(by_length)
    assert len(cures.comparison(by_length, predictions, CURES_CLAIM_PREDICTOR)) == len(by_length[by_length["head"] == "rope"])
    twice = pd.concat([predictions, predictions.iloc[[0]]], ignore_index=True)
    with pytest.raises(pd.errors.MergeError):
        cures.comparison(by_length, twice, twice["predictor"].iloc[0])


def test_paired_runs_by_hand_and_without_a_pair():
    """The trained log-length head's mean accuracy past the range minus rope's, per run both have; the same columns
    when no run has both."""
    by_length = by_length_rows()
    trained = by_length[(by_length["head"] == "rope") & (by_length["cure"] == "none")].assign(head=cures.TRAINED_HEAD)
    trained = trained.assign(accuracy=trained["accuracy"] + [0.1, 0.2, 0.3, 0.0, 0.0, 0.3])  # seed 0: 8, 16, 32
    paired = cures.paired_runs(pd.concat([by_length, trained], ignore_index=True), 8)
    assert paired.to_dict("list") == {"offset": [1, 1], "seed": [0, 1], "difference": pytest.approx([0.25, 0.15])}
    alone = cures.paired_runs(by_length, 8)
    assert alone.empty and list(alone.columns) == list(paired.columns)
