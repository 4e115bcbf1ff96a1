"""Evaluation (lengthgen/evaluation.py) against the task's definition, computed sequence by sequence (unit tier)."""

import ast
import math
import re

import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from conftest import REPO
from lengthgen import evaluation
from lengthgen.evaluation import accuracy_by_length, accuracy_by_position, in_chunks, label_runs
from lengthgen.models.head import HeadConfig
from lengthgen.runtime.seeding import generator
from lengthgen.task import make_eval_set
from lengthgen.training.loop import init_head

VOCAB, OFFSET = 5, 2


def random_head(pe: str, seed: int = 0):
    """A head with seeded random parameters, scaled so its attention is far from uniform over the keys."""
    model = init_head(HeadConfig(VOCAB, 8, pe, trained_positions=64), seed).double()
    with torch.no_grad():
        for linear in (model.query, model.key):
            linear.weight.mul_(4.0)
    return model.eval()


def eval_sets(lengths, n_samples=7):
    return {length: make_eval_set(3, OFFSET, length, n_samples, VOCAB) for length in lengths}


@torch.no_grad()
def one_by_one(model, tokens, positions=None):
    """Per sequence, alone: (whether the answer is its target, the weight on the target's position, the loss).
    The target sits ``OFFSET`` places before the query, the last position (lengthgen/task.py's task)."""
    correct, on_target, losses = [], [], []
    for index, sequence in enumerate(tokens):
        length = len(sequence)
        target_position = length - 1 - OFFSET
        target = sequence[target_position]
        position_ids = None if positions is None else positions[index:index + 1]
        logits, weights = model.predict(sequence[None], positions=position_ids)
        correct.append(float(logits[0].argmax() == target))
        on_target.append(float(weights[0, target_position]))
        losses.append(float(F.cross_entropy(logits, target[None])))
    return sum(correct) / len(tokens), sum(on_target) / len(tokens), sum(losses) / len(tokens)


@pytest.mark.parametrize("pe", ["rope", "learned"])
def test_accuracy_attention_and_loss_per_length_are_the_means_over_the_sequences(pe):
    model = random_head(pe)
    sets = eval_sets([12, 6, 9])
    table = accuracy_by_length(model, sets, OFFSET, seed=0)
    assert list(table.columns) == ["length", "accuracy", "target_attention", "loss"]
    assert table["length"].tolist() == [6, 9, 12]  # sorted
    for row in table.itertuples():
        accuracy, target_attention, loss = one_by_one(model, sets[row.length][0])
        assert row.accuracy == pytest.approx(accuracy, abs=1e-12)
        assert row.target_attention == pytest.approx(target_attention, abs=1e-9)
        assert row.loss == pytest.approx(loss, abs=1e-9)


def test_the_target_attention_reads_the_targets_column_and_not_a_neighbour():
    # A head whose weights differ from key to key: the column next to the target has another mean.
    model = random_head("rope", seed=1)
    tokens, _ = make_eval_set(3, OFFSET, 10, 50, VOCAB)
    _, weights = model.predict(tokens)
    target = 10 - 1 - OFFSET
    means = weights.mean(0)
    assert abs(means[target] - means[target - 1]) > 1e-3 and abs(means[target] - means[target + 1]) > 1e-3
    table = accuracy_by_length(model, {10: (tokens, tokens[:, target])}, OFFSET, seed=0)
    assert table["target_attention"].iloc[0] == pytest.approx(float(means[target]), abs=1e-9)


def test_results_do_not_depend_on_how_the_sequences_are_chunked(monkeypatch):
    model = random_head("rope")
    sets = eval_sets([6, 9], n_samples=11)
    whole = accuracy_by_length(model, sets, OFFSET, seed=0)
    monkeypatch.setattr(evaluation, "TOKENS_PER_BATCH", 20)  # 3 sequences of 6, 2 of 9 per pass
    chunked = accuracy_by_length(model, sets, OFFSET, seed=0)
    pd.testing.assert_frame_equal(whole, chunked, rtol=1e-12, atol=1e-12)
    monkeypatch.setattr(evaluation, "TOKENS_PER_BATCH", 1)  # longer than the budget: one sequence per pass
    pd.testing.assert_frame_equal(whole, accuracy_by_length(model, sets, OFFSET, seed=0), rtol=1e-12, atol=1e-12)


def test_drawn_positions_come_from_the_generator_of_seed_offset_and_length():
    model = init_head(HeadConfig(VOCAB, 8, "randomized_rope", trained_positions=64), 0).double().eval()
    sets = eval_sets([6, 9], n_samples=5)
    table = accuracy_by_length(model, sets, OFFSET, seed=4)
    for row in table.itertuples():
        tokens = sets[row.length][0]
        positions = model.encoding.sample_positions(len(tokens), row.length,
                                                    generator("eval_positions", 4, OFFSET, row.length))
        accuracy, target_attention, loss = one_by_one(model, tokens, positions)
        assert (row.accuracy, row.target_attention, row.loss) == pytest.approx((accuracy, target_attention, loss),
                                                                              abs=1e-9)
    assert not table.equals(accuracy_by_length(model, sets, OFFSET, seed=5))  # other draws


class CountingHead(torch.nn.Module):
    """A head that counts how often it builds its token tables."""

    def __init__(self, head):
        super().__init__()
        self.head, self.builds = head, []

    def token_tables(self, length):
        self.builds.append(length)
        return self.head.token_tables(length)


@pytest.mark.parametrize("budget, sizes", [(20, [3, 3, 1]), (18, [3, 3, 1]), (6, [1] * 7), (1, [1] * 7),
                                           (10**6, [7])])
def test_chunks_hold_every_sequence_once_in_order_with_its_target_and_positions(monkeypatch, budget, sizes):
    monkeypatch.setattr(evaluation, "TOKENS_PER_BATCH", budget)  # sequences of 6 tokens: budget // 6 per chunk
    tokens, targets = make_eval_set(3, OFFSET, 6, 7, VOCAB)
    positions = torch.arange(7 * 6).view(7, 6)
    chunks = list(in_chunks(random_head("rope"), tokens, targets, positions))
    assert [len(chunk.tokens) for chunk in chunks] == sizes
    assert torch.equal(torch.cat([chunk.tokens for chunk in chunks]), tokens)
    assert torch.equal(torch.cat([chunk.targets for chunk in chunks]), targets)
    assert torch.equal(torch.cat([chunk.positions for chunk in chunks]), positions)


def test_the_token_tables_are_built_once_for_every_chunk_of_a_length(monkeypatch):
    monkeypatch.setattr(evaluation, "TOKENS_PER_BATCH", 12)  # 2 sequences of 6 per chunk: 4 chunks
    head = random_head("learned")
    counting = CountingHead(head)
    tokens, _ = make_eval_set(3, OFFSET, 6, 7, VOCAB)
    chunks = list(in_chunks(counting, tokens))
    assert counting.builds == [6] and len(chunks) == 4
    assert all(chunk.tables is chunks[0].tables and chunk.targets is None and chunk.positions is None
               for chunk in chunks)
    for got, expected in zip(chunks[0].tables, head.token_tables(6)):
        assert torch.equal(got, expected)
    # Position ids per sequence: the head reads no tables, so none are built.
    counting = CountingHead(head)
    assert all(chunk.tables is None for chunk in in_chunks(counting, tokens, positions=torch.zeros_like(tokens)))
    assert counting.builds == []


@pytest.mark.parametrize("pe", ["rope", "learned"])
def test_a_head_read_in_chunks_gives_the_bits_of_one_pass(monkeypatch, pe):
    monkeypatch.setattr(evaluation, "TOKENS_PER_BATCH", 20)
    model = random_head(pe)
    tokens, _ = make_eval_set(3, OFFSET, 9, 11, VOCAB)
    with torch.no_grad():
        logits, weights = model.predict(tokens)
        pieces = [model.predict(chunk.tokens, tables=chunk.tables) for chunk in in_chunks(model, tokens)]
    assert torch.equal(torch.cat([piece[0] for piece in pieces]), logits)
    assert torch.equal(torch.cat([piece[1] for piece in pieces]), weights)


def token_table_builds(path) -> set[str]:
    """Where the module at ``path`` calls a ``token_tables`` method: the enclosing functions' names, or
    ``<module>`` for a call at the top level (a script's). Under mutation testing a function's copies
    (``x_<name>__mutmut_<n>``) are that function."""
    enclosing = {}
    tree = ast.parse(path.read_text())
    for function in ast.walk(tree):  # outer functions first, so an inner one names its own calls
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = re.sub(r"^x_(.+)__mutmut_\w+$", r"\1", function.name)
            enclosing.update({id(node): name for node in ast.walk(function)})
    return {enclosing.get(id(node), "<module>") for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "token_tables"}


def test_only_in_chunks_builds_a_heads_token_tables_outside_the_models():
    """One home for reading an evaluation set in chunks: a measurement that builds the token tables itself (and
    so writes its own loop over chunks) fails here and should call ``evaluation.in_chunks``. The models build
    their own tables when they are given none."""
    sources = [*(REPO / "lengthgen").rglob("*.py"), *(REPO / "workflow" / "scripts").rglob("*.py")]
    builds = {str(path.relative_to(REPO)): token_table_builds(path) for path in sources
              if (REPO / "lengthgen" / "models") not in path.parents}
    assert {path: functions for path, functions in builds.items() if functions} == {
        "lengthgen/evaluation.py": {"in_chunks"}}


class Copier(torch.nn.Module):
    """A model that answers token t - OFFSET at every position t, with logit 3 for that token and 0 else; at the
    positions listed in ``wrong`` it answers token (target + 1) mod V instead."""

    def __init__(self, wrong=()):
        super().__init__()
        self.dummy = torch.nn.Parameter(torch.zeros(1))
        self.wrong = set(wrong)

    def forward(self, tokens):
        batch, length = tokens.shape
        answer = torch.zeros(batch, length, dtype=torch.long)
        answer[:, OFFSET:] = tokens[:, :length - OFFSET]
        for position in self.wrong:
            answer[:, position] = (answer[:, position] + 1) % VOCAB
        return 3.0 * F.one_hot(answer, VOCAB).double(), None


def test_accuracy_and_loss_by_position_from_the_full_sequence_task():
    sets = eval_sets([6, 8], n_samples=9)
    table = accuracy_by_position(Copier(wrong={3}), sets, OFFSET, n_samples=7, tokens_per_batch=16)
    assert table["length"].tolist() == [6] * 4 + [8] * 6
    assert table["position"].tolist() == [2, 3, 4, 5, 2, 3, 4, 5, 6, 7]  # positions t >= offset
    right = math.log1p((VOCAB - 1) * math.exp(-3.0))  # -log softmax of the logit 3 among V - 1 zeros
    wrong = 3.0 + right
    expected_accuracy = [0.0 if position == 3 else 1.0 for position in table["position"]]
    expected_loss = [wrong if position == 3 else right for position in table["position"]]
    assert table["accuracy"].tolist() == expected_accuracy
    assert table["loss"].to_numpy() == pytest.approx(expected_loss, abs=1e-6)  # logits in float32
    # Only the first n_samples sequences count: a model wrong on the later ones only is perfect here.
    assert accuracy_by_position(Copier(), sets, OFFSET, n_samples=9)["accuracy"].eq(1.0).all()


def test_label_runs_names_the_run_and_marks_lengths_inside_the_training_range_inclusive():
    evaluation_rows = pd.DataFrame({"length": [3, 4, 6, 8, 9], "accuracy": 0.5})
    table = label_runs(evaluation_rows, "base", 4, 8, pe="rope", offset=2, seed=7)
    assert table["in_training_range"].tolist() == [False, True, True, True, False]
    assert (table["experiment"].eq("base") & table["pe"].eq("rope") & table["offset"].eq(2)
            & table["seed"].eq(7)).all()
    assert table["accuracy"].tolist() == [0.5] * 5
