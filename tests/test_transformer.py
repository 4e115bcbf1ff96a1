"""The transformer: causal, its fused and plain attention agree, rope makes it shift-equivariant,
the full-sequence targets, its training and evaluation, and the registry serving it."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from lengthgen.models.checkpoint import save_model
from lengthgen.models.encodings import ENCODINGS, EncodingConfig, PositionalEncoding, build_encoding, register
from lengthgen.evaluation import accuracy_by_position
from lengthgen.experiments.shift import analysis as shift
from lengthgen.task import IGNORE_INDEX, TaskConfig, full_sequence_targets, sample_training_batch
from lengthgen.training.loop import TrainConfig, TrainingDiverged, seeded_init
from lengthgen.models.transformer import Transformer, TransformerConfig, alibi_head_slopes, load_transformer
from lengthgen.training.loop import train_transformer

VOCAB = 8


class SelfOnlyBias(PositionalEncoding):
    """A test encoding with only a logit bias: every query may attend to its own position alone."""

    def __init__(self, config):
        super().__init__()

    def logit_bias(self, query_positions, key_positions):
        return torch.where(query_positions[:, None] == key_positions[None, :], 0.0, -1e9).double()


@pytest.fixture
def self_only_bias():
    register("test_self_only")(SelfOnlyBias)
    yield "test_self_only"
    del ENCODINGS["test_self_only"]


def transformer(pe: str, seed: int = 0, n_layers: int = 2, n_heads: int = 2, d_model: int = 16,
                weight_std: float | None = None) -> Transformer:
    """A seeded transformer; ``weight_std`` redraws every parameter with that std, so that logits are
    O(1) and a broken equivariance or mask would show (at nanoGPT's init they are about 0.02)."""
    model = seeded_init(Transformer, TransformerConfig(VOCAB, pe, n_layers, n_heads, d_model, trained_positions=64,
                                                       learned_init_std=1.0), seed)
    if weight_std is not None:
        rng = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.copy_(torch.randn(parameter.shape, generator=rng) * weight_std)
    return model.double().eval()


def random_tokens(n: int, length: int, seed: int) -> torch.Tensor:
    return torch.randint(VOCAB, (n, length), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("pe", sorted(ENCODINGS))  # every registry entry serves the transformer
@given(length=st.integers(2, 24), changed=st.integers(0, 23), seed=st.integers(0, 1000))
@settings(max_examples=10, deadline=None)
def test_no_output_depends_on_a_later_token(pe, length, changed, seed):
    changed = changed % length
    model = transformer(pe, seed, weight_std=0.5)
    tokens = random_tokens(3, length, seed)
    other = tokens.clone()
    other[:, changed] = (other[:, changed] + 1) % VOCAB
    with torch.no_grad():
        logits, other_logits = model(tokens)[0], model(other)[0]
    assert torch.equal(logits[:, :changed], other_logits[:, :changed])
    assert not torch.equal(logits[:, changed:], other_logits[:, changed:])  # the change is seen from there on


@pytest.mark.parametrize("pe", sorted(ENCODINGS))  # every registry entry serves the transformer
def test_fused_attention_computes_the_plain_attention(pe):
    model = transformer(pe, weight_std=0.5)
    tokens = random_tokens(4, 13, 0)
    with torch.no_grad():
        for position_offset in (0, 7):
            fused, _ = model(tokens, position_offset=position_offset)
            plain, record = model.trace(tokens, position_offset)
            torch.testing.assert_close(fused, plain, rtol=0, atol=1e-12)
    assert len(record) == 2 and record[0].weights.shape == (4, 2, 13, 13)
    hidden = torch.ones(13, 13, dtype=torch.bool).triu(1)
    assert all((layer.weights[..., hidden] == 0).all() for layer in record)


def test_a_logit_bias_entry_reaches_every_layer(self_only_bias):
    model = transformer(self_only_bias, weight_std=0.5)
    tokens = random_tokens(2, 9, 1)
    with torch.no_grad():
        fused, _ = model(tokens)
        plain, record = model.trace(tokens)
    torch.testing.assert_close(fused, plain, rtol=0, atol=1e-12)
    for layer in record:
        torch.testing.assert_close(layer.weights, torch.eye(9, dtype=torch.float64).expand_as(layer.weights))


def test_rope_rotates_each_head_at_the_frequencies_of_its_width():
    model = transformer("rope", d_model=32, n_heads=4)
    assert model.encoding.theta.shape == (4,)  # head width 8: 4 blocks
    torch.testing.assert_close(model.encoding.theta, 1e4 ** (-torch.arange(0, 8, 2, dtype=torch.float64) / 8))


@pytest.mark.parametrize("n_heads", [1, 2, 4, 8])
def test_alibi_gives_each_head_the_papers_slope(n_heads):
    """Press et al.'s slopes 2^(-8h/H), h = 1..H (for 8 heads 1/2, 1/4, ..., 1/256), each head's bias -m_h (i - j)."""
    expected = [2.0 ** (-8 * h / n_heads) for h in range(1, n_heads + 1)]
    assert alibi_head_slopes(n_heads) == expected
    assert alibi_head_slopes(8) == [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]
    positions = torch.arange(6)
    offsets = (positions[:, None] - positions[None, :]).float()
    for pe in ("alibi", "alibi_learned"):
        bias = transformer(pe, d_model=16, n_heads=n_heads).encoding.logit_bias(positions, positions)
        assert bias.shape == (n_heads, 6, 6)
        for head, slope in enumerate(expected):
            torch.testing.assert_close(bias[head].float(), -slope * offsets)


def test_alibi_keeps_a_slope_set_on_its_name_and_the_single_head_keeps_its_one_slope():
    positions = torch.arange(5)
    offsets = (positions[:, None] - positions[None, :]).float()
    bias = transformer("alibi@slope=0.5", n_heads=2).encoding.logit_bias(positions, positions)
    torch.testing.assert_close(bias.float(), -0.5 * offsets)  # every head's, broadcast over them
    single_head = build_encoding("alibi", EncodingConfig(d_model=16, trained_positions=64))
    assert single_head.slope.item() == 2.0 ** -8 == alibi_head_slopes(1)[0]


def test_per_head_alibi_learns_one_slope_per_head():
    model = transformer("alibi_learned", n_heads=4)
    slopes = [parameter.item() for parameter in model.encoding.parameters()]
    assert slopes == alibi_head_slopes(4)


@given(seed=st.integers(0, 1000), length=st.integers(2, 32),
       shifts=st.lists(st.integers(1, 100_000), min_size=1, max_size=3))
@settings(max_examples=15, deadline=None)
def test_rope_transformer_logits_are_shift_equivariant_in_float64(seed, length, shifts):
    model = transformer("rope", seed, weight_std=0.5)
    changes = shift.shift_changes(model, random_tokens(3, length, seed), shifts, dtypes=("float64",))
    assert (changes["output_logit_change"] <= 1e-9).all()
    assert (changes["attention_logit_change"] <= 1e-9).all()
    assert (changes["attention_logit_scale"] > 0.1).all()  # the logits are O(1): the bound is not trivial


@pytest.mark.parametrize("pe", ["learned", "sinusoidal"])
def test_absolute_transformer_logits_change_under_a_shift(pe):
    changes = shift.shift_changes(transformer(pe, weight_std=0.5), random_tokens(3, 16, 0), [1, 20])
    assert (changes["output_logit_change"] > 1e-2).all()


def test_full_sequence_targets_are_the_token_k_places_back():
    tokens = torch.tensor([[3, 1, 4, 1, 5, 9]])
    assert full_sequence_targets(tokens, 2).tolist() == [[IGNORE_INDEX, IGNORE_INDEX, 3, 1, 4, 1]]
    rng = torch.Generator().manual_seed(0)
    task = TaskConfig(vocab_size=VOCAB, offset=3, train_length_min=4, train_length_max=9)
    tokens, targets = sample_training_batch(rng, task, 5, full_sequence_targets)
    assert targets.shape == tokens.shape
    assert (targets[:, :3] == IGNORE_INDEX).all() and torch.equal(targets[:, 3:], tokens[:, :-3])


def test_the_loss_averages_over_the_positions_with_a_target():
    model = transformer("rope")
    tokens = random_tokens(4, 10, 2)
    logits, loss = model(tokens, full_sequence_targets(tokens, 3))
    expected = F.cross_entropy(logits[:, 3:].reshape(-1, VOCAB), tokens[:, :-3].reshape(-1))
    torch.testing.assert_close(loss, expected)


class Oracle(nn.Module):
    """Answers the token ``offset`` places back wherever there is one (and token 0 before)."""

    def __init__(self, offset: int):
        super().__init__()
        self.offset = offset
        self.unused = nn.Parameter(torch.zeros(1))  # so that the evaluation can find a device

    def forward(self, tokens):
        answers = full_sequence_targets(tokens, self.offset).clamp(min=0)
        return F.one_hot(answers, VOCAB).double(), None


def test_accuracy_by_position_scores_every_position_with_a_target():
    eval_sets = {length: (random_tokens(7, length, length), None) for length in (6, 20)}
    perfect = accuracy_by_position(Oracle(2), eval_sets, offset=2, n_samples=5, tokens_per_batch=24)
    assert perfect.groupby("length")["position"].agg(list).to_dict() == {6: list(range(2, 6)),
                                                                         20: list(range(2, 20))}
    assert (perfect["accuracy"] == 1).all()
    # One-hot logits: cross-entropy log(e + V - 1) - 1 at every position.
    assert perfect["loss"].sub(math.log(math.e + VOCAB - 1) - 1).abs().max() < 1e-6
    wrong = accuracy_by_position(Oracle(1), eval_sets, offset=2, n_samples=5)  # answers the wrong offset
    assert wrong["accuracy"].mean() < 0.5


def test_same_seed_same_numbers_and_a_saved_model_reloads(tmp_path):
    config = TransformerConfig(VOCAB, "rope", n_layers=1, n_heads=2, d_model=16, trained_positions=64)
    task = TaskConfig(vocab_size=VOCAB, offset=1, train_length_min=4, train_length_max=8)
    train = TrainConfig(steps=15, batch_size=8, lr=1e-2)
    first, curve = train_transformer(config, task, train, seed=3, device="cpu")
    second, same_curve = train_transformer(config, task, train, seed=3, device="cpu")
    _, other_curve = train_transformer(config, task, train, seed=4, device="cpu")
    assert curve.equals(same_curve) and not curve.equals(other_curve)
    assert curve["loss"].iloc[-3:].mean() < curve["loss"].iloc[:3].mean()
    for name, tensor in first.state_dict().items():
        assert torch.equal(tensor, second.state_dict()[name]), name
    save_model(first, tmp_path / "model.pt")
    tokens = random_tokens(2, 12, 0)
    assert torch.equal(first(tokens)[0], load_transformer(tmp_path / "model.pt")(tokens)[0])


def test_a_nan_loss_stops_training_with_the_run_named():
    config = TransformerConfig(VOCAB, "rope", n_layers=1, n_heads=1, d_model=8, trained_positions=64)
    task = TaskConfig(vocab_size=VOCAB, offset=1, train_length_min=4, train_length_max=8)
    with pytest.raises(TrainingDiverged, match="transformer pe=rope seed=0 offset=1"):
        train_transformer(config, task, TrainConfig(steps=5, batch_size=4, lr=math.inf, log_every=2), 0, "cpu")


def test_bf16_autocast_trains_on_the_cpu():
    config = TransformerConfig(VOCAB, "rope", n_layers=1, n_heads=2, d_model=16, trained_positions=64)
    task = TaskConfig(vocab_size=VOCAB, offset=1, train_length_min=4, train_length_max=8)
    model, curve = train_transformer(config, task, TrainConfig(steps=5, batch_size=8, lr=1e-2, precision="bf16"),
                                     0, "cpu")
    assert curve["loss"].notna().all() and next(model.parameters()).dtype == torch.float32

