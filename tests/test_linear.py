import math

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lengthgen.experiments import linear
from lengthgen.model import AttentionHead, HeadConfig
from lengthgen.plots.linear import plot_linear_control
from lengthgen.task import make_eval_set


def tiny_head(d_model=8, vocab_size=3, seed=0, rope_base=10.0) -> AttentionHead:
    torch.manual_seed(seed)
    return AttentionHead(HeadConfig(vocab_size, d_model, "rope", 64, rope_base=rope_base, attention="linear")).double()


# --- the closed-form min-norm solution ---------------------------------------------------------

def test_min_norm_solution_of_a_known_system():
    # x + y = 2: every (t, 2 - t) interpolates; the shortest is (1, 1).
    matrix, target = torch.tensor([[1.0, 1.0]]), torch.tensor([2.0])
    solution = linear.min_norm_solution(matrix, target)
    assert torch.allclose(solution, torch.tensor([1.0, 1.0], dtype=torch.float64))
    other = torch.tensor([2.0, 0.0], dtype=torch.float64)
    assert torch.allclose(matrix.double() @ other, target.double())
    assert solution.norm() < other.norm()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 4))
def test_min_norm_solution_interpolates_and_beats_every_other_interpolant(seed, rows, extra):
    rng = torch.Generator().manual_seed(seed)
    matrix = torch.randn(rows, rows + extra, generator=rng, dtype=torch.float64)
    target = torch.randn(rows, generator=rng, dtype=torch.float64)
    solution = linear.min_norm_solution(matrix, target)
    assert torch.allclose(matrix @ solution, target, atol=1e-8)
    # Any other interpolant adds a null-space vector, which is orthogonal to the min-norm one.
    null_basis = torch.linalg.svd(matrix).Vh[rows:]  # (extra, P)
    other = solution + null_basis.T @ torch.randn(extra, generator=rng, dtype=torch.float64)
    assert torch.allclose(matrix @ other, target, atol=1e-8)
    assert solution.norm() <= other.norm() + 1e-12
    assert linear.row_space_fraction(matrix, solution) == pytest.approx(1.0, abs=1e-9)
    assert linear.row_space_fraction(matrix, other) == pytest.approx(float(solution.norm() / other.norm()), abs=1e-9)


def test_min_norm_kernel_interpolates_a_well_conditioned_rotary_system():
    # 8 coefficients, 3 offsets, frequencies 1, 10^-1/4, ...: well conditioned, so exact.
    coefficients = linear.min_norm_kernel_coefficients(d_model=8, rope_base=10.0, offset=1, train_length_max=3)
    kernel = linear.kernel_values(coefficients, torch.arange(3), 8, 10.0)
    assert torch.allclose(kernel, torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64), atol=1e-9)
    basis = linear.rotary_basis(torch.arange(3), 8, 10.0)
    assert linear.numerical_rank(basis) == 3
    assert linear.row_space_fraction(basis, coefficients) == pytest.approx(1.0, abs=1e-9)


def test_default_rotary_basis_is_band_limited():
    # d=64, base 1e4, 32 offsets: far fewer resolvable directions than offsets.
    basis = linear.rotary_basis(torch.arange(32), 64, 1e4)
    assert 8 <= linear.numerical_rank(basis) < 20


# --- the trained head's kernel ------------------------------------------------------------------

def test_pair_coefficients_reproduce_the_heads_rope_scores():
    model = tiny_head()
    tokens = torch.randint(3, (5, 7), generator=torch.Generator().manual_seed(1))
    scores, weights = model.attention(tokens)
    assert torch.equal(scores, weights)  # linear attention: weights are the logits
    coefficients = linear.pair_coefficients(model)  # (V, V, D)
    deltas = 6 - torch.arange(7)
    basis = linear.rotary_basis(deltas, 8, 10.0)  # (T, D)
    query_tokens = tokens[:, -1]
    predicted = torch.einsum("btd,td->bt", coefficients[query_tokens[:, None], tokens], basis)
    assert torch.allclose(predicted, scores.detach(), atol=1e-10)


def test_content_averaged_kernel_matches_brute_force_over_token_pairs():
    model = tiny_head(vocab_size=3)
    margins = linear.own_token_margins(model)
    # Brute force: score of a key x sitting delta places before a query u, times m(x), averaged.
    for delta in (1, 2, 5):
        total = 0.0
        for u in range(3):
            for x in range(3):
                tokens = torch.full((1, delta + 1), 0)
                tokens[0, 0], tokens[0, -1] = x, u
                scores, _ = model.attention(tokens)
                total += scores[0, 0].item() * margins[x].item()
        kernel = linear.kernel_values(linear.content_averaged_coefficients(model), torch.tensor([delta]), 8, 10.0)
        assert kernel.item() == pytest.approx(total / 9, abs=1e-10)


def test_own_token_margins_of_a_hand_built_readout():
    model = tiny_head(d_model=2, vocab_size=2)
    with torch.no_grad():
        model.token_embedding.weight.copy_(torch.eye(2, dtype=torch.float64))
        model.value.weight.copy_(torch.eye(2, dtype=torch.float64))
        model.value.bias.zero_()
        model.unembedding.weight.copy_(torch.tensor([[3.0, 0.0], [0.0, -1.0]], dtype=torch.float64))
    # Value of token 0 gives logits (3, 0): margin 3 - 1.5; token 1 gives (0, -1): -1 + 0.5.
    assert torch.allclose(linear.own_token_margins(model), torch.tensor([1.5, -0.5], dtype=torch.float64))


def test_non_linear_heads_are_rejected():
    model = AttentionHead(HeadConfig(3, 8, "rope", 16, attention="softmax"))
    with pytest.raises(ValueError, match="linear"):
        linear.pair_coefficients(model)


# --- distractor weights ---------------------------------------------------------------------------

def test_target_and_distractor_weights_by_hand():
    weights = torch.tensor([[0.5, -2.0, 1.0, 0.25], [0.0, 0.0, -3.0, 1.0]])
    target, distractor = linear.target_and_distractor_weights(weights, offset=1)
    assert torch.allclose(target, torch.tensor([1.0, -3.0]))
    assert torch.allclose(distractor, torch.tensor([2.75, 1.0]))


def cosine_head() -> AttentionHead:
    """d=2, constant q = k = (1, 0): the weight at offset delta is cos(delta) / sqrt(2), zero readout."""
    model = tiny_head(d_model=2, vocab_size=4)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        model.query.bias.copy_(torch.tensor([1.0, 0.0]))
        model.key.bias.copy_(torch.tensor([1.0, 0.0]))
    return model.float()


def test_evaluate_linear_head_on_a_hand_built_head():
    model, offset = cosine_head(), 2
    eval_sets = {length: make_eval_set(0, offset, length, 50, 4) for length in (8, 16, 64)}
    table = linear.evaluate_linear_head(model, eval_sets, offset, seed=3, train_length_min=8, train_length_max=16)
    for row in table.itertuples():
        deltas = np.arange(row.length)
        weights = np.cos(deltas) / math.sqrt(2)  # theta_0 = 1 for d=2
        assert row.target_weight == pytest.approx(weights[offset], abs=1e-5)
        assert row.distractor_weight == pytest.approx(np.abs(weights).sum() - abs(weights[offset]), rel=1e-5)
        # Zero readout: every logit is 0, the prediction is token 0, the loss is log V.
        targets = eval_sets[row.length][1]
        assert row.accuracy == pytest.approx((targets == 0).float().mean().item())
        assert row.loss == pytest.approx(math.log(4), rel=1e-6)
    assert list(table["in_training_range"]) == [True, True, False]
    assert set(table["seed"]) == {3}


def test_kernel_dilution_by_hand():
    kernels = pd.DataFrame({"offset": 1, "seed": 0, "solution": "trained", "delta": [0, 1, 2, 3],
                            "kernel": [1.0, -2.0, 3.0, 0.5]})
    table = linear.kernel_dilution(kernels, [2, 4])
    assert list(table["distractor_weight"]) == [1.0, 4.5]  # the target (delta 1) is left out
    with pytest.raises(ValueError, match="deltas"):
        linear.kernel_dilution(kernels, [8])


def test_kernel_frame_is_one_at_the_target_for_both_solutions():
    model = tiny_head()
    frame = linear.kernel_frame(model, offset=1, seed=0, train_length_max=3, max_delta=10)
    at_target = frame[frame["delta"] == 1].set_index("solution")["kernel"]
    assert at_target.to_dict() == pytest.approx({"trained": 1.0, "min_norm": 1.0})
    comparison = linear.kernel_comparison(model, offset=1, seed=0, train_length_max=3)
    assert comparison["min_norm_fit_error"].item() < 1e-8
    assert -1 <= comparison["coefficient_cosine"].item() <= 1


# --- claims, section, figure ----------------------------------------------------------------------

def synthetic_tables(far_accuracy: float, growing: bool):
    lengths = [16, 32, 64, 128, 256]
    rows = []
    for offset in (1, 2):
        for seed in (0, 1):
            for length in lengths:
                in_range = length <= 32
                rows.append({"offset": offset, "seed": seed, "length": length, "in_training_range": in_range,
                             "accuracy": 1.0 if in_range else far_accuracy, "loss": 0.1, "target_weight": 1.0,
                             "target_abs_weight": 1.0,
                             "distractor_weight": float(length if growing else 1000 // length)})
    by_length = pd.DataFrame(rows)
    comparison = pd.DataFrame({"offset": [1, 1, 2, 2], "seed": [0, 1, 0, 1], "trained_target_kernel": 2.0,
                               "coefficient_cosine": 0.95, "kernel_cosine": 0.5, "trained_fit_error": 0.1,
                               "min_norm_fit_error": 0.0, "norm_ratio": 1.1, "row_space_fraction": 0.99,
                               "basis_rank": 12})
    kernels = pd.concat([
        pd.DataFrame({"offset": offset, "seed": seed, "solution": solution, "delta": np.arange(256),
                      "kernel": np.where(np.arange(256) < 32, 0.01, 1.0) + (np.arange(256) == offset)})
        for offset in (1, 2) for seed in (0, 1) for solution in linear.SOLUTIONS])
    return by_length, comparison, kernels, linear.kernel_dilution(kernels, lengths)


def test_claims_follow_the_fixed_rules():
    by_length, comparison, _, dilution = synthetic_tables(far_accuracy=0.05, growing=True)
    claims = linear.claims_linear(by_length, comparison, dilution, train_length_max=32, vocab_size=16)
    holds = dict(zip(claims["claim"], claims["holds"]))
    assert holds["the control fits the training range (precondition)"]
    assert holds["the control does not extrapolate"]
    assert holds["measured distractor weight grows with length"]
    assert holds["the min-norm kernel's distractor weight grows with length"]
    assert holds["training selects the min-norm interpolant (coefficients)"]
    assert not holds["training selects the min-norm interpolant (kernel in range)"]  # cosine 0.5 < 0.9
    assert set(claims["experiment"]) == {"linear"}
    far = claims.set_index("claim").loc["the control does not extrapolate"]
    assert far["value"] == pytest.approx(0.05) and "0.25" in far["rule"]

    by_length, comparison, _, dilution = synthetic_tables(far_accuracy=0.6, growing=False)
    holds = dict(zip(*linear.claims_linear(by_length, comparison, dilution, 32, 16)[["claim", "holds"]].T.values))
    assert not holds["the control does not extrapolate"]
    assert not holds["measured distractor weight grows with length"]


def test_claims_need_the_4x_length():
    by_length, comparison, _, dilution = synthetic_tables(0.05, True)
    with pytest.raises(ValueError, match="128"):
        linear.claims_linear(by_length[by_length["length"] != 128], comparison, dilution, 32, 16)


def test_section_markdown_reports_the_tables(tmp_path):
    by_length, comparison, kernels, dilution = synthetic_tables(0.05, True)
    claims = linear.claims_linear(by_length, comparison, dilution, 32, 16)
    text = linear.section_markdown(by_length, comparison, dilution, claims, 16, 32, steps=100, batch_size=8, lr=1e-3)
    assert text.startswith("## linear\n")
    assert "![" in text and "(figures/linear_control.png)" in text
    assert "| K |" in text and "acc @128" in text
    assert text.count("**holds**") == int(claims["holds"].sum())
    path = tmp_path / "linear_control.png"
    plot_linear_control(by_length, kernels, dilution, comparison, 16, 32, 16, path, dpi=40)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
