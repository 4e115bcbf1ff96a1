"""Whether a model fits its range, pinned to values worked out by hand.

``fit_record``'s two rules at their thresholds and one step either side; ``range_fit`` on stub models that
answer right at chosen lengths or positions only, so the held-out accuracy is a count made here (every
training length from train_length_min to train_length_max, both included), and the final loss is the mean
of a hand-written curve's last window."""

import math
from types import SimpleNamespace

import pandas as pd
import pytest
import torch

from lengthgen.task import full_sequence_targets, retrieval_targets, TaskConfig
from lengthgen.training import HELDOUT_PER_LENGTH, range_fit
from lengthgen.training_record import FIT_ACCURACY, SETTLED_LOSS, fit_record

TASK = TaskConfig(vocab_size=5, offset=2, train_length_min=4, train_length_max=9)
SETTLED_CURVE = pd.DataFrame({"loss": [5.0, 5.0, 0.3, 0.1, 0.05, 0.05]})  # last 3: mean 0.2 / 3


def below(value):
    return math.nextafter(value, -math.inf)


def above(value):
    return math.nextafter(value, math.inf)


@pytest.mark.parametrize("accuracy, fitted", [(FIT_ACCURACY, True), (above(FIT_ACCURACY), True),
                                              (below(FIT_ACCURACY), False), (1.0, True), (0.0, False)])
def test_fit_rule_at_its_threshold(accuracy, fitted):
    record = fit_record(accuracy, 0.0)
    assert record["fitted"] is fitted and record["converged"] is fitted and record["settled"]
    assert record["heldout_accuracy"] == accuracy


@pytest.mark.parametrize("loss, settled", [(SETTLED_LOSS, True), (below(SETTLED_LOSS), True),
                                           (above(SETTLED_LOSS), False), (0.0, True), (math.nan, False)])
def test_settled_rule_at_its_threshold(loss, settled):
    record = fit_record(1.0, loss)
    assert record["settled"] is settled and record["converged"] is settled and record["fitted"]
    assert record["final_loss"] == loss or math.isnan(loss)


def test_converged_needs_both_rules():
    assert not fit_record(below(FIT_ACCURACY), SETTLED_LOSS)["converged"]
    assert not fit_record(FIT_ACCURACY, above(SETTLED_LOSS))["converged"]
    assert fit_record(FIT_ACCURACY, SETTLED_LOSS)["converged"]


class StubModel(torch.nn.Module):
    """Answers the target at the lengths of ``right_lengths`` (at the last position too unless
    ``wrong_last``), and a wrong token elsewhere; records the tokens of every call.

    With ``needs_positions`` its encoding draws position ids per sequence, and it answers right only when
    they reach it."""

    def __init__(self, targets, right_lengths, wrong_last=False, needs_positions=False):
        super().__init__()
        self.dummy = torch.nn.Parameter(torch.zeros(1))
        self.targets, self.right_lengths, self.wrong_last = targets, right_lengths, wrong_last
        self.needs_positions, self.calls = needs_positions, []
        self.encoding = SimpleNamespace(sample_positions=self.sample_positions)

    def sample_positions(self, batch, length, rng):
        return torch.arange(length).repeat(batch, 1) if self.needs_positions else None

    def forward(self, tokens, positions=None):
        batch, length = tokens.shape
        self.calls.append(tokens)
        answers = self.targets(tokens, TASK.offset).clamp(min=0)
        right = length in self.right_lengths and (positions is not None or not self.needs_positions)
        answers = answers if right else (answers + 1) % TASK.vocab_size
        if self.wrong_last:
            answers[..., -1] = (answers[..., -1] + 1) % TASK.vocab_size
        return torch.nn.functional.one_hot(answers, TASK.vocab_size).float(), None


def test_every_training_length_is_held_out_once():
    model = StubModel(retrieval_targets, right_lengths=range(4, 10))
    record = range_fit(model, TASK, retrieval_targets, 0, SETTLED_CURVE, 3)
    assert [tuple(tokens.shape) for tokens in model.calls] == [(HELDOUT_PER_LENGTH, n) for n in range(4, 10)]  # 4..9, both ends
    assert record["heldout_accuracy"] == 1.0 and record["converged"]


@pytest.mark.parametrize("right_lengths, accuracy", [
    (range(5, 9), 4 / 6),  # wrong at both ends, 4 and 9 = train_length_max
    (range(4, 9), 5 / 6),  # wrong at train_length_max only
    (range(5, 10), 5 / 6),  # wrong at train_length_min only
    ([9], 1 / 6),
    ([10], 0.0),  # past the range: never held out
])
def test_heldout_accuracy_counts_each_length_by_hand(right_lengths, accuracy):
    record = range_fit(StubModel(retrieval_targets, right_lengths), TASK, retrieval_targets, 0, SETTLED_CURVE, 3)
    assert record["heldout_accuracy"] == pytest.approx(accuracy)
    assert record["fitted"] is (accuracy >= FIT_ACCURACY)


def test_full_sequence_accuracy_counts_only_positions_with_a_target():
    # length n has n - 2 positions with a target (t >= K = 2); wrong at the last: n - 3 right of them
    model = StubModel(full_sequence_targets, right_lengths=range(4, 10), wrong_last=True)
    record = range_fit(model, TASK, full_sequence_targets, 0, SETTLED_CURVE, 3)
    with_target = sum(length - 2 for length in range(4, 10))  # 27
    assert record["heldout_accuracy"] == pytest.approx((with_target - 6) / with_target)  # 21 / 27
    everywhere = range_fit(StubModel(full_sequence_targets, range(4, 10)), TASK, full_sequence_targets, 0,
                           SETTLED_CURVE, 3)
    assert everywhere["heldout_accuracy"] == 1.0


def test_drawn_positions_reach_the_model():
    model = StubModel(retrieval_targets, range(4, 10), needs_positions=True)
    assert range_fit(model, TASK, retrieval_targets, 0, SETTLED_CURVE, 3)["heldout_accuracy"] == 1.0


@pytest.mark.parametrize("window, loss, settled", [(3, 0.2 / 3, True), (4, 0.5 / 4, False), (1, 0.05, True),
                                                   (6, 10.5 / 6, False)])
def test_final_loss_is_the_mean_of_the_last_window(window, loss, settled):
    record = range_fit(StubModel(retrieval_targets, range(4, 10)), TASK, retrieval_targets, 0, SETTLED_CURVE, window)
    assert record["final_loss"] == pytest.approx(loss) and record["settled"] is settled
    assert record["converged"] is settled


def test_the_same_seed_holds_out_the_same_sequences_and_another_seed_others():
    def heldout(seed):
        model = StubModel(retrieval_targets, range(4, 10))
        range_fit(model, TASK, retrieval_targets, seed, SETTLED_CURVE, 3)
        return torch.cat([tokens.flatten() for tokens in model.calls])

    assert torch.equal(heldout(0), heldout(0)) and not torch.equal(heldout(0), heldout(1))


def test_training_accuracy_counts_only_positions_with_a_target():
    """The curve's per-step accuracy (``training.accuracy``): right answers over the positions with a target."""
    from lengthgen.task import IGNORE_INDEX
    from lengthgen.training import accuracy
    answers = torch.tensor([[0, 1, 2], [2, 2, 0]])
    logits = torch.nn.functional.one_hot(answers, 4).float()  # (2, 3, V = 4): argmax is ``answers``
    targets = torch.tensor([[0, IGNORE_INDEX, 1], [2, IGNORE_INDEX, IGNORE_INDEX]])
    # three positions have a target: (0, 0) right, (0, 2) wrong, (1, 0) right
    assert accuracy(logits, targets).item() == pytest.approx(2 / 3)
    assert accuracy(logits[0], targets[0]).item() == pytest.approx(1 / 2)  # the single head's (B, V) logits too


def test_divergence_is_a_mean_loss_above_the_factor_not_at_it():
    """A window whose mean loss is exactly DIVERGED_LOSS_FACTOR x ln V has not diverged ("above" it has)."""
    from lengthgen.training import DIVERGED_LOSS_FACTOR, TrainingDiverged, check_not_diverged
    uniform = math.log(8)
    at = DIVERGED_LOSS_FACTOR * uniform
    check_not_diverged(torch.full((4,), at, dtype=torch.float64), 1, "pe=rope seed=0", uniform)  # the mean is exact
    # the message says what to do about it
    with pytest.raises(TrainingDiverged, match=r"mean loss .*the loss of a uniform guess; lower train\.lr \(or "
                                               r"linear\.lr\) and rerun$"):
        check_not_diverged(torch.full((4,), math.nextafter(at, math.inf), dtype=torch.float64), 1, "pe=rope seed=0",
                           uniform)


def test_the_schedule_by_hand():
    """Warmup from 1/25 of the peak, then a half cosine from the peak to 1/25/1e4 of it at the last step."""
    from lengthgen.training import TrainConfig, learning_rate_factor
    initial, final = 1 / 25, 1 / 25 / 1e4
    train = TrainConfig(steps=12, batch_size=1, lr=1.0, warmup_fraction=1 / 6)  # warmup: steps 0 and 1
    factors = [learning_rate_factor(train, step) for step in range(12)]
    assert factors[:2] == pytest.approx([initial, initial + (1 - initial) / 2])
    # the cosine over steps 2..11: progress (step - 2) / 9
    cosine = [final + (1 - final) * (1 + math.cos(math.pi * (step - 2) / 9)) / 2 for step in range(2, 12)]
    assert factors[2:] == pytest.approx(cosine)
    assert factors[2] == 1.0 and factors[-1] == pytest.approx(final)
    # two steps without warmup: the peak, then the final rate at the last step
    two = TrainConfig(steps=2, batch_size=1, lr=1.0, warmup_fraction=0.0)
    assert [learning_rate_factor(two, step) for step in range(2)] == pytest.approx([1.0, final])


def test_held_out_sequences_are_not_the_training_batches():
    """Held-out sequences come from generators of their own: at every length they differ from what the training
    loop's generator of the same seed and offset draws (``fit``'s ``generator("train", seed, offset)``)."""
    from lengthgen.seeding import generator
    from lengthgen.task import sample_sequences
    model = StubModel(retrieval_targets, range(4, 10))
    range_fit(model, TASK, retrieval_targets, 0, SETTLED_CURVE, 3)
    for tokens in model.calls:
        length = tokens.shape[1]
        training = sample_sequences(generator("train", 0, TASK.offset), HELDOUT_PER_LENGTH, length, TASK.vocab_size)
        assert not torch.equal(tokens, training)


def test_a_diverged_head_is_named_with_its_options_on_the_default_device():
    """A head whose loss blows up (lr 1e12) is named in the error by its encoding and every option it does not
    leave at its default, then its seed and offset; ``train_heads`` and ``train_head`` default to the "auto" device."""
    from lengthgen.model import HeadConfig
    from lengthgen.training import TrainConfig, TrainingDiverged, train_head, train_heads
    head = HeadConfig(5, 4, "rope", trained_positions=9, attention="linear", logit_scale="log_length",
                      reference_length=9, init="normal@std=0.5")
    train = TrainConfig(steps=4, batch_size=4, lr=1e12, log_every=2)
    name = "training run pe=rope attention=linear logit_scale=log_length init=normal@std=0.5 seed=3 offset=2 diverged"
    with pytest.raises(TrainingDiverged, match=f"^{name}"):
        train_heads(head, TASK, train, [3])
    plain = HeadConfig(5, 4, "rope", trained_positions=9)
    model, curve = train_head(plain, TASK, TrainConfig(steps=2, batch_size=4, lr=1e-3, log_every=1), 3)
    assert len(curve) == 2 and curve["loss"].notna().all()


def test_a_seeded_head_carries_its_seed_into_its_learned_table():
    """``init_head(config, seed)`` sets ``config.init_seed`` to the seed, which draws the learned table's rows
    (row p from generator("learned_row", seed, p), times learned_init_std 0.02)."""
    from lengthgen.model import HeadConfig
    from lengthgen.seeding import generator
    from lengthgen.training import init_head
    model = init_head(HeadConfig(5, 4, "learned", trained_positions=3), 7)
    assert model.config.init_seed == 7
    rows = torch.stack([torch.randn(4, generator=generator("learned_row", 7, p)) * 0.02 for p in range(3)])
    torch.testing.assert_close(model.encoding.table.detach(), rows)
