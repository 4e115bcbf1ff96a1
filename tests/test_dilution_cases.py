"""The exact target attention (lengthgen/dilution.py) on heads whose logits spread further than a float64's
exp reaches, against values counted by hand."""

import math

import pytest
import torch

from lengthgen.dilution import exact_target_attention, times_u

GAP = 1000.0  # exp(1000) overflows a float64: the integration variable u reaches past exp(709)


def two_token_kernel(length: int) -> torch.Tensor:
    """S[a, b, delta] for two tokens: a key holding token 1 has logit GAP, one holding token 0 has logit 0,
    whatever the query and the offset. (2, 2, length)"""
    kernel = torch.zeros(2, 2, length, dtype=torch.float64)
    kernel[:, 1, :] = GAP
    return kernel


def inverse_mean(first: int, trials: int) -> float:
    """E[1 / (first + K)] for K ~ Binomial(trials, 1/2)."""
    return sum(math.comb(trials, k) / 2 ** trials / (first + k) for k in range(trials + 1))


@pytest.mark.parametrize("length", [4, 7])
def test_a_head_with_a_logit_gap_of_a_thousand_gets_the_hand_counted_attention(length):
    """With a key of token 1 outweighing any of token 0 by exp(1000), the target's weight is 1 over the number
    of keys that hold its own logit (query's own key, target, distractors; each distractor is token 1 with
    probability 1/2), and 0 whenever a key of token 1 outweighs a target of token 0."""
    distractors = length - 2
    expected = torch.tensor([
        # query token 0 (its own key has logit 0): target 0 wins a share only when every distractor is token 0
        [0.5 ** distractors / length, inverse_mean(1, distractors)],
        # query token 1 (its own key has logit GAP): a target of token 0 gets nothing
        [0.0, inverse_mean(2, distractors)],
    ], dtype=torch.float64)
    exact = exact_target_attention(two_token_kernel(length), offset=1, lengths=[length])[0]
    assert torch.allclose(exact, expected, rtol=0, atol=1e-9)


def test_u_times_a_value_is_the_product_where_u_is_a_float64_and_exp_of_the_sum_past_it():
    log_u = torch.tensor([-3.0, 700.0, 720.0, 1500.0], dtype=torch.float64)
    log_values = torch.tensor([[0.0], [-1400.0]], dtype=torch.float64)
    expected = torch.tensor([[math.exp(-3.0), math.exp(700.0), math.inf, math.inf],
                             [0.0, 0.0, math.exp(-680.0), math.exp(100.0)]], dtype=torch.float64)
    assert torch.allclose(times_u(log_values, log_u), expected, rtol=1e-12, atol=0)
