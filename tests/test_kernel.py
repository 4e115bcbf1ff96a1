"""The content-resolved logit kernel of a rotary head against the head itself and closed forms."""

import itertools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lengthgen.science.kernel import (log_mean_exp_over_keys, logit_kernel, mean_block_coefficients, pair_coefficients,
                              realized_mean_logit, rotary_blocks, self_logits)
from lengthgen.models.head import AttentionHead, HeadConfig
from lengthgen.training.loop import init_head


def random_head(seed: int, vocab_size: int, d_model: int, pe: str = "rope") -> AttentionHead:
    """A head with seeded random parameters, scaled up so logits are O(1) and content-dependent."""
    model = init_head(HeadConfig(vocab_size, d_model, pe, trained_positions=256), seed).double()
    with torch.no_grad():
        model.token_embedding.weight.mul_(2.0)
        for linear in (model.query, model.key):
            linear.weight.mul_(3.0)
    return model.eval()


def two_frequency_head(d_model: int, blocks: dict[int, tuple[complex, complex]], vocab_size: int = 3) -> AttentionHead:
    """A head whose query and key are token-independent: the biases, set per block to (zq, zk)."""
    model = AttentionHead(HeadConfig(vocab_size, d_model, "rope", trained_positions=256)).double()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        for block, (zq, zk) in blocks.items():
            model.query.bias[2 * block], model.query.bias[2 * block + 1] = zq.real, zq.imag
            model.key.bias[2 * block], model.key.bias[2 * block + 1] = zk.real, zk.imag
    return model.eval()


def kernel_at_tokens(kernel: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """The kernel's logit for every key of each sequence. tokens (B, T) -> (B, T)."""
    length = tokens.shape[1]
    deltas = (length - 1 - torch.arange(length)).expand_as(tokens)
    return kernel[tokens[:, -1:].expand_as(tokens), tokens, deltas]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), vocab_size=st.integers(2, 6), half_d=st.integers(1, 4),
       length=st.integers(1, 40), shift=st.sampled_from([0, 7, 1000]))
def test_kernel_matches_model_scores_exactly(seed, vocab_size, half_d, length, shift):
    model = random_head(seed, vocab_size, 2 * half_d)
    rng = torch.Generator().manual_seed(seed)
    tokens = torch.randint(vocab_size, (5, length), generator=rng)
    scores, _ = model.attention(tokens, position_offset=shift)
    kernel = logit_kernel(model, length)
    assert torch.allclose(kernel_at_tokens(kernel, tokens), scores, rtol=0, atol=1e-10)


@pytest.mark.parametrize("scaling", [{"logit_scale": "log_length"}, {"logit_scale": "yarn"},
                                     {"position_scale": "interpolate"}])
@pytest.mark.parametrize("length", [5, 12, 40])
def test_kernel_of_a_length_scaled_head_matches_its_scores(scaling, length):
    trained = random_head(7, 4, 6)
    model = AttentionHead(HeadConfig(4, 6, "rope", trained_positions=256, reference_length=12, **scaling)).double()
    model.load_state_dict(trained.state_dict())
    tokens = torch.randint(4, (5, length), generator=torch.Generator().manual_seed(length))
    scores, _ = model.attention(tokens)
    assert torch.allclose(kernel_at_tokens(logit_kernel(model, length), tokens), scores, rtol=0, atol=1e-10)
    # Every scale is the identity at the reference length; below it only log_length acts.
    changes = length > 12 or (length < 12 and scaling == {"logit_scale": "log_length"})
    assert torch.equal(logit_kernel(trained, length), logit_kernel(model, length)) != changes


def test_kernel_of_float32_head_matches_scores_to_float32_rounding():
    model = random_head(3, 5, 8).float()
    tokens = torch.randint(5, (4, 30), generator=torch.Generator().manual_seed(0))
    scores, _ = model.attention(tokens)
    assert torch.allclose(kernel_at_tokens(logit_kernel(model, 30), tokens), scores.double(), atol=1e-4)


def test_two_frequency_head_has_closed_form_kernel():
    d_model = 8
    theta = [10_000 ** (-2 * i / d_model) for i in range(d_model // 2)]
    zq1, zk1 = 2.0 * complex(math.cos(0.3), math.sin(0.3)), 1.5 * complex(math.cos(-0.4), math.sin(-0.4))
    zq3, zk3 = 0.5j, 4.0
    model = two_frequency_head(d_model, {1: (zq1, zk1), 3: (zq3, zk3)})
    scale = 1 / math.sqrt(d_model)
    amplitude1, phase1 = 2.0 * 1.5 * scale, 0.3 - (-0.4)
    amplitude3, phase3 = 0.5 * 4.0 * scale, math.pi / 2
    deltas = torch.arange(50, dtype=torch.float64)
    expected = amplitude1 * torch.cos(deltas * theta[1] + phase1) + amplitude3 * torch.cos(deltas * theta[3] + phase3)
    kernel = logit_kernel(model, 50)
    assert torch.allclose(kernel, expected.expand_as(kernel), atol=1e-12)
    coefficients = mean_block_coefficients(rotary_blocks(model))
    assert torch.allclose(coefficients.abs(), torch.tensor([0, amplitude1, 0, amplitude3], dtype=torch.float64))
    assert coefficients[1].angle().item() == pytest.approx(phase1)
    assert coefficients[3].angle().item() == pytest.approx(phase3)


def test_mean_block_coefficients_are_the_mean_of_pair_coefficients():
    blocks = rotary_blocks(random_head(1, 5, 8))
    assert torch.allclose(pair_coefficients(blocks).mean(dim=(0, 1)), mean_block_coefficients(blocks), atol=1e-12)


def all_sequences(vocab_size: int, length: int) -> torch.Tensor:
    """Every sequence of ``length`` tokens, each once: the uniform distribution enumerated. (V^n, n)."""
    return torch.tensor(list(itertools.product(range(vocab_size), repeat=length)))


def test_realized_mean_logit_is_the_expected_score_over_uniform_sequences():
    vocab_size, length = 3, 5
    model = random_head(2, vocab_size, 6)
    scores, _ = model.attention(all_sequences(vocab_size, length))  # (V^n, n)
    expected_by_delta = scores.mean(0).flip(0)  # delta = n - 1 - position
    kernel = logit_kernel(model, length)
    assert torch.allclose(realized_mean_logit(kernel), expected_by_delta, atol=1e-12)
    # delta = 0 is the query itself: the average over independent tokens differs there.
    assert not torch.isclose(kernel[:, :, 0].mean(), expected_by_delta[0])


def test_log_mean_exp_over_keys_is_the_conditional_expectation_given_the_query_token():
    vocab_size, length = 3, 4
    model = random_head(4, vocab_size, 6)
    sequences = all_sequences(vocab_size, length)
    scores, _ = model.attention(sequences)
    log_mean = log_mean_exp_over_keys(logit_kernel(model, length))  # (V, n)
    for query_token in range(vocab_size):
        with_query = scores[sequences[:, -1] == query_token]  # uniform over the other tokens
        expected = with_query.exp().mean(0).flip(0).log()
        assert torch.allclose(log_mean[query_token], expected, atol=1e-10)


def test_self_logits_are_the_diagonal_at_delta_zero():
    kernel = logit_kernel(random_head(5, 4, 4), 3)
    assert torch.equal(self_logits(kernel), torch.stack([kernel[a, a, 0] for a in range(4)]))


def test_non_rotary_head_is_refused():
    with pytest.raises(ValueError, match="rotary"):
        rotary_blocks(random_head(0, 4, 4, pe="learned"))
