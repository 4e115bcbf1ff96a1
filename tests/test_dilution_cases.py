"""The exact target attention (lengthgen/science/dilution.py) on heads whose logits spread further than a float64's
exp reaches, or over thousands, against values counted by hand or enumerated."""

import math

import pytest
import torch

from lengthgen.science import dilution
from lengthgen.science.dilution import exact_target_attention, integration_windows, times_u, trapezoid_weights

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


def test_without_distractors_a_spread_of_thousands_loses_only_the_integral_below_each_targets_window():
    """length 2, offset 1: E[x / (x + z)] is x / (x + z), here for targets from 0 to 3000 below the query's own key
    and the other way round. Each target's window spans its own scale, u (x + z) from exp(LOG_U_MIN) to TAIL: the
    same number of grid points (at most 117) whatever the spread, and the only loss is below it, at most
    x / (x + z) exp(LOG_U_MIN) (1.1 for the trapezoid's endpoint correction, 1e-14 for rounding)."""
    offsets = torch.tensor([0.0, -30.0, -700.0, -3000.0], dtype=torch.float64)  # by key token
    kernel = torch.zeros(4, 4, 2, dtype=torch.float64)
    kernel[:, :, 1] = offsets  # the target's logit, by its token
    kernel[:, :, 0] = offsets[:, None]  # the query's own key: the query token's logit
    log_target, log_self = kernel[:, :, 1], kernel[:, :, 0].diagonal()[:, None]  # (V_a, V_t), (V_a, 1)
    attention = torch.sigmoid(log_target - log_self)  # x / (x + z)
    missing = attention - exact_target_attention(kernel, 1, [2])[0]
    assert torch.all(missing >= -1e-14)
    assert torch.all(missing <= 1.1 * attention * math.exp(dilution.LOG_U_MIN) + 1e-14)
    for query in range(4):
        shifted = kernel[query] - kernel[query].max()
        first, last = integration_windows(torch.logaddexp(shifted[query, 0], shifted[:, 1]), shifted,
                                          torch.tensor([False, False]))
        assert torch.all(last - first + 1 <= math.ceil((math.log(dilution.TAIL) - dilution.LOG_U_MIN)
                                                       / dilution.LOG_U_STEP) + 2)


def test_a_target_below_the_smallest_logit_of_a_distractors_every_key_gets_no_window_and_no_attention():
    """The distractor at offset 2 has logit 0 whatever its token (those at 3 to 5: 0 or -3000, by token); the
    query's own key and the target 1000 below: the target's weight is below exp(-999), 0 in a float64, and past
    the cap of the offset whose smallest logit is largest the window is empty."""
    length = 6
    kernel = torch.zeros(2, 2, length, dtype=torch.float64)
    kernel[:, :, [0, 1]] = -GAP
    kernel[:, 1, 3:] = -3 * GAP
    shifted = kernel[0] - kernel[0].max()
    first, last = integration_windows(torch.logaddexp(shifted[0, 0], shifted[:, 1]), shifted,
                                      torch.tensor([False, False, True, True, True, True]))
    assert torch.all(first > last)
    assert torch.equal(exact_target_attention(kernel, 1, [length])[0], torch.zeros(2, 2, dtype=torch.float64))


def test_trapezoid_weights_are_the_step_inside_a_window_half_of_it_at_its_ends_and_none_outside():
    """Grid indices 0..5; windows 1..3, the single point 4 (the rule on one point is 0) and an empty one (3..2).
    (The ends hold integrands near exp(LOG_U_MIN) and exp(-TAIL): too small for a value test to see them.)"""
    weights = trapezoid_weights(torch.arange(6), torch.tensor([1, 4, 3]), torch.tensor([3, 4, 2]))
    step = dilution.LOG_U_STEP
    expected = torch.tensor([[0, step / 2, step, step / 2, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]],
                            dtype=torch.float64)
    assert torch.equal(weights, expected)
