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
from lengthgen.training.loop import HELDOUT_PER_LENGTH, range_fit
from lengthgen.training.range_fit import FIT_ACCURACY, SETTLED_LOSS, fit_record

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


def test_training_accuracy_counts_only_positions_with_a_target_and_each_seeds_own():
    """The curve's per-step accuracy (``training.seed_accuracies``): per seed, right answers over its positions with
    a target."""
    from lengthgen.task import IGNORE_INDEX
    from lengthgen.training.loop import seed_accuracies
    answers = torch.tensor([[[0, 1, 2], [2, 2, 0]], [[1, 1, 1], [3, 3, 3]]])
    logits = torch.nn.functional.one_hot(answers, 4).float()  # (S = 2, B = 2, T = 3, V = 4): argmax is ``answers``
    targets = torch.tensor([[[0, IGNORE_INDEX, 1], [2, IGNORE_INDEX, IGNORE_INDEX]],
                            [[1, 1, 0], [0, IGNORE_INDEX, 3]]])
    # seed 0: three positions have a target, (0, 0) and (1, 0) right, (0, 2) wrong; seed 1: three of five right
    assert seed_accuracies(logits, targets).tolist() == pytest.approx([2 / 3, 3 / 5])
    # the single head's (S, B, V) logits, one target per sequence
    assert seed_accuracies(logits[:, :, 0], targets[:, :, 0]).tolist() == pytest.approx([1.0, 1 / 2])


def test_divergence_is_a_mean_loss_above_the_factor_not_at_it():
    """A window whose mean loss is exactly DIVERGED_LOSS_FACTOR x ln V has not diverged ("above" it has)."""
    from lengthgen.training.loop import DIVERGED_LOSS_FACTOR, TrainingDiverged, check_not_diverged
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
    from lengthgen.training.loop import TrainConfig, learning_rate_factor
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
    from lengthgen.runtime.seeding import generator
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
    from lengthgen.models.head import HeadConfig
    from lengthgen.training.loop import TrainConfig, TrainingDiverged, train_head, train_heads
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
    (row p from generator("learned_row", seed, p), times the config's learned_init_std)."""
    from lengthgen.models.head import HeadConfig
    from lengthgen.runtime.seeding import generator
    from lengthgen.training.loop import init_head
    model = init_head(HeadConfig(5, 4, "learned", trained_positions=3), 7)
    assert model.config.init_seed == 7
    std = model.config.learned_init_std
    rows = torch.stack([torch.randn(4, generator=generator("learned_row", 7, p)) * std for p in range(3)])
    torch.testing.assert_close(model.encoding.table.detach(), rows)


# --- Mutation testing (docs/mutation.md): ``fit``'s loop on a stub stack whose losses and answers are chosen ----------
#
# ``fit(..., stack=...)`` takes the models' stacked forward pass from ``stack``; the stub below records what the loop
# hands it (each seed's batch, targets and drawn positions) and returns per-seed losses chosen by hand, with a
# gradient of 1 on each seed's one parameter, and answers right at every position with a target except, for the
# second seed, the last one. So each curve's loss and accuracy, the rates the optimizer applies (Adam's first
# steps with a constant gradient of 1 move a weight by the rate: w = -sum of the rates), every window the
# divergence check reads and the range fit's final loss are known before the loop runs.

FIT_TASK = TaskConfig(vocab_size=5, offset=2, train_length_min=4, train_length_max=9)


class FitStub(torch.nn.Module):
    """One parameter; answers every position's target (what ``range_fit`` asks of it: held-out accuracy 1)."""

    def __init__(self, draws_positions=False):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))
        self.draws_positions, self.calls, self.moved_to = draws_positions, [], []
        self.encoding = SimpleNamespace(sample_positions=self.sample_positions)

    def to(self, device):
        self.moved_to.append(device)
        return super().to(device)

    def sample_positions(self, batch, length, rng):
        return torch.randint(1000, (batch, length), generator=rng) if self.draws_positions else None

    def forward(self, tokens, positions=None):
        self.calls.append(tokens)
        answers = full_sequence_targets(tokens, FIT_TASK.offset).clamp(min=0)
        return torch.nn.functional.one_hot(answers, FIT_TASK.vocab_size).float(), None


class StubStack:
    def __init__(self, models, losses):
        self.models, self.losses, self.calls, self.zeroed, self.written = models, losses, [], 0, False
        for model in models:
            model.w.grad = torch.zeros_like(model.w)

    def seed_parameters(self):
        return [model.w for model in self.models]

    def zero_grad(self):
        self.zeroed += 1
        for model in self.models:
            model.w.grad.zero_()

    def write_back(self):
        self.written = True

    def forward(self, tokens, targets, positions):
        step = len(self.calls)
        self.calls.append((tokens.clone(), targets.clone(), None if positions is None else positions.clone(),
                           torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")))
        loss = torch.stack([(model.w - model.w.detach()).sum() + self.losses[step][index]
                            for index, model in enumerate(self.models)])
        answers = targets.clamp(min=0).clone()
        answers[1:, :, -1] = (answers[1:, :, -1] + 1) % FIT_TASK.vocab_size  # seeds after the first: last one wrong
        return loss, torch.nn.functional.one_hot(answers, FIT_TASK.vocab_size).float()


def fit_with_stub(seeds, losses, train, draws_positions=False, run="pe=stub seed={seed} offset=2"):
    from lengthgen.task import full_sequence_targets
    from lengthgen.training.loop import fit
    stacks = []

    def stack(models):
        stacks.append(StubStack(models, losses))
        return stacks[-1]

    models = [FitStub(draws_positions) for _ in seeds]
    trained = fit(models, seeds, FIT_TASK, train, "cpu", full_sequence_targets, run, stack)
    return trained, stacks[0], models


def test_fit_trains_each_seed_on_its_own_batches_by_hand(caplog):
    """Two seeds, 6 steps, log_every 4: each step's length from the offset's generator, each seed's tokens from its
    own (seed, offset) generator and drawn positions from its own, the full-sequence targets of its tokens; each
    curve's loss the stub's, accuracy 1 for the first seed and (n - K - 1) / (n - K) for the second (its last
    position wrong), the rate train.lr x the schedule; the final loss the mean of the last log_every losses."""
    import logging
    from lengthgen.runtime.seeding import generator
    from lengthgen.task import full_sequence_targets, sample_sequences, training_length
    from lengthgen.training.loop import TrainConfig, learning_rate_factor
    losses = [[0.5, 0.25], [0.75, 1.5], [1.0, 0.5], [0.25, 0.125], [2.0, 1.0], [0.5, 0.75]]
    train = TrainConfig(steps=6, batch_size=3, lr=0.01, log_every=4, warmup_fraction=0.5)
    with caplog.at_level(logging.INFO, logger="lengthgen.training.loop"):
        trained, stack, models = fit_with_stub([7, 5], losses, train, draws_positions=True)

    length_rng = generator("train_lengths", 2)
    lengths = [training_length(length_rng, 4, 9) for _ in range(6)]
    data = {seed: generator("train", seed, 2) for seed in (7, 5)}
    drawn = {seed: generator("train_positions", seed, 2) for seed in (7, 5)}
    assert len(stack.calls) == 6 and stack.zeroed == 6 and stack.written
    for length, (tokens, targets, positions, autocast, _) in zip(lengths, stack.calls):
        expected = torch.stack([sample_sequences(data[seed], 3, length, 5) for seed in (7, 5)])
        assert torch.equal(tokens, expected)
        assert torch.equal(targets, torch.stack([full_sequence_targets(seed_tokens, 2) for seed_tokens in expected]))
        assert torch.equal(positions, torch.stack([torch.randint(1000, (3, length), generator=drawn[seed])
                                                   for seed in (7, 5)]))
        assert not autocast  # float32: no autocast

    rates = [0.01 * learning_rate_factor(train, step) for step in range(6)]
    assert [result.seed for result in trained] == [7, 5] and [result.model for result in trained] == models
    for index, result in enumerate(trained):
        curve = result.curve
        assert list(curve.columns) == ["step", "length", "lr", "loss", "accuracy"]
        assert curve["step"].tolist() == [1, 2, 3, 4, 5, 6] and curve["length"].tolist() == lengths
        assert curve["lr"].tolist() == pytest.approx(rates, rel=1e-12)
        assert curve["loss"].tolist() == [step[index] for step in losses]
        accuracy = [1.0] * 6 if index == 0 else [(n - 3) / (n - 2) for n in lengths]
        assert curve["accuracy"].tolist() == pytest.approx(accuracy, rel=1e-6)
        assert not result.model.training  # handed back in eval mode
        assert result.model.moved_to == [torch.device("cpu")]  # to the device it trains on
        assert result.model.w.item() == pytest.approx(-sum(rates), rel=1e-5)  # every step's rate applied
        assert result.fit["heldout_accuracy"] == 1.0
        # the range fit holds out the seed's own sequences, at every training length
        seed = result.seed
        assert [tokens.shape[1] for tokens in result.model.calls] == list(range(4, 10))
        assert torch.equal(result.model.calls[0], sample_sequences(generator("heldout", seed, 2, 4), 64, 4, 5))
        assert result.fit["final_loss"] == pytest.approx(sum(step[index] for step in losses[2:]) / 4)
    lines = [record.getMessage() for record in caplog.records if record.getMessage().startswith("step ")]
    assert lines == [f"step 4/6  length {lengths[3]}  lr {rates[3]:.2e}  loss 0.2500 0.1250  accuracy 1.000 "
                     f"{(lengths[3] - 3) / (lengths[3] - 2):.3f}",
                     f"step 6/6  length {lengths[5]}  lr {rates[5]:.2e}  loss 0.5000 0.7500  accuracy 1.000 "
                     f"{(lengths[5] - 3) / (lengths[5] - 2):.3f}"]


def test_fit_without_drawn_positions_passes_none_and_bf16_autocasts(monkeypatch):
    """bf16 asks autocast for bfloat16 on the device's type (on a GPU, autocast's default would be float16)."""
    from lengthgen.training.loop import TrainConfig
    asked, autocast = [], torch.autocast

    def recording_autocast(device_type, dtype=None, enabled=True):
        asked.append((device_type, dtype, enabled))
        return autocast(device_type, dtype=dtype, enabled=enabled)

    monkeypatch.setattr(torch, "autocast", recording_autocast)
    train = TrainConfig(steps=2, batch_size=2, lr=0.01, log_every=1, precision="bf16")
    _, stack, _ = fit_with_stub([0, 1], [[0.5, 0.5]] * 2, train)
    assert all(positions is None for _, _, positions, _, _ in stack.calls)
    assert all(autocast and dtype == torch.bfloat16 for *_, autocast, dtype in stack.calls)
    assert asked == [("cpu", torch.bfloat16, True)] * 2


def test_a_lone_seed_trains_beside_a_twin_that_is_dropped():
    """One seed: the stack gets the model and a copy of it (the same weights, not the same object), each seed's
    batches from that seed's generator; one result, the model handed in."""
    from lengthgen.training.loop import TrainConfig
    trained, stack, models = fit_with_stub([4], [[0.5, 0.5]] * 2, TrainConfig(steps=2, batch_size=2, lr=0.01))
    assert len(trained) == 1 and trained[0].seed == 4 and trained[0].model is models[0]
    assert len(stack.models) == 2 and stack.models[0] is models[0] and stack.models[1] is not models[0]
    assert stack.models[1].w is not models[0].w  # a copy of its own weights, which train apart
    tokens = stack.calls[0][0]
    assert torch.equal(tokens[0], tokens[1])  # the twin's batches are the seed's own
    assert trained[0].curve["loss"].tolist() == [0.5, 0.5]


@pytest.mark.parametrize("losses, message", [
    # the first window starts at step 1: a NaN there, and a mean over steps 1-4 (the last above, the others at 0)
    ([[math.nan, 0.5]] + [[0.5, 0.5]] * 9, "training run pe=stub seed=7 offset=2 diverged: loss nan at step 1; lower "
                                           "train.lr (or linear.lr) and rerun"),
    ([[0.5, 0.0]] * 3 + [[0.5, 44 * math.log(5)]] + [[0.5, 0.5]] * 6,
     f"training run pe=stub seed=5 offset=2 diverged: mean loss {11 * math.log(5):.3g} over steps 1-4 is above 10 x "
     f"ln(V) = {10 * math.log(5):.3g}, the loss of a uniform guess; lower train.lr (or linear.lr) and rerun"),
    # a NaN in the second window (steps 5-8) at step 6, seed 5
    ([[0.5, 0.5]] * 5 + [[0.5, math.nan]] + [[0.5, 0.5]] * 4, "training run pe=stub seed=5 offset=2 diverged: loss nan at "
                                                             "step 6; lower train.lr (or linear.lr) and rerun"),
    # a last, short window (steps 9-10) of mean 11 x ln 5 for seed 7, after a first of mean 9 x ln 5: each window alone
    ([[9 * math.log(5), 0.5]] * 4 + [[0.5, 0.5]] * 4 + [[11 * math.log(5), 0.5]] * 2,
     f"training run pe=stub seed=7 offset=2 diverged: mean loss {11 * math.log(5):.3g} over steps 9-10 is above 10 x "
     f"ln(V) = {10 * math.log(5):.3g}, the loss of a uniform guess; lower train.lr (or linear.lr) and rerun"),
])
def test_fit_checks_each_progress_window_of_each_seed(losses, message):
    from lengthgen.training.loop import TrainConfig, TrainingDiverged
    with pytest.raises(TrainingDiverged) as raised:
        fit_with_stub([7, 5], losses, TrainConfig(steps=10, batch_size=2, lr=0.01, log_every=4))
    assert str(raised.value) == message


def test_windows_below_the_factor_do_not_stop_fit():
    """Steps 1-4 at 9 x ln V, steps 5 and 6 at 11 x ln V, steps 7 and 8 at 0.5 x ln V: the windows' means, 9 and
    5.75 x ln V, are under 10 x ln V, although two single steps are above it: no divergence."""
    from lengthgen.training.loop import TrainConfig
    ln = math.log(5)
    losses = [[9 * ln, 0.5]] * 4 + [[11 * ln, 0.5]] * 2 + [[0.5 * ln, 0.5]] * 2
    trained, _, _ = fit_with_stub([7, 5], losses, TrainConfig(steps=8, batch_size=2, lr=0.01, log_every=4))
    assert len(trained) == 2


@pytest.mark.parametrize("pe", ["rope", "randomized_rope@noise_max_length=32"])
def test_the_mapped_path_trains_to_the_bits_of_the_stacked_one(pe):
    """``stack`` giving None takes the mapped path (each seed's forward through torch.func.vmap): the same weights,
    curves and fits as the stacked heads, with drawn positions and without."""
    from lengthgen.models.head import HeadConfig
    from lengthgen.task import retrieval_targets as targets
    from lengthgen.training.loop import TrainConfig, fit, init_head
    torch.set_num_threads(1)
    config = HeadConfig(vocab_size=5, d_model=4, pe=pe.split("@")[0] if pe == "rope" else pe, trained_positions=9)
    train = TrainConfig(steps=3, batch_size=4, lr=1e-2, log_every=2)
    stacked = fit([init_head(config, seed) for seed in (0, 1)], [0, 1], FIT_TASK, train, "cpu", targets, "r")
    mapped = fit([init_head(config, seed) for seed in (0, 1)], [0, 1], FIT_TASK, train, "cpu", targets, "r",
                 lambda models: None)
    for one, other in zip(stacked, mapped):
        assert one.seed == other.seed and one.curve.equals(other.curve) and one.fit == other.fit
        for a, b in zip(one.model.state_dict().values(), other.model.state_dict().values()):
            assert torch.equal(a, b)
    assert not torch.equal(mapped[0].model.query.weight, mapped[1].model.query.weight)
    # a lone seed trains beside a twin of its own on either path: the mapped path's optimizer gets the twin's
    # weights apart from the seed's
    lone_mapped, = fit([init_head(config, 1)], [1], FIT_TASK, train, "cpu", targets, "r", lambda models: None)
    assert lone_mapped.curve.equals(mapped[1].curve)
    for a, b in zip(lone_mapped.model.state_dict().values(), mapped[1].model.state_dict().values()):
        assert torch.equal(a, b)


def test_train_and_save_writes_each_runs_model_curve_and_fit_in_the_order_of_runs(tmp_path, caplog):
    """A training job: ``train_models`` gets the model config, the task at the runs' one offset, the train settings
    and the runs' seeds in order, and the device; run i's weights, curve (with its pe, offset, seed) and range fit go
    to output.model[i], output.curve[i], output.fit[i]."""
    import logging
    from lengthgen.models.head import HeadConfig
    from lengthgen.tables.core import RANGE_FIT, TRAINING_CURVE
    from lengthgen.tables.io import read_table
    from lengthgen.training.loop import TrainConfig, TrainedModel, init_head, train_and_save
    config = HeadConfig(vocab_size=5, d_model=4, pe="rope", trained_positions=9)
    asked = []

    def train_models(model_config, task, train, seeds, device):
        asked.append((model_config, task, train, seeds, device))
        return [TrainedModel(seed, init_head(model_config, seed), pd.DataFrame(
            {"step": [1, 2], "length": [4, 9], "lr": [0.5, 0.25], "loss": [float(seed), 0.5], "accuracy": [0.0, 1.0]}),
            fit_record(0.5 + seed / 100, seed / 10)) for seed in seeds]

    runs = [{"pe": "rope", "seed": 5, "offset": 2}, {"pe": "rope", "seed": 2, "offset": 2}]
    output = SimpleNamespace(**{kind: [tmp_path / f"{kind}_{run['seed']}" for run in runs]
                                for kind in ("model", "curve", "fit")})
    task = {"vocab_size": 5, "train_length_min": 4, "train_length_max": 9}
    train = {"steps": 2, "batch_size": 4, "lr": 0.5, "log_every": 1}
    with caplog.at_level(logging.INFO, logger="lengthgen.training.loop"):
        train_and_save(train_models, config, runs, task, train, "cpu", output)
    assert asked == [(config, TaskConfig(offset=2, **task), TrainConfig(**train), [5, 2], "cpu")]
    for run in runs:
        seed = run["seed"]
        saved = torch.load(tmp_path / f"model_{seed}")
        assert saved["config"]["init_seed"] == seed
        for name, tensor in init_head(config, seed).state_dict().items():
            assert torch.equal(saved["state_dict"][name], tensor)
        curve = read_table(tmp_path / f"curve_{seed}", TRAINING_CURVE)
        assert curve[["pe", "offset", "seed"]].values.tolist() == [["rope", 2, seed]] * 2
        assert curve["loss"].tolist() == [float(seed), 0.5] and curve["step"].tolist() == [1, 2]
        fit = read_table(tmp_path / f"fit_{seed}", RANGE_FIT)
        assert fit.to_dict("records") == [{"pe": "rope", "offset": 2, "seed": seed, **fit_record(0.5 + seed / 100,
                                                                                                 seed / 10)}]
    messages = [record.getMessage() for record in caplog.records]
    assert messages[0] == f"training {runs}"
    assert messages[1:] == [f"{run}: {fit_record(0.5 + run['seed'] / 100, run['seed'] / 10)}" for run in runs]


def test_train_and_save_refuses_runs_of_two_offsets(tmp_path):
    """One job trains one (pe, offset): runs of two offsets cannot share a task."""
    from lengthgen.training.loop import train_and_save
    runs = [{"pe": "rope", "seed": 0, "offset": 1}, {"pe": "rope", "seed": 0, "offset": 2}]
    with pytest.raises(ValueError):
        train_and_save(lambda *args: pytest.fail("trained"), None, runs, {}, {}, "cpu", None)


def test_a_transformer_on_the_mapped_path_trains_to_the_bits_of_the_stacked_one():
    """Transformers whose encoding draws no ids but acts through more than the position embedding train on the
    mapped path, whose forward takes no ``positions``: the mapped path calls it without them, to the stacked bits."""
    from lengthgen.models.transformer_stacked import stack_transformers
    from lengthgen.task import full_sequence_targets
    from lengthgen.training.loop import TrainConfig, fit, seeded_init
    from lengthgen.models.transformer import Transformer, TransformerConfig
    torch.set_num_threads(1)
    config = TransformerConfig(vocab_size=5, pe="rope", n_layers=1, n_heads=1, d_model=4, trained_positions=9)
    train = TrainConfig(steps=1, batch_size=2, lr=1e-2, log_every=1)
    runs = [fit([seeded_init(Transformer, config, seed) for seed in (0, 1)], [0, 1], FIT_TASK, train, "cpu",
                full_sequence_targets, "r", stack) for stack in (stack_transformers, lambda models: None)]
    for one, other in zip(*runs):
        assert one.curve.equals(other.curve)
        for a, b in zip(one.model.state_dict().values(), other.model.state_dict().values()):
            assert torch.equal(a, b)


def test_train_head_trains_on_the_device_it_is_given(monkeypatch):
    """``train_head`` passes its device on (on a CPU-only machine the default "auto" is the CPU too, so the device is
    recorded, not run)."""
    from lengthgen.training import loop as training
    asked = []

    def train_heads(head_config, task, train, seeds, device="auto"):
        asked.append((head_config, task, train, seeds, device))
        return [training.TrainedModel(seeds[0], "model", "curve", {})]

    monkeypatch.setattr(training, "train_heads", train_heads)
    assert training.train_head("config", "task", "train", 3, "cuda:7") == ("model", "curve")
    assert asked == [("config", "task", "train", [3], "cuda:7")]


class StopFit(Exception):
    pass


def test_fit_moves_each_batch_to_its_device(monkeypatch):
    """On the meta device (which runs no kernel, so the stub stops the loop at its first forward pass, and autocast,
    which knows no meta device, is left out): the tokens, the targets and the drawn positions the stack gets are on
    the device fit trains on, as are the models."""
    import contextlib
    from lengthgen.task import full_sequence_targets
    from lengthgen.training.loop import TrainConfig, fit
    seen = []

    class MetaStack(StubStack):
        def forward(self, tokens, targets, positions):
            seen.append((tokens.device, targets.device, positions.device, [model.w.device for model in self.models]))
            raise StopFit

    monkeypatch.setattr(torch, "autocast", lambda *args, **kwargs: contextlib.nullcontext())
    models = [FitStub(draws_positions=True) for _ in range(2)]
    with pytest.raises(StopFit):
        fit(models, [0, 1], FIT_TASK, TrainConfig(steps=2, batch_size=2, lr=0.01), "meta", full_sequence_targets, "r",
            lambda models: MetaStack(models, None))
    meta = torch.device("meta")
    assert seen == [(meta, meta, meta, [meta, meta])]


def test_fit_keeps_the_losses_on_its_device_until_a_progress_line(monkeypatch):
    """"Losses stay on the device until a progress line is due": on the meta device (no kernel runs: autocast and the
    optimizer step are left out) the stub's meta losses go into the loss buffer, and the divergence check, which the
    test stops the loop at, reads that window on the device."""
    import contextlib
    from lengthgen.training import loop as training
    from lengthgen.task import full_sequence_targets
    checked = []

    class MetaLossStack(StubStack):
        def forward(self, tokens, targets, positions):
            loss = torch.stack([(model.w * 0).sum() for model in self.models])
            return loss, torch.nn.functional.one_hot(targets.clamp(min=0), FIT_TASK.vocab_size).float()

    def check_not_diverged(losses, first_step, run, uniform_loss):
        checked.append((losses.device, tuple(losses.shape), first_step))
        raise StopFit

    class NoStep:
        def __init__(self, parameters):
            pass

        def step(self, rate):
            pass

    monkeypatch.setattr(torch, "autocast", lambda *args, **kwargs: contextlib.nullcontext())
    monkeypatch.setattr(training, "FusedAdam", NoStep)
    monkeypatch.setattr(training, "check_not_diverged", check_not_diverged)
    with pytest.raises(StopFit):
        training.fit([FitStub() for _ in range(2)], [0, 1], FIT_TASK,
                     training.TrainConfig(steps=3, batch_size=2, lr=0.01, log_every=2), "meta", full_sequence_targets,
                     "r", lambda models: MetaLossStack(models, None))
    assert checked == [(torch.device("meta"), (2,), 1)]
