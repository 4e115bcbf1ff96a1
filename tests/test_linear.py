"""linear: the min-norm control (arm 1), the linear-attention head (arm 2), and checks that can fail."""

import copy
import logging
import math
import re

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from lengthgen.tables import io as tables
from lengthgen.experiments.linear import thresholds
from lengthgen.checks.bootstrap import seed_bootstrap
from lengthgen.checks.check import with_keys
from lengthgen.experiments.linear import analysis as linear
from lengthgen.experiments.linear import summaries as linear_summaries
from lengthgen.models.head import AttentionHead, HeadConfig
from lengthgen.experiments.linear import figures as linear_plot
from lengthgen.experiments.linear import section as linear_prose
from lengthgen.science.rotary_regression import (RegressionConfig, condition_number, interpolation_target, min_norm_solution,
                                         numerical_rank, regression_outputs, rotary_basis, row_space_fraction,
                                         squared_loss, train_regression)
from lengthgen.experiments.linear import tables as schemas
from lengthgen.tables.core import CLAIMS
from lengthgen.task import TaskConfig, make_eval_set
from lengthgen.training.loop import TrainConfig, train_heads

# A tiny setting of arm 1: 8 training offsets, 16 features, vocabulary 8.
TASK = TaskConfig(vocab_size=8, offset=2, train_length_min=4, train_length_max=8)
CONTROL = RegressionConfig(d_model=16, rope_base=0.05, steps=400, batch_size=64, lr=0.05)
LENGTHS = (8, 16, 32, 64, 128)  # reference length 16 (= 2 L), far length 128


def tiny_head(d_model=8, vocab_size=3, seed=0, rope_base=10.0, attention="linear") -> AttentionHead:
    torch.manual_seed(seed)
    return AttentionHead(HeadConfig(vocab_size, d_model, "rope", 256, rope_base=rope_base, attention=attention)).double()


def eval_sets(offset=TASK.offset, lengths=LENGTHS, n_samples=200, vocab_size=TASK.vocab_size):
    return {length: make_eval_set(0, offset, length, n_samples, vocab_size) for length in lengths}


def kernel_predictor(kernel_values: torch.Tensor, vocab_size: int = TASK.vocab_size):
    """A fixed positional kernel, read out like arm 1: outputs = summed weight per token."""
    def predict(tokens):
        weights = kernel_values[:tokens.shape[1]].flip(0).expand(tokens.shape)
        return regression_outputs(kernel_values, tokens, vocab_size), weights
    return predict


def by_length_of(predict, offset=TASK.offset, arm=linear.CONTROL) -> pd.DataFrame:
    frame = linear.evaluate_weights(predict, eval_sets(offset), offset)
    return linear.in_range(frame, TASK).assign(arm=arm, offset=offset, seed=0)


# --- the closed forms ---------------------------------------------------------------------------

def test_min_norm_solution_of_a_known_system():
    # x + y = 2: every (t, 2 - t) interpolates; the shortest is (1, 1).
    matrix, target = torch.tensor([[1.0, 1.0]]), torch.tensor([2.0])
    solution = min_norm_solution(matrix, target)
    assert torch.allclose(solution, torch.tensor([1.0, 1.0], dtype=torch.float64))
    assert solution.norm() < torch.tensor([2.0, 0.0]).norm()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 4))
def test_min_norm_solution_interpolates_and_beats_every_other_interpolant(seed, rows, extra):
    rng = torch.Generator().manual_seed(seed)
    matrix = torch.randn(rows, rows + extra, generator=rng, dtype=torch.float64)
    target = torch.randn(rows, generator=rng, dtype=torch.float64)
    solution = min_norm_solution(matrix, target)
    assert torch.allclose(matrix @ solution, target, atol=1e-8)
    # Any other interpolant adds a null-space vector, which is orthogonal to the min-norm one.
    null_basis = torch.linalg.svd(matrix).Vh[rows:]  # (extra, P)
    other = solution + null_basis.T @ torch.randn(extra, generator=rng, dtype=torch.float64)
    assert torch.allclose(matrix @ other, target, atol=1e-8)
    assert solution.norm() <= other.norm() + 1e-12
    assert row_space_fraction(matrix, solution, 0.0) == pytest.approx(1.0, abs=1e-9)
    assert row_space_fraction(matrix, other, 0.0) == pytest.approx(float(solution.norm() / other.norm()), abs=1e-9)


def test_rope_bases_of_one_or_more_are_ill_conditioned_at_every_width():
    # Every frequency is at most 1 rad: band-limited features cannot resolve 32 consecutive offsets.
    for base in (1e4, 100.0, 2.0):
        for d_model in (32, 64, 128, 256):
            assert condition_number(rotary_basis(torch.arange(32), d_model, base)) > 1e12
    default = rotary_basis(torch.arange(32), 64, 1e4)
    assert 8 <= numerical_rank(default, 1e-5) < 20  # a cut-off decides what "min-norm" means there


def test_the_chosen_base_below_one_is_well_conditioned():
    assert condition_number(rotary_basis(torch.arange(32), 64, 0.05)) < 5  # the default config's arm 1
    assert condition_number(rotary_basis(torch.arange(8), 16, 0.05)) < 5  # the tiny config's


# --- arm 1: the model and its training ----------------------------------------------------------

def test_regression_outputs_sum_the_weights_of_each_token():
    kernel_values = torch.tensor([0.5, 2.0, -1.0], dtype=torch.float64)  # k(0), k(1), k(2)
    tokens = torch.tensor([[1, 0, 1], [2, 2, 2]])  # deltas 2, 1, 0 from left to right
    outputs = regression_outputs(kernel_values, tokens, vocab_size=3)
    assert outputs.tolist() == [[2.0, -1.0 + 0.5, 0.0], [0.0, 0.0, 1.5]]


def test_the_ideal_kernel_has_zero_loss_and_any_other_has_more():
    tokens = torch.randint(8, (64, 8), generator=torch.Generator().manual_seed(0))
    targets = tokens[:, -1 - TASK.offset]
    ideal = interpolation_target(8, TASK.offset)
    assert squared_loss(regression_outputs(ideal, tokens, 8), targets) == 0
    assert squared_loss(regression_outputs(ideal + 0.1, tokens, 8), targets) > 0


def test_sgd_from_zero_stays_in_the_row_space_and_reaches_the_closed_form():
    coefficients, history, snapshots = train_regression(CONTROL, TASK, seed=0)
    basis = rotary_basis(torch.arange(TASK.train_length_max), CONTROL.d_model, CONTROL.rope_base)
    closed_form = min_norm_solution(basis, interpolation_target(TASK.train_length_max, TASK.offset))
    # Every iterate is a combination of the training offsets' features: the implicit bias, step by step.
    assert all(row_space_fraction(basis, snapshot, 0.0) == pytest.approx(1.0, abs=1e-9) for snapshot in snapshots)
    assert (coefficients - closed_form).norm() < 1e-5 * closed_form.norm()
    assert list(history["step"]) == list(range(50, CONTROL.steps + 1, 50))
    assert history["loss"].iloc[-1] < 1e-8 < history["loss"].iloc[0]
    again, _, _ = train_regression(CONTROL, TASK, seed=0)
    assert torch.equal(again, coefficients)  # same seed, same numbers


# --- arm 2: the kernel of a linear-attention head -----------------------------------------------

def test_pair_coefficients_reproduce_the_heads_rope_scores():
    model = tiny_head()
    tokens = torch.randint(3, (5, 7), generator=torch.Generator().manual_seed(1))
    scores, weights = model.attention(tokens)
    assert torch.equal(scores, weights)  # linear attention: weights are the logits
    coefficients = linear.pair_coefficients(model)  # (V, V, D)
    basis = rotary_basis(6 - torch.arange(7), 8, 10.0)  # (T, D)
    predicted = torch.einsum("btd,td->bt", coefficients[tokens[:, -1][:, None], tokens], basis)
    assert torch.allclose(predicted, scores.detach(), atol=1e-10)


def brute_force_kernel(model: AttentionHead, delta: int, vocab_size: int = 3) -> float:
    """E[score * m(key token)] over the token pairs a key at ``delta`` can have (delta = 0: the query itself)."""
    margins = linear.own_token_margins(model)
    pairs = [(u, u) for u in range(vocab_size)] if delta == 0 else [
        (u, x) for u in range(vocab_size) for x in range(vocab_size)]
    total = 0.0
    for u, x in pairs:
        tokens = torch.full((1, delta + 1), 0)
        tokens[0, 0], tokens[0, -1] = x, u
        scores, _ = model.attention(tokens)
        total += scores[0, 0].item() * margins[x].item()
    return total / len(pairs)


def test_realized_kernel_matches_brute_force_including_the_query_position():
    model = tiny_head(vocab_size=3)
    realized = linear.realized_head_kernel(model, 6)
    coefficients = linear.content_averaged_coefficients(model)
    for delta in range(6):
        assert realized[delta].item() == pytest.approx(brute_force_kernel(model, delta), abs=1e-10)
    for delta in (1, 2, 5):  # past delta = 0, the rotary coefficients give the same values
        assert (rotary_basis(torch.tensor([delta]), 8, 10.0) @ coefficients).item() == pytest.approx(realized[delta].item())
    independent = (rotary_basis(torch.tensor([0]), 8, 10.0) @ coefficients).item()
    assert abs(independent - realized[0].item()) > 1e-3  # treating the query's own key as independent is wrong


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


# --- one normalization ----------------------------------------------------------------------------

def test_every_comparison_is_in_units_of_the_target_weight():
    basis = rotary_basis(torch.arange(64), 16, 0.05)
    coefficients = torch.randn(16, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    sweeps = [linear.compare(scale * coefficients, scale * (basis @ coefficients), 16, 0.05, 2, 8,
                             (0.0, 1e-2), 0.0) for scale in (1.0, -7.0)]
    (sweep, comparison, kernels), (scaled_sweep, scaled_comparison, scaled_kernels) = sweeps
    pd.testing.assert_frame_equal(sweep, scaled_sweep)  # fit errors, norms, norm ratios: scale-free
    assert scaled_comparison["trained_target_kernel"].item() == pytest.approx(-7 * comparison["trained_target_kernel"].item())
    at_target = kernels[kernels["delta"] == 2].set_index("solution")["kernel"]
    assert at_target.to_dict() == pytest.approx({"trained": 1.0, "min_norm": 1.0})
    assert comparison["min_norm_fit_error"].item() < 1e-12  # well-conditioned: exact
    tables.to_arrow(comparison.assign(arm="x", offset=2, seed=0), schemas.LINEAR_COMPARISON)
    tables.to_arrow(sweep.assign(arm="x", offset=2, seed=0), schemas.LINEAR_CUTOFFS)


def test_arm_2_is_compared_at_its_most_favourable_cutoff():
    basis = rotary_basis(torch.arange(64), 16, 1e4)  # ill-conditioned: the cut-off matters
    target = interpolation_target(8, 2)
    at_1e4 = min_norm_solution(basis[:8], target, 1e-4)  # rank 6 of 8, the only cut-off of the grid with it
    sweep, comparison, _ = linear.compare(at_1e4, basis @ at_1e4, 16, 1e4, 2, 8, thresholds.LINEAR_CUTOFFS, None)
    assert comparison["rtol"].item() == 1e-4 and comparison["relative_error"].item() < 1e-9
    assert len(set(sweep["rank"])) > 2  # the solution, and its match, move with the cut-off
    assert (sweep.loc[sweep["rtol"] != 1e-4, "relative_error"] > 1e-3).all()


# --- measured weights -----------------------------------------------------------------------------

def test_weight_statistics_by_hand():
    weights = torch.tensor([[0.5, -2.0, 1.0, 0.25], [0.0, 0.0, -3.0, 1.0]])  # deltas 3, 2, 1, 0
    stats = linear.weight_statistics(weights, offset=1)
    assert stats["target_weight"].tolist() == [1.0, -3.0]
    assert stats["distractor_weight"].tolist() == [2.75, 1.0]
    assert stats["far_key_weight"].tolist() == [1.25, 0.0]  # deltas 2 and 3: the last octave


def cosine_head(attention: str = "linear", vocab_size: int = 4) -> AttentionHead:
    """d=2, constant q = k = (1, 0): the logit at offset delta is cos(delta) / sqrt(2), zero readout."""
    model = AttentionHead(HeadConfig(vocab_size, 2, "rope", 256, attention=attention)).double()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        model.query.bias.copy_(torch.tensor([1.0, 0.0]))
        model.key.bias.copy_(torch.tensor([1.0, 0.0]))
    return model.float()


def test_evaluate_weights_of_a_hand_built_head():
    model, offset = cosine_head(), 2
    sets = {length: make_eval_set(0, offset, length, 50, 4) for length in (8, 16, 64)}
    table = linear.evaluate_weights(linear.head_predictor(model), sets, offset)
    for row in table.itertuples():
        weights = np.cos(np.arange(row.length)) / math.sqrt(2)  # weight at delta; theta_0 = 1 for d=2
        distractors = np.delete(np.abs(weights), offset)
        assert row.target_weight == pytest.approx(weights[offset], abs=1e-5)
        assert row.distractor_weight == pytest.approx(distractors.sum(), rel=1e-5)
        octave = [abs(weights[d]) for d in range(row.length // 2, row.length) if d != offset]
        assert row.far_key_weight == pytest.approx(np.mean(octave), rel=1e-5)
        # Zero readout: every output is 0, the prediction is token 0.
        assert row.accuracy == pytest.approx((sets[row.length][1] == 0).float().mean().item())


# --- the checks can fail --------------------------------------------------------------------------

def min_norm_kernel(n_offsets=128) -> torch.Tensor:
    basis = rotary_basis(torch.arange(n_offsets), CONTROL.d_model, CONTROL.rope_base)
    return basis @ min_norm_solution(basis[:TASK.train_length_max], interpolation_target(8, TASK.offset))


def decaying_kernel(n_offsets=128) -> torch.Tensor:
    """A plausible linear head that extrapolates: exact at K, small distractor weights decaying as delta^-2."""
    deltas = torch.arange(n_offsets, dtype=torch.float64)
    return torch.where(deltas == TASK.offset, 1.0, 0.3 / (1 + (deltas - TASK.offset) ** 2))


def test_the_rate_check_holds_for_the_min_norm_kernel_and_fails_for_heads_that_dilute_less():
    assert linear.far_weight_ratio(by_length_of(kernel_predictor(min_norm_kernel())), 8) >= thresholds.MIN_FAR_WEIGHT_RATIO
    # A kernel whose tail decays, and the exact retrieval kernel (nothing off target): both fail.
    decaying = linear.far_weight_ratio(by_length_of(kernel_predictor(decaying_kernel())), 8)
    assert decaying < 0.1 < thresholds.MIN_FAR_WEIGHT_RATIO
    perfect = linear.far_weight_ratio(by_length_of(kernel_predictor(interpolation_target(128, TASK.offset))), 8)
    assert not perfect >= thresholds.MIN_FAR_WEIGHT_RATIO  # nan: nothing to decay
    # A normalized head: its weights sum to 1, so the weight per key falls as its keys multiply.
    normalized = by_length_of(linear.head_predictor(cosine_head("softmax", TASK.vocab_size)), offset=2)
    assert linear.far_weight_ratio(normalized, 8) < 0.2
    # The running sum of the old rule grows for every one of them: it could not fail.
    for kernel_values in (min_norm_kernel(), decaying_kernel()):
        sums = [float(kernel_values[:n].abs().sum()) for n in LENGTHS]
        assert sums == sorted(sums)


def test_arm_2_fails_for_a_head_that_extrapolates_and_arm_1_judges_no_extrapolation():
    """Arm 2's extrapolation checks fail for a kernel that extrapolates. Arm 1's outcome past the range is
    set by its width and base, so its checks are sanity checks of its fit and training, none about extrapolation."""
    extrapolating = by_length_of(kernel_predictor(decaying_kernel()))
    comparison = arm_1_comparison(min_norm_solution(
        rotary_basis(torch.arange(TASK.train_length_max), CONTROL.d_model, CONTROL.rope_base),
        interpolation_target(8, TASK.offset)))
    for checks, kind, past_range_checks in (
            (linear.control_checks(extrapolating, comparison, 8), "sanity", []),
            (linear.head_checks(extrapolating, comparison, 8, TASK.vocab_size), "evidence", [False, False])):
        holds = {check["claim"].split(": ", 1)[1]: check["holds"] for check in checks}
        assert {check["kind"] for check in checks} == {kind}
        assert [holds[claim] for claim in holds if "extrapolate" in claim or "decay" in claim] == past_range_checks
        assert next(value for claim, value in holds.items() if claim.startswith("fits the training range"))


def test_arm_2_is_not_judged_past_its_range_when_it_does_not_fit_every_in_range_length():
    """A head that extrapolates nothing would pass "does not extrapolate"; unfit, it is not judged."""
    flat = by_length_of(kernel_predictor(min_norm_kernel()), arm=linear.HEAD)
    comparison = arm_1_comparison(train_regression(CONTROL, TASK, seed=0)[0]).assign(arm=linear.HEAD)
    fit, *rest = linear.head_checks(flat, comparison, 8, TASK.vocab_size)
    assert fit["holds"] and fit["value"] >= thresholds.LINEAR_HEAD_FIT_ACCURACY
    assert not any(math.isnan(check["value"]) for check in rest)  # judged
    # One in-range length of one run at 0.98, the mean still 0.99 or more: unfit.
    unfit = pd.concat([flat, flat.assign(seed=1)], ignore_index=True)
    unfit.loc[unfit["in_training_range"] & (unfit["seed"] == 1), "accuracy"] = 0.98
    assert unfit.loc[unfit["in_training_range"], "accuracy"].mean() >= thresholds.LINEAR_HEAD_FIT_ACCURACY - 0.01
    fit, *rest = linear.head_checks(unfit, comparison, 8, TASK.vocab_size)
    assert not fit["holds"] and fit["value"] == pytest.approx(0.98)
    for check in rest:
        assert math.isnan(check["value"]) and not check["holds"] and check["rule"].startswith("not judged")


@pytest.mark.parametrize("rope_base, fits", [(0.05, True), (1e4, False)])
def test_arm_2_fits_its_range_on_the_tiny_config_at_its_own_base_and_not_at_the_models(rope_base, fits):
    """The smoke config's arm 2 (150 steps at lr 1e-2, d = 16): at base 0.05 every in-range length is fit."""
    task = TaskConfig(vocab_size=8, offset=2, train_length_min=4, train_length_max=8)
    head = HeadConfig(8, 16, "rope", 8, rope_base=rope_base, attention="linear")
    models = [trained.model for trained in train_heads(head, task, TrainConfig(150, 64, 0.01), [0, 1], "cpu")]
    sets = {length: make_eval_set(1, task.offset, length, 1000, task.vocab_size) for length in range(4, 9)}
    worst = min(linear.evaluate_weights(linear.head_predictor(model), sets, task.offset)["accuracy"].min()
                for model in models)
    assert (worst >= thresholds.LINEAR_HEAD_FIT_ACCURACY) == fits


def test_the_min_norm_sweep_shows_the_far_weight_falling_as_one_over_root_d_and_an_ill_posed_large_base():
    task = TaskConfig(vocab_size=8, offset=2, train_length_min=4, train_length_max=8)
    sets = {task.offset: eval_sets(task.offset, lengths=(256,), n_samples=300)}
    sweep = linear.min_norm_sweep([16, 64, 256], [0.05, 1e4], task.train_length_max, sets, task.vocab_size)
    tables.to_arrow(sweep, schemas.LINEAR_MIN_NORM_SWEEP)
    well_posed = sweep[sweep["rope_base"] == 0.05].set_index("d_model")
    assert (well_posed["condition_number"] < thresholds.MAX_CONDITION_NUMBER).all()
    far = well_posed["far_key_weight"]
    assert far.is_monotonic_decreasing
    assert far[16] / far[256] == pytest.approx(math.sqrt(256 / 16), rel=0.3)  # 1/sqrt(d)
    assert well_posed["accuracy"].is_monotonic_increasing and well_posed["accuracy"][256] > 0.9
    assert (sweep.loc[sweep["rope_base"] == 1e4, "condition_number"] > 100 * thresholds.MAX_CONDITION_NUMBER).all()


def arm_1_comparison(coefficients: torch.Tensor, config: RegressionConfig = CONTROL) -> pd.DataFrame:
    basis = rotary_basis(torch.arange(128), config.d_model, config.rope_base)
    _, comparison, _ = linear.compare(coefficients, basis @ coefficients, config.d_model, config.rope_base,
                                      TASK.offset, TASK.train_length_max, (0.0,), 0.0)
    return comparison.assign(arm=linear.CONTROL, offset=TASK.offset, seed=0)


def claims_for(comparison: pd.DataFrame, head_error: float = 0.1) -> dict[str, bool]:
    by_length = pd.concat([by_length_of(kernel_predictor(min_norm_kernel()), arm=arm)
                           for arm in (linear.CONTROL, linear.HEAD)])
    head = comparison.assign(arm=linear.HEAD, relative_error=head_error)
    claims = with_keys(linear.claims_linear(by_length, pd.concat([comparison, head]), 8, TASK.vocab_size),
                       "linear", "linear")
    tables.to_arrow(claims, CLAIMS)
    return dict(zip(claims["claim"], claims["holds"]))


def test_convergence_checks_fail_for_another_interpolant_or_an_unfinished_run():
    basis = rotary_basis(torch.arange(TASK.train_length_max), CONTROL.d_model, CONTROL.rope_base)
    closed_form = min_norm_solution(basis, interpolation_target(8, TASK.offset))
    shape, values = (f"{linear.ARMS[linear.CONTROL]}: training selects the min-norm interpolant ({what})"
                     for what in ("shape", "values"))
    trained, _, _ = train_regression(CONTROL, TASK, seed=0)
    holds = claims_for(arm_1_comparison(trained))
    assert holds[shape] and holds[values]
    # Another interpolant: the same values on the training offsets, plus a direction they do not see.
    null_direction = torch.linalg.svd(basis).Vh[-1]
    other = closed_form + 0.5 * closed_form.norm() * null_direction
    assert torch.allclose(basis @ other, basis @ closed_form, atol=1e-12)
    holds = claims_for(arm_1_comparison(other))
    assert not holds[shape] and not holds[values]
    early, _, _ = train_regression(RegressionConfig(16, 0.05, steps=20, batch_size=64, lr=0.05), TASK, seed=0)
    assert not claims_for(arm_1_comparison(early))[values]


def test_the_well_posed_check_fails_for_a_standard_rope_base():
    config = RegressionConfig(16, 1e4, steps=20, batch_size=64, lr=0.05)
    trained, _, _ = train_regression(config, TASK, seed=0)
    holds = claims_for(arm_1_comparison(trained, config))
    assert not holds[f"{linear.ARMS[linear.CONTROL]}: the min-norm interpolant is well-posed"]


def test_the_arm_2_kernel_check_follows_its_rule():
    trained, _, _ = train_regression(CONTROL, TASK, seed=0)
    comparison = arm_1_comparison(trained)
    claim = f"{linear.ARMS[linear.HEAD]}: its kernel is the min-norm interpolant"
    assert claims_for(comparison, head_error=0.4)[claim]
    assert not claims_for(comparison, head_error=0.5)[claim]


# --- the experiment: its tables, section and figure ------------------------------------------------

SETTINGS = {
    "task": {"vocab_size": TASK.vocab_size, "train_length_min": TASK.train_length_min,
             "train_length_max": TASK.train_length_max, "eval_lengths": [8, 16, 32]},
    "linear": {"steps": 100, "batch_size": 64, "lr": 1e-3, "warmup_fraction": 0.1, "rope_base": 0.05,
               "min_norm": {"d_model": 16, "rope_base": 0.05, "steps": 400, "batch_size": 64, "lr": 0.05,
                            "log_every": 50, "sweep_d_model": [16, 64], "sweep_rope_base": [0.05, 1e4]}},
    "model": {"d_model": 16, "rope_base": 1e4},
}


@pytest.fixture(scope="module")
def experiment():
    """The experiment on two offsets x two seeds of untrained arm-2 heads and their matched softmax heads: (inputs,
    tables, checks)."""
    def heads(**settings):
        return [({"pe": "rope", "offset": offset, "seed": seed},
                 tiny_head(d_model=16, vocab_size=TASK.vocab_size, seed=seed, **settings).float())
                for offset in (1, 2) for seed in (0, 1)]

    curves = pd.DataFrame([{"offset": offset, "seed": seed, "step": step, "accuracy": step / 100}
                           for offset in (1, 2) for seed in (0, 1) for step in range(1, 101)])
    inputs = {"models": heads(rope_base=1e4), "matched": heads(rope_base=0.05, attention="softmax"), "curves": curves,
              "eval_sets": {offset: eval_sets(offset, lengths=(8, 16, 32), n_samples=64) for offset in (1, 2)}}
    results = linear.analyze(inputs, SETTINGS)
    checks = with_keys(linear.checks({name: results[name] for name in linear.CHECKED}, SETTINGS), "linear", "linear")
    return inputs, results, checks


def test_the_experiment_writes_its_declared_tables(experiment):
    _, results, checks = experiment
    for name in ("linear_by_length", "linear_kernel", "linear_cutoffs", "linear_comparison", "linear_convergence",
                 "linear_training_progress", "linear_min_norm_sweep"):
        tables.to_arrow(results[name], getattr(schemas, name.upper()))
    assert set(results["linear_convergence"]["arm"]) == {linear.CONTROL}  # only arm 1 is trained here
    assert len(results["linear_comparison"]) == 8  # 2 arms x 2 offsets x 2 seeds
    progress = results["linear_training_progress"]
    assert progress.loc[(progress["offset"] == 1) & (progress["seed"] == 0), "until_step"].tolist() == [25, 50, 75, 100]
    assert progress["accuracy"].iloc[0] == pytest.approx(np.arange(1, 26).mean() / 100)
    tables.to_arrow(checks, CLAIMS)
    # arm 1: 4 sanity checks; arm 2: 4 evidence; its matched softmax head: its fit and the pair at each K
    assert len(checks) == 11 and checks["offset"].isna().sum() == 9 and set(checks["offset"].dropna()) == {1, 2}
    by_length = results["linear_by_length"]
    matched = by_length[by_length["arm"] == linear.MATCHED]
    assert set(zip(matched["offset"], matched["seed"])) == {(1, 0), (1, 1), (2, 0), (2, 1)}
    assert len(matched) == len(by_length[by_length["arm"] == linear.HEAD])  # the same lengths as arm 2
    assert set(results["linear_comparison"]["arm"]) == {linear.CONTROL, linear.HEAD}  # no kernel of the matched head
    of_control = checks["claim"].str.startswith(schemas.ARMS[linear.CONTROL])
    assert (checks.loc[of_control, "kind"] == "sanity").all() and (checks.loc[~of_control, "kind"] == "evidence").all()
    assert len(results["linear_min_norm_sweep"]) == 8  # 2 widths x 2 bases x 2 offsets


def test_check_names_carry_no_setting():
    """The same checks under other lengths: only the values and the rule text may change."""
    def keys(train_length_max, lengths):
        by_length = pd.concat([by_length_of(kernel_predictor(min_norm_kernel()), arm=arm)
                               for arm in (linear.CONTROL, linear.HEAD)])
        by_length = by_length[by_length["length"].isin(lengths)]
        comparison = arm_1_comparison(train_regression(CONTROL, TASK, seed=0)[0])
        comparison = pd.concat([comparison, comparison.assign(arm=linear.HEAD)])
        checks = linear.claims_linear(by_length, comparison, train_length_max, TASK.vocab_size)
        return [(check["claim"], check["statistic"]) for check in checks]

    assert keys(8, (8, 16, 32, 64, 128)) == keys(4, (8, 16, 32))


def test_the_section_reports_both_arms_and_their_checks(experiment):
    inputs, results, checks = experiment
    text = linear_prose.section({**inputs, **results}, checks, SETTINGS)
    assert text.startswith("## linear\n") and "(figures/linear_control.png)" in text
    assert "Arm 2, the linear-attention head, tests the claim" in text and "squared" in text
    assert "base 0.05) with its logits" in text and "departs from the sweep's 10000" in text  # arm 2's own base
    assert re.search(r"^\|\s*d\s*\|\s*base\s*\|\s*condition number", text, re.M)  # arm 1's sweep
    kappa = results["linear_comparison"].query("arm == @linear.CONTROL")["condition_number"].max()
    assert f"condition number {kappa:.3g}" in text
    # whether the linear head extrapolates, said plainly from its mean accuracy at 4x against its bar of 4/V
    by_length = results["linear_by_length"]
    head = by_length[(by_length["arm"] == linear.HEAD) & (by_length["length"] == 4 * TASK.train_length_max)]["accuracy"].mean()
    verdict = "does extrapolate" if head > 4 / TASK.vocab_size else "does not extrapolate"
    assert f"has mean accuracy {head:.3f} over seeds and K" in text and f"it {verdict}" in text
    assert "(figures/linear_matched.png)" in text and "Is it the softmax?" in text
    assert "Rule, fixed before any run of this head" in text
    assert all(statistic.replace("|", "\\|") in text for statistic in checks["statistic"])  # a bar escaped in its cell
    first_row = {arm: re.search(rf"^\|\s*{arm}\s*\|\s*1\s*\|", text, re.M).start() for arm in (1, 2)}
    assert first_row[1] < first_row[2]  # arm 1 first


def test_the_figure_shows_each_arms_accuracy_and_its_kernels(experiment):
    _, results, _ = experiment
    figure = linear_plot.draw(results, SETTINGS)["linear_control"]
    by_length = results["linear_by_length"]
    accuracy = figure.axes[0]
    for line in accuracy.get_lines():
        match = re.fullmatch(r"(arm \d), K=(\d)", line.get_label())
        if not match:
            continue
        arm = next(key for key, label in schemas.ARMS.items() if label.startswith(match[1]))
        rows = by_length[(by_length["arm"] == arm) & (by_length["offset"] == int(match[2]))]
        assert list(line.get_ydata()) == pytest.approx(rows.groupby("length")["accuracy"].mean().tolist())
    assert sum(bool(re.fullmatch(r"arm \d, K=\d", line.get_label())) for line in accuracy.get_lines()) == 4
    # Kernel panels, rows 2 and 3, one per K: every kernel is 1 at the target's offset.
    columns = 4
    for row in (1, 2):
        for index, offset in enumerate((1, 2)):
            ax = figure.axes[row * columns + index]
            for line in ax.get_lines()[:2]:
                assert line.get_label() in ("trained", "min-norm")
                assert line.get_ydata()[list(line.get_xdata()).index(offset)] == pytest.approx(1.0)


def test_the_matched_figure_shows_both_heads_accuracy_per_k(experiment):
    """One panel per K; in each, arm 2's and its matched softmax head's mean accuracy over seeds by length, the band
    from the lowest seed to the highest, and a mark at 4 L."""
    _, results, _ = experiment
    figure = linear_plot.draw(results, SETTINGS)["linear_matched"]
    by_length = results["linear_by_length"]
    assert [ax.get_title() for ax in figure.axes] == ["K=1", "K=2"]
    for ax, offset in zip(figure.axes, (1, 2)):
        lines = {line.get_label(): line for line in ax.get_lines()}
        for arm in (linear.HEAD, linear.MATCHED):
            rows = by_length[(by_length["arm"] == arm) & (by_length["offset"] == offset)]
            line = lines[f"{schemas.ARMS[arm]}, 2 seeds"]
            assert list(line.get_xdata()) == [8, 16, 32]
            assert list(line.get_ydata()) == pytest.approx(rows.groupby("length")["accuracy"].mean().tolist())
        assert lines["4x the longest training length"].get_xdata()[0] == 4 * TASK.train_length_max
        assert lines["chance"].get_ydata()[0] == pytest.approx(1 / TASK.vocab_size)


def test_the_headlines_are_arm_2s_accuracy_at_4x_and_its_matched_heads_lead_per_run():
    """By (offset, seed): arm 2's accuracy at 4 L = 32, and the matched head's minus arm 2's of the same run; a run
    the matched head lacks has no lead (no value, rather than arm 2's accuracy negated)."""
    from lengthgen.experiments.linear.headlines import HEADLINES

    headlines = {headline.name: headline for headline in HEADLINES}
    accuracy = headlines["linear: linear-attention head's accuracy at 4x the training length"]
    lead = headlines["linear: matched softmax head's accuracy at 4x the training length minus the linear head's"]
    table = pair_table({(linear.HEAD, 1): [0.5, 0.25], (linear.MATCHED, 1): [0.9, 0.5], (linear.HEAD, 2): [0.125]})
    settings = {"vocab_size": 8, "train_length_max": 8}
    assert accuracy.per_run(table, settings).to_dict() == {(1, 0): 0.5, (1, 1): 0.25, (2, 0): 0.125}
    assert (accuracy.comparison, accuracy.threshold(settings)) == ("<=", thresholds.CHANCE_MULTIPLE / 8)
    assert lead.per_run(table, settings).to_dict() == pytest.approx({(1, 0): 0.4, (1, 1): 0.25})
    assert (lead.comparison, lead.threshold(settings), lead.bounds) == (">=", thresholds.MIN_SOFTMAX_ADVANTAGE, (-1, 1))


def test_the_linear_experiment_reads_its_matched_heads_family():
    from lengthgen.experiments.catalog import CATALOG
    from lengthgen.experiments.declaration import Models

    experiment = next(each for each in CATALOG if each.name == "linear")
    assert experiment.reads["models"] == Models("linear") and experiment.reads["matched"] == Models("linear_softmax")
    assert "linear_matched" in experiment.figures


# --- hand-made cases: each statistic by hand, each check's text ------------------------------------------------

def numpy_basis(n_offsets: int, d_model: int, rope_base: float) -> np.ndarray:
    """[cos(delta theta_i)] + [sin(delta theta_i)], theta_i = base^(-2i/d), written out in numpy."""
    theta = rope_base ** (-np.arange(0, d_model, 2) / d_model)
    angles = np.arange(n_offsets)[:, None] * theta[None, :]
    return np.concatenate([np.cos(angles), np.sin(angles)], axis=1)


def test_weight_statistics_of_an_odd_length_by_hand():
    """T = 5: the last octave is delta >= 5 // 2 = 2 (deltas 2, 3, 4), the target at delta 1 left out of both."""
    weights = torch.tensor([[1.0, -2.0, 4.0, -8.0, 16.0]])  # deltas 4, 3, 2, 1, 0
    stats = linear.weight_statistics(weights, offset=1)
    assert stats["target_weight"].tolist() == [-8.0]
    assert stats["target_abs_weight"].tolist() == [8.0]
    assert stats["distractor_weight"].tolist() == [1 + 2 + 4 + 16]
    assert stats["far_key_weight"].tolist() == pytest.approx([(1 + 2 + 4) / 3])
    stats = linear.weight_statistics(weights, offset=3)  # a target inside the octave leaves it
    assert stats["far_key_weight"].tolist() == pytest.approx([(1 + 4) / 2])


def test_octave_weight_by_hand():
    """Mean |k| over delta in [n // 2, n) without the target: n = 5 keeps deltas 2, 3, 4."""
    values = torch.tensor([100.0, -50.0, 1.0, -3.0, 5.0], dtype=torch.float64)
    assert linear.octave_weight(values, offset=0) == pytest.approx(3.0)
    assert linear.octave_weight(values, offset=3) == pytest.approx(3.0)  # (1 + 5) / 2
    assert linear.octave_weight(values[:4], offset=1) == pytest.approx(2.0)  # n = 4: deltas 2, 3


def test_cosine_by_hand():
    x, y = torch.tensor([1.0, 0.0], dtype=torch.float64), torch.tensor([3.0, 3.0], dtype=torch.float64)
    assert linear.cosine(x, y) == pytest.approx(1 / math.sqrt(2))
    assert linear.cosine(2 * x, -y) == pytest.approx(-1 / math.sqrt(2))


def test_regression_predictor_reads_the_kernel_of_its_coefficients():
    """d = 2 has one block with theta = 1: coefficients (1, 0) are k(delta) = cos(delta), so in a sequence of 3
    the keys at deltas 2, 1, 0 weigh cos 2, cos 1, 1, and each token's output is the weight of its keys."""
    predict = linear.regression_predictor(torch.tensor([1.0, 0.0], dtype=torch.float64),
                                          RegressionConfig(2, 7.0, steps=0, batch_size=0, lr=0.0), vocab_size=3)
    outputs, weights = predict(torch.tensor([[0, 1, 0], [2, 2, 1]]))
    assert np.allclose(weights.numpy(), [[math.cos(2), math.cos(1), 1.0]] * 2)
    assert np.allclose(outputs.numpy(), [[math.cos(2) + 1, math.cos(1), 0.0], [0.0, 1.0, math.cos(2) + math.cos(1)]])


def test_own_token_margins_include_the_value_bias_and_average_each_keys_logits():
    """Value bias (1, 0): token 0's value is (2, 0), token 1's (1, 1); readout rows (3, 0) and (0, -1) give
    logits (6, 0) and (3, -1): margins 6 - 3 = 3 and -1 - 1 = -2. The readout bias is not added per key."""
    model = tiny_head(d_model=2, vocab_size=2)
    with torch.no_grad():
        model.token_embedding.weight.copy_(torch.eye(2, dtype=torch.float64))
        model.value.weight.copy_(torch.eye(2, dtype=torch.float64))
        model.value.bias.copy_(torch.tensor([1.0, 0.0], dtype=torch.float64))
        model.unembedding.weight.copy_(torch.tensor([[3.0, 0.0], [0.0, -1.0]], dtype=torch.float64))
        model.unembedding.bias.copy_(torch.tensor([10.0, -10.0], dtype=torch.float64))
    assert linear.own_token_margins(model).tolist() == pytest.approx([3.0, -2.0])


@pytest.mark.parametrize("pe, attention", [("alibi", "linear"), ("rope", "softmax")])
def test_the_kernel_needs_a_linear_rope_head_and_says_so(pe, attention):
    model = AttentionHead(HeadConfig(3, 8, pe, 16, attention=attention))
    with pytest.raises(ValueError) as error:
        linear.pair_coefficients(model)
    assert str(error.value) == f"the linear control needs pe='rope', attention='linear'; got {pe!r}, {attention!r}"
    with pytest.raises(ValueError, match="the linear control needs"):
        linear.realized_head_kernel(model, 4)


def min_norm_by_numpy(basis: np.ndarray, train_length_max: int, offset: int, rtol: float) -> np.ndarray:
    """The min-norm interpolant from numpy's pseudo-inverse, divided by its value at the offset."""
    target = (np.arange(train_length_max) == offset).astype(float)
    coefficients = np.linalg.pinv(basis[:train_length_max], rcond=rtol) @ target
    return coefficients / (basis[offset] @ coefficients)


def test_cutoff_sweep_by_hand():
    """A trained kernel twice the min-norm one, whose coefficients add a null direction of the training offsets
    as long as the min-norm ones: kernel cosine 1, relative error 1, coefficient cosine and row-space fraction
    1/sqrt 2, norm ratio sqrt 2. The cut-off 0.5 keeps the singular values above half the largest."""
    n, d, base, length, offset = 32, 16, 0.05, 8, 2
    basis = numpy_basis(n, d, base)
    exact = min_norm_by_numpy(basis, length, offset, 0.0)
    null = np.linalg.svd(basis[:length])[2][-1]  # a direction no training offset sees
    coefficients = exact + np.linalg.norm(exact) * null
    kernel_values = 2 * basis @ exact
    sweep = linear.cutoff_sweep(torch.tensor(coefficients), torch.tensor(kernel_values), d, base, offset, length,
                                (0.0, 0.5))
    row = sweep.iloc[0]
    assert row["rtol"] == 0.0 and row["rank"] == length
    assert row["min_norm_norm"] == pytest.approx(np.linalg.norm(exact))
    assert row["min_norm_fit_error"] < 1e-10
    assert row["kernel_cosine"] == pytest.approx(1.0)
    assert row["max_kernel_error"] == pytest.approx(np.abs(basis @ exact).max())
    assert row["relative_error"] == pytest.approx(1.0)
    assert row["coefficient_cosine"] == pytest.approx(1 / math.sqrt(2))
    assert row["norm_ratio"] == pytest.approx(math.sqrt(2))
    assert row["row_space_fraction"] == pytest.approx(1 / math.sqrt(2))
    far = [abs(value) for delta, value in enumerate(basis @ exact) if delta >= n // 2 and delta != offset]
    assert row["min_norm_far_key_weight"] == pytest.approx(np.mean(far))
    sigma = np.linalg.svd(basis[:length], compute_uv=False)
    cut = min_norm_by_numpy(basis, length, offset, 0.5)
    row = sweep.iloc[1]
    assert row["rtol"] == 0.5 and row["rank"] == (sigma > 0.5 * sigma[0]).sum() < length
    assert row["min_norm_norm"] == pytest.approx(np.linalg.norm(cut))
    ideal = np.arange(length) == offset
    assert row["min_norm_fit_error"] == pytest.approx(np.abs((basis @ cut)[:length] - ideal).max())


def test_compare_by_hand():
    """A raw kernel of 4 at the target K = 2, 1 at the training offset 5 and -2 at delta 30: in target units
    0.25 off on the training range, and mean |k| 0.5 / 20 over the last octave [20, 40). The kernel table
    plots deltas 0..4 L - 1 = 31, each kernel 1 at K; the comparison is at the cut-off asked for."""
    n, d, base, length, offset = 40, 16, 0.05, 8, 2
    kernel_values = torch.zeros(n, dtype=torch.float64)
    kernel_values[offset], kernel_values[5], kernel_values[30] = 4.0, 1.0, -2.0
    coefficients = torch.ones(d, dtype=torch.float64)
    sweep, comparison, kernels = linear.compare(coefficients, kernel_values, d, base, offset, length, (0.0, 0.5), 0.0)
    assert len(comparison) == 1
    row = comparison.iloc[0]
    assert row["rtol"] == 0.0
    assert row["trained_target_kernel"] == 4.0
    assert row["trained_fit_error"] == pytest.approx(0.25)
    assert row["trained_far_key_weight"] == pytest.approx(0.5 / 20)
    assert row["condition_number"] == pytest.approx(np.linalg.cond(numpy_basis(length, d, base)))
    assert row["norm_ratio"] == pytest.approx(0.25 * math.sqrt(d) / np.linalg.norm(min_norm_by_numpy(
        numpy_basis(n, d, base), length, offset, 0.0)))  # the coefficients in target units too
    assert comparison.iloc[0].drop(["condition_number", "trained_target_kernel", "trained_fit_error",
                                    "trained_far_key_weight"]).to_dict() == sweep.iloc[0].to_dict()
    assert kernels["solution"].tolist() == ["trained"] * 32 + ["min_norm"] * 32
    assert kernels["delta"].tolist() == list(range(32)) * 2
    assert kernels.loc[kernels["solution"] == "trained", "kernel"].tolist() == (kernel_values[:32] / 4).tolist()
    min_norm = numpy_basis(32, d, base) @ min_norm_by_numpy(numpy_basis(n, d, base), length, offset, 0.0)
    assert kernels.loc[kernels["solution"] == "min_norm", "kernel"].to_numpy() == pytest.approx(min_norm)
    _, at_cut, _ = linear.compare(coefficients, kernel_values, d, base, offset, length, (0.0, 0.5), 0.5)
    assert at_cut["rtol"].tolist() == [0.5]
    _, short, short_kernels = linear.compare(coefficients, kernel_values[:20], d, base, offset, length, (0.0,), 0.0)
    assert short_kernels["delta"].tolist() == list(range(20)) * 2  # fewer offsets than 4 L: every one


def test_convergence_by_hand():
    """Snapshots of w = the min-norm solution, twice it, and it plus a null direction: each kernel divided by its
    value at K, the first two are the closed form exactly, the third differs by the null direction's kernel."""
    n, d, base, length, offset = 32, 16, 0.05, 8, 2
    basis = numpy_basis(n, d, base)
    exact = min_norm_by_numpy(basis, length, offset, 0.0)
    null = np.linalg.svd(basis[:length])[2][-1]
    snapshots = torch.tensor(np.stack([exact, 2 * exact, exact + null]))
    result = linear.convergence(snapshots, torch.tensor(basis), offset, length)
    reference = basis @ exact
    other = basis @ (exact + null)
    other = other / other[offset]
    assert result["kernel_cosine"][:2] == pytest.approx([1.0, 1.0])
    assert result["kernel_cosine"][2] == pytest.approx(other @ reference / np.linalg.norm(other) / np.linalg.norm(reference))
    assert result["max_kernel_error"] == pytest.approx([0.0, 0.0, np.abs(other - reference).max()], abs=1e-9)
    assert result["max_kernel_error"][2] > 0.1


def test_in_range_includes_both_ends_of_the_training_range():
    frame = linear.in_range(pd.DataFrame({"length": [3, 4, 8, 9]}), TASK)  # lengths 4..8
    assert frame["in_training_range"].tolist() == [False, True, True, False]


def test_training_progress_by_hand():
    """10 steps in 4 windows end at steps 10 * 1 // 4 = 2, 5, 7 and 10; each window's mean accuracy."""
    curves = pd.DataFrame({"offset": 1, "seed": 0, "step": range(1, 11), "accuracy": [0.1 * s for s in range(1, 11)]})
    progress = linear.training_progress(curves)
    assert progress["until_step"].tolist() == [2, 5, 7, 10]
    assert progress["until_step"].dtype.kind == "i"
    assert progress["accuracy"].tolist() == pytest.approx([0.15, 0.4, 0.65, 0.9])
    halves = linear.training_progress(curves, parts=2)
    assert halves["until_step"].tolist() == [5, 10] and halves["accuracy"].tolist() == pytest.approx([0.3, 0.8])


def by_length_table(rows) -> pd.DataFrame:
    """(length, accuracy, far_key_weight[, seed]) rows of one arm-2 run at offset 2; in range: lengths 4..8."""
    frame = pd.DataFrame(rows, columns=["length", "accuracy", "far_key_weight", "seed"][:len(rows[0])])
    frame = frame.assign(arm=linear.HEAD, offset=2, **({} if "seed" in frame else {"seed": 0}))
    return linear.in_range(frame, TASK)


def test_far_weight_ratio_by_hand():
    """Reference length 16 (the first >= 2 L), far length 64: the means over seeds, 0.15 / 0.3 = 0.5. A reference
    weight below 1 is a weight; only 0 is none (NaN, not inf)."""
    table = by_length_table([(8, 1.0, 9.0, 0), (16, 1.0, 0.2, 0), (16, 1.0, 0.4, 1), (32, 1.0, 5.0, 0),
                             (64, 1.0, 0.1, 0), (64, 1.0, 0.2, 1)])
    assert linear.far_weight_ratio(table, 8) == pytest.approx(0.5)
    nothing = table.assign(far_key_weight=np.where(table["length"] == 16, 0.0, 0.3))
    assert math.isnan(linear.far_weight_ratio(nothing, 8))


def test_accuracy_at_a_length_and_its_message_when_absent():
    table = by_length_table([(8, 0.5, 0.0, 0), (32, 0.25, 0.0, 0), (32, 0.75, 0.0, 1)])
    assert linear.accuracy_at(table, 32) == pytest.approx(0.5)
    with pytest.raises(ValueError) as error:
        linear.accuracy_at(table, 16)
    assert str(error.value) == "no evaluation at length 16 (EXTRAPOLATION_FACTOR x train_length_max)"


def pair_table(far: dict, fit: dict | None = None) -> pd.DataFrame:
    """Arm 2 and its matched softmax head (V = 8, L = 8): ``far[(arm, offset)]`` their accuracies at 4 L = 32 per
    seed, ``fit[(arm, offset)]`` seed 0's accuracy at in-range length 4 (1.0 where not given, and for other seeds)."""
    fit = fit or {}
    frames = [by_length_table([row for seed, accuracy in enumerate(accuracies)
                               for row in ((4, fit.get((arm, offset), 1.0) if seed == 0 else 1.0, 0.0, seed),
                                           (8, 1.0, 0.0, seed), (32, accuracy, 0.0, seed))]).assign(arm=arm, offset=offset)
              for (arm, offset), accuracies in far.items()]
    return pd.concat(frames, ignore_index=True)


def test_the_pair_holds_per_k_where_the_softmax_head_leads_by_the_margin():
    """Per K, the matched head's mean accuracy at 4 L minus arm 2's against 0.25 (inclusive): K=1 leads by
    (0.9 + 0.6)/2 - (0.5 + 0.5)/2 = 0.25 and holds, K=2 by 0.2 and does not; the matched head's fit pooled first."""
    table = pair_table({(linear.HEAD, 1): [0.5, 0.5], (linear.MATCHED, 1): [0.9, 0.6],
                        (linear.HEAD, 2): [0.5, 0.6], (linear.MATCHED, 2): [0.7, 0.8]})
    fit, *pairs = linear.matched_checks(table, 8)
    assert (fit["claim"], fit["value"], fit["holds"], fit["offset"]) == (
        "matched softmax head (arm 2's base): fits the training range (precondition)", 1.0, True, None)
    assert [check["claim"] for check in pairs] == [
        "matched softmax head (arm 2's base): arm 2's shortfall against it is the softmax's, not the base's"] * 2
    assert [check["statistic"] for check in pairs] == [
        "matched softmax head's mean accuracy at 4x the longest training length minus arm 2's"] * 2
    assert [check["offset"] for check in pairs] == [1, 2]
    assert [check["value"] for check in pairs] == pytest.approx([0.25, 0.2])
    assert [(check["comparison"], check["threshold"]) for check in pairs] == [(">=", thresholds.MIN_SOFTMAX_ADVANTAGE)] * 2
    assert [check["holds"] for check in pairs] == [True, False]
    assert [check["rule"] for check in pairs] == [">= 0.25 (n=32)"] * 2
    # The softmax head behind arm 2 (the pair reversed) fails: the rule is one-sided.
    reversed_pair = pair_table({(linear.HEAD, 1): [0.9, 0.6], (linear.MATCHED, 1): [0.5, 0.5]})
    assert linear.matched_checks(reversed_pair, 8)[1]["value"] == pytest.approx(-0.25)
    assert not linear.matched_checks(reversed_pair, 8)[1]["holds"]


def test_the_pair_is_not_judged_at_a_k_where_either_head_misses_its_range():
    """A lead of 0.4 at both K; at K=2 one seed of the matched head (then of arm 2) is at 0.98 at an in-range length:
    K=2 is not judged (NaN, does not hold, the rule says why), K=1 still is; the matched head's fit fails."""
    far = {(linear.HEAD, 1): [0.5, 0.5], (linear.MATCHED, 1): [0.9, 0.9],
           (linear.HEAD, 2): [0.5, 0.5], (linear.MATCHED, 2): [0.9, 0.9]}
    for unfit in (linear.MATCHED, linear.HEAD):
        fit, first, second = linear.matched_checks(pair_table(far, {(unfit, 2): 0.98}), 8)
        assert fit["holds"] == (unfit == linear.HEAD)
        assert first["holds"] and first["value"] == pytest.approx(0.4)
        assert math.isnan(second["value"]) and not second["holds"]
        assert second["rule"] == "not judged: a head of the pair does not fit its range (>= 0.25 (n=32))"
    # A K without the matched head's rows is no pass either.
    alone = pair_table({(linear.HEAD, 1): [0.5, 0.5]})
    assert not any(check["holds"] for check in linear.matched_checks(alone, 8))


def control_comparison(**columns) -> pd.DataFrame:
    return pd.DataFrame({"arm": linear.CONTROL, "offset": [1, 2], "seed": 0, **columns})


def test_control_checks_by_hand():
    """Arm 1's four sanity checks: the worst run's condition number, cosine and error; the mean in-range accuracy."""
    table = by_length_table([(4, 0.8, 0.0), (8, 1.0, 0.0), (16, 0.0, 0.0), (64, 0.0, 0.0)])
    comparison = control_comparison(condition_number=[3.0, 7.5], kernel_cosine=[0.9995, 0.9991],
                                    max_kernel_error=[0.002, 0.01])
    checks = linear.control_checks(table, comparison, 8)
    label = "arm 1 (min-norm control)"
    assert [check["claim"] for check in checks] == [
        f"{label}: the min-norm interpolant is well-posed", f"{label}: fits the training range",
        f"{label}: training selects the min-norm interpolant (shape)",
        f"{label}: training selects the min-norm interpolant (values)"]
    assert [check["statistic"] for check in checks] == [
        "condition number of the rotary basis over the training offsets", "mean accuracy at in-range lengths",
        "lowest kernel cosine, trained vs closed form, over every evaluated offset",
        "largest max |trained - closed form| over every evaluated offset (target = 1)"]
    assert [check["value"] for check in checks] == pytest.approx([7.5, 0.9, 0.9991, 0.01])
    assert [check["comparison"] for check in checks] == ["<=", ">=", ">=", "<="]
    assert [check["threshold"] for check in checks] == [100.0, 0.9, 0.999, 0.01]
    assert [check["rule"] for check in checks] == ["<= 100 (offsets 0..7)", ">= 0.9", ">= 0.999", "<= 0.01"]
    assert [check["holds"] for check in checks] == [True, True, True, True]  # each at or inside its bound
    assert {check["kind"] for check in checks} == {"sanity"}
    assert all(check["offset"] is None for check in checks)


def head_comparison(relative_error) -> pd.DataFrame:
    return pd.DataFrame({"arm": linear.HEAD, "offset": 2, "seed": [0, 1], "relative_error": relative_error})


HEAD_ROWS = [(4, 0.99, 0.0, 0), (8, 1.0, 0.0, 0), (4, 1.0, 0.0, 1), (8, 1.0, 0.0, 1), (16, 0.3, 0.2, 0),
             (16, 0.3, 0.4, 1), (32, 0.25, 0.3, 0), (32, 0.75, 0.3, 1), (64, 0.2, 0.3, 0), (64, 0.2, 0.3, 1)]


def test_head_checks_by_hand():
    """Arm 2 on two seeds (V = 8, L = 8): worst in-range accuracy 0.99 fits (the bound is inclusive); the mean
    accuracy 0.5 at 4 L = 32 against 4/V = 0.5; the far weight 0.3 at n = 64 over 0.3 at n = 16; the worst
    relative kernel error. Texts, comparisons and rules by hand."""
    checks = linear.head_checks(by_length_table(HEAD_ROWS), head_comparison([0.1, 0.3]), 8, 8)
    label = "arm 2 (linear-attention head)"
    assert [check["claim"] for check in checks] == [
        f"{label}: fits the training range (precondition)", f"{label}: does not extrapolate",
        f"{label}: distractor weight per key past the range does not decay",
        f"{label}: its kernel is the min-norm interpolant"]
    assert [check["statistic"] for check in checks] == [
        "lowest accuracy over every in-range length, offset and seed",
        "mean accuracy at 4x the longest training length",
        "mean |weight| per key in [n/2, n) at the longest length over that at the first length >= 2 L",
        "largest |trained - min-norm| / |min-norm| over every evaluated offset, at each run's most favourable cut-off"]
    assert [check["value"] for check in checks] == pytest.approx([0.99, 0.5, 1.0, 0.3])
    assert [check["comparison"] for check in checks] == [">=", "<=", ">=", "<="]
    assert [check["threshold"] for check in checks] == pytest.approx([0.99, 0.5, 0.5, math.sqrt(0.2)])
    assert [check["rule"] for check in checks] == [">= 0.99", "<= 4/V = 0.5 (n=32)", ">= 0.5 (n=64 over n=16)",
                                                    "<= 0.447"]
    assert [check["holds"] for check in checks] == [True, True, True, True]
    assert {check["kind"] for check in checks} == {"evidence"} and all(check["per_seed"] for check in checks)
    # Just below the fit bound: nothing past it is judged, and each rule says why.
    unfit = by_length_table([(4, 0.98, 0.0, 0), *HEAD_ROWS[1:]])
    checks = linear.head_checks(unfit, head_comparison([0.1, 0.3]), 8, 8)
    assert [check["rule"] for check in checks[1:]] == [
        "not judged: arm 2 does not fit its range (<= 4/V = 0.5 (n=32))",
        "not judged: arm 2 does not fit its range (>= 0.5 (n=64 over n=16))",
        "not judged: arm 2 does not fit its range (<= 0.447)"]
    assert all(math.isnan(check["value"]) for check in checks[1:])


def test_min_norm_sweep_by_hand():
    """Per (d, base, offset), offsets in ascending order, at the longest evaluation length: the cut-off, the rank
    and condition number of the training basis, the far weight of the min-norm kernel, and its accuracy, from
    numpy (each token's output the summed kernel at its keys' deltas). L = 12, d = 32: the cut-off leaves rank 10."""
    lengths, length, d, base = (16, 24), 24, 32, 1e4
    sets = {offset: {n: make_eval_set(0, offset, n, 40, 4) for n in lengths} for offset in (3, 1)}
    sweep = linear.min_norm_sweep([d], [base], 12, sets, 4)
    assert sweep["offset"].tolist() == [1, 3]
    basis = numpy_basis(length, d, base)
    sigma = np.linalg.svd(basis[:12], compute_uv=False)
    for row in sweep.itertuples():
        kernel_values = basis @ min_norm_by_numpy(basis, 12, row.offset, linear.SWEEP_CUTOFF)
        assert (row.d_model, row.rope_base, row.length, row.rtol) == (d, base, length, min(thresholds.LINEAR_CUTOFFS))
        assert row.rank == (sigma > linear.SWEEP_CUTOFF * sigma[0]).sum() < 12  # this base is ill-conditioned
        assert row.condition_number == pytest.approx(sigma[0] / sigma[-1], rel=1e-3)
        far = [abs(v) for delta, v in enumerate(kernel_values) if delta >= length // 2 and delta != row.offset]
        assert row.far_key_weight == pytest.approx(np.mean(far), rel=1e-6)
        tokens, targets = (t.numpy() for t in sets[row.offset][length])
        weights = kernel_values[::-1]  # position t is delta length - 1 - t
        outputs = np.stack([np.array([weights[seq == token].sum() for token in range(4)]) for seq in tokens])
        assert row.accuracy == pytest.approx((outputs.argmax(1) == targets).mean())


def test_evaluate_weights_over_several_chunks_by_hand():
    """At length 8192 a chunk holds 2^17 / 8192 = 16 sequences, so 40 sequences take three. A predictor that
    outputs each sequence's own target and weighs each key by its token id: accuracy 1 only if every chunk is
    scored against its own targets, and each statistic the mean over all 40 sequences, from numpy. Lengths come
    back in ascending order whatever the order of the evaluation sets."""
    offset, vocab = 3, 5

    def predict(tokens):
        return F.one_hot(tokens[:, -1 - offset], vocab).double(), tokens.double()

    sets = {8192: make_eval_set(0, offset, 8192, 40, vocab), 8: make_eval_set(0, offset, 8, 7, vocab)}
    table = linear.evaluate_weights(predict, sets, offset)
    assert table["length"].tolist() == [8, 8192]
    assert table["accuracy"].tolist() == [1.0, 1.0]
    for row in table.itertuples():
        tokens = sets[row.length][0].numpy().astype(float)
        deltas = np.arange(row.length)[::-1]
        octave = (deltas >= row.length // 2) & (deltas != offset)
        assert row.target_weight == pytest.approx(tokens[:, -1 - offset].mean())
        assert row.target_abs_weight == pytest.approx(tokens[:, -1 - offset].mean())
        assert row.distractor_weight == pytest.approx(np.delete(tokens, -1 - offset, axis=1).sum(1).mean())
        assert row.far_key_weight == pytest.approx(tokens[:, octave].mean(1).mean())
    wrong = {8192: (sets[8192][0], sets[8192][1].roll(1))}  # targets of other sequences
    assert linear.evaluate_weights(predict, wrong, offset)["accuracy"].item() < 0.5


def test_the_experiment_holds_both_arms_of_every_run(experiment):
    """Each table has every (arm, offset, seed) it should: both arms' rows of by_length, cutoffs, comparison and
    kernel (arm 1 at its full grid with the exact pseudo-inverse first, arm 2 at the cut-offs), arm 1's
    convergence history that of its own seed's SGD, its comparison at the exact solution, arm 2's at its
    lowest relative error; the kernels over deltas 0..min(longest length, 4 L) - 1; the sweep at the
    longest evaluation length."""
    _, results, _ = experiment
    runs = {(arm, offset, seed) for arm in (linear.CONTROL, linear.HEAD) for offset in (1, 2) for seed in (0, 1)}
    for name in ("linear_cutoffs", "linear_comparison", "linear_kernel"):
        assert set(map(tuple, results[name][["arm", "offset", "seed"]].to_numpy())) == runs, name
    matched = {(linear.MATCHED, offset, seed) for offset in (1, 2) for seed in (0, 1)}
    assert set(map(tuple, results["linear_by_length"][["arm", "offset", "seed"]].to_numpy())) == runs | matched
    by_length = results["linear_by_length"]
    assert sorted(set(by_length["length"])) == [8, 16, 32]
    assert by_length.groupby("length")["in_training_range"].all().to_dict() == {8: True, 16: False, 32: False}
    cutoffs = results["linear_cutoffs"]
    for (arm, offset, seed), rows in cutoffs.groupby(["arm", "offset", "seed"]):
        expected = (0.0, *thresholds.LINEAR_CUTOFFS) if arm == linear.CONTROL else thresholds.LINEAR_CUTOFFS
        assert rows["rtol"].tolist() == list(expected)
    comparison = results["linear_comparison"].set_index(["arm", "offset", "seed"])
    for (arm, offset, seed), rows in cutoffs.groupby(["arm", "offset", "seed"]):
        chosen = 0.0 if arm == linear.CONTROL else rows.loc[rows["relative_error"].idxmin(), "rtol"]
        assert comparison.loc[(arm, offset, seed), "rtol"] == chosen
    kernel = results["linear_kernel"]
    for _, rows in kernel.groupby(["arm", "offset", "seed", "solution"]):
        assert rows["delta"].tolist() == list(range(32))
    control = RegressionConfig(16, 0.05, steps=400, batch_size=64, lr=0.05, log_every=50)
    convergence = results["linear_convergence"]
    for offset, seed in [(2, 1)]:  # its own seed and offset
        _, history, _ = train_regression(control, TaskConfig(TASK.vocab_size, offset, 4, 8), seed)
        rows = convergence[(convergence["offset"] == offset) & (convergence["seed"] == seed)]
        assert rows["loss"].tolist() == history["loss"].tolist()
    sweep = results["linear_min_norm_sweep"]
    assert (sweep["length"] == 32).all() and sorted(set(sweep["d_model"])) == [16, 64]


def test_analyze_names_each_arm_1_run_in_its_log_and_leaves_the_settings_alone(caplog):
    """One run (offset 2, seed 3): the log line that says which control is training, the seven tables, and the
    settings as they were (the sweep's lists are popped from a copy)."""
    settings = {"task": {"vocab_size": 8, "train_length_min": 4, "train_length_max": 8, "eval_lengths": [8, 16]},
                "linear": {"min_norm": {"d_model": 16, "rope_base": 0.05, "steps": 2, "batch_size": 4, "lr": 0.05,
                                        "log_every": 1, "sweep_d_model": [16], "sweep_rope_base": [0.05]}}}
    before = copy.deepcopy(settings)
    runs = [({"pe": "rope", "offset": 2, "seed": 3}, tiny_head(d_model=16, vocab_size=8, seed=3, rope_base=0.05).float())]
    matched = [(run, tiny_head(d_model=16, vocab_size=8, seed=3, rope_base=0.05, attention="softmax").float())
               for run, _ in runs]
    curves = pd.DataFrame({"offset": 2, "seed": 3, "step": range(1, 5), "accuracy": 0.5})
    inputs = {"models": runs, "matched": matched, "curves": curves,
              "eval_sets": {2: eval_sets(2, lengths=(8, 16), n_samples=16)}}
    with caplog.at_level(logging.INFO, logger=linear.log.name):
        results = linear.analyze(inputs, settings)
    assert [record.getMessage() for record in caplog.records if record.name == linear.log.name] == [
        "arm 1: training the min-norm control for seed 3, offset 2"]
    assert set(results) == {"linear_by_length", "linear_cutoffs", "linear_comparison", "linear_convergence",
                            "linear_kernel", "linear_training_progress", "linear_min_norm_sweep"}
    assert settings == before
    assert results["linear_convergence"]["step"].tolist() == [1, 2]  # the control's own steps and log_every


def test_claims_linear_reads_each_arm_from_its_own_rows():
    """Arm 1's sanity checks from arm 1's rows only, arm 2's evidence from arm 2's, the pair's from arm 2's and its
    matched softmax head's: the tables differ in every column a check reads, and each value is its own arm's."""
    head = by_length_table(HEAD_ROWS)
    control = head.assign(arm=linear.CONTROL, accuracy=0.5)
    matched = head.assign(arm=linear.MATCHED, accuracy=0.995)
    comparison = pd.concat([control_comparison(condition_number=[3.0, 7.5], kernel_cosine=[0.9995, 0.9991],
                                               max_kernel_error=[0.002, 0.01], relative_error=9.0),
                            head_comparison([0.1, 0.3]).assign(condition_number=1e9, kernel_cosine=-1.0,
                                                               max_kernel_error=5.0)], ignore_index=True)
    checks = linear.claims_linear(pd.concat([control, head, matched], ignore_index=True), comparison, 8, 8)
    assert [check["value"] for check in checks] == pytest.approx(
        [7.5, 0.5, 0.9991, 0.01, 0.99, 0.5, 1.0, 0.3, 0.995, 0.995 - 0.5])
    assert [check["kind"] for check in checks] == ["sanity"] * 4 + ["evidence"] * 6


def test_comparison_lengths_by_hand_and_the_message_without_two_past_the_range():
    """(first length >= 2 L, longest length), lengths in any order and repeated; 2 L itself counts. Fewer than
    two lengths at or past 2 L: the message names the bound and the lengths."""
    assert linear_summaries.comparison_lengths([64, 8, 16, 16, 32], 8) == (16, 64)
    assert linear_summaries.comparison_lengths([15, 17, 40], 8) == (17, 40)
    for lengths in ([8, 15, 16], [8, 12]):
        with pytest.raises(ValueError) as error:
            linear_summaries.comparison_lengths(lengths, 8)
        assert str(error.value) == f"need two evaluation lengths >= 2 x train_length_max = 16, got {sorted(lengths)}"


def test_convergence_is_measured_against_the_pseudo_inverse_without_a_cut_off():
    """At base 1e4 the 16 training offsets' basis is ill-conditioned (condition ~1e19), so a pseudo-inverse with
    torch's default cut-off is another interpolant. A snapshot at the cut-off-free solution (arm 1's reference,
    EXACT) has kernel cosine 1 with the reference; one at the default cut-off does not."""
    basis = rotary_basis(torch.arange(48), 16, 1e4)
    target = interpolation_target(16, 2)
    exact = min_norm_solution(basis[:16], target, 0.0)
    default_cutoff = torch.linalg.pinv(basis[:16]) @ target
    result = linear.convergence(torch.stack([exact, default_cutoff]), basis, 2, 16)
    assert result["kernel_cosine"][0] == pytest.approx(1.0, abs=1e-6)
    assert result["kernel_cosine"][1] < 0.999


def test_head_predictor_moves_the_tokens_to_the_heads_device():
    """The evaluation sets live on the CPU; the predictor sends each chunk to the head's device (on the meta
    device, which stands in for a GPU here, CPU tokens make the head's index_add fail)."""
    model = AttentionHead(HeadConfig(3, 8, "rope", 256, rope_base=10.0, attention="linear")).to("meta")
    outputs, weights = linear.head_predictor(model)(torch.randint(3, (2, 5)))
    assert outputs.device.type == weights.device.type == "meta" and tuple(weights.shape) == (2, 5)


def test_min_norm_sweep_leaves_the_target_out_of_the_far_weight():
    """At a length of 8 the last octave is deltas 4..7, which holds the target K = 5 (weight 1): the far weight is
    the mean |k| over deltas 4, 6 and 7 only."""
    sets = {5: {8: make_eval_set(0, 5, 8, 10, 4)}}
    sweep = linear.min_norm_sweep([16], [0.05], 8, sets, 4)
    basis = numpy_basis(8, 16, 0.05)
    kernel_values = basis @ min_norm_by_numpy(basis, 8, 5, linear.SWEEP_CUTOFF)
    assert sweep["far_key_weight"].item() == pytest.approx(np.mean(np.abs(kernel_values[[4, 6, 7]])), abs=1e-9)


def test_compare_plots_the_min_norm_kernel_at_the_chosen_cut_off_and_leaves_the_target_out_of_the_far_weight():
    """At base 1e4 the cut-off changes the min-norm kernel: the kernel table's min-norm curve is the one at the
    cut-off compared (1e-2 here, from numpy), not at torch's default. A kernel of 4 offsets with K = 2: its last
    octave (deltas 2, 3) holds the target, so the trained far weight is |k(3)| / k(2) = 0.5 alone."""
    n, d, base, length, offset = 32, 16, 1e4, 8, 2
    kernel_values = torch.zeros(n, dtype=torch.float64)
    kernel_values[offset] = 1.0
    _, comparison, kernels = linear.compare(torch.ones(d, dtype=torch.float64), kernel_values, d, base, offset, length,
                                            (0.0, 1e-2), 1e-2)
    assert comparison["rtol"].tolist() == [1e-2]
    expected = numpy_basis(n, d, base) @ min_norm_by_numpy(numpy_basis(n, d, base), length, offset, 1e-2)
    assert kernels.loc[kernels["solution"] == "min_norm", "kernel"].to_numpy() == pytest.approx(expected, abs=1e-9)
    short = torch.tensor([0.0, 0.0, 4.0, 2.0], dtype=torch.float64)
    _, comparison, _ = linear.compare(torch.ones(d, dtype=torch.float64), short, d, 0.05, offset, 4, (0.0,), 0.0)
    assert comparison["trained_far_key_weight"].item() == pytest.approx(0.5)


def test_cutoff_sweep_row_space_fraction_at_its_cut_off_and_far_weight_without_the_target():
    """At the cut-off 0.5 the row space is that of the singular values above half the largest: the fraction of
    the trained coefficients in it, from numpy's SVD. Over 4 offsets with K = 2 the min-norm kernel is the ideal
    (0, 0, 1, 0), whose last octave (deltas 2, 3) holds the target: its far weight is |k(3)| = 0 alone."""
    n, d, base, length, offset = 32, 16, 0.05, 8, 2
    basis = numpy_basis(n, d, base)
    coefficients = np.random.default_rng(0).normal(size=d)
    sweep = linear.cutoff_sweep(torch.tensor(coefficients), torch.tensor(basis @ coefficients), d, base, offset, length,
                                (0.5,))
    _, sigma, vh = np.linalg.svd(basis[:length])
    kept = vh[:len(sigma)][sigma > 0.5 * sigma[0]]
    fraction = np.linalg.norm(kept @ coefficients) / np.linalg.norm(coefficients)
    assert sweep["row_space_fraction"].item() == pytest.approx(fraction) and fraction < 0.9
    short = numpy_basis(4, d, base)
    sweep = linear.cutoff_sweep(torch.ones(d, dtype=torch.float64), torch.tensor(short @ np.ones(d)), d, base, offset, 4,
                                (0.0,))
    assert sweep["min_norm_far_key_weight"].item() == pytest.approx(0.0, abs=1e-9)


def test_arm_1_is_compared_with_the_exact_interpolant_even_on_an_ill_conditioned_basis():
    """Arm 1's reference is the cut-off-free pseudo-inverse (EXACT), not its most favourable cut-off: at base 1e4
    the cut-offs give different interpolants, and the comparison row is still the one at 0."""
    config = RegressionConfig(16, 1e4, steps=5, batch_size=16, lr=0.05, log_every=5)
    tables = linear.analyze_control(config, TASK, 0, eval_sets(lengths=(8, 16), n_samples=16), 32)
    assert tables["comparison"]["rtol"].tolist() == [0.0]
    assert tables["cutoffs"]["relative_error"].idxmin() != 0  # another cut-off would have read better


def seed_rows(seed: int, in_range: float, far: float, weights: tuple[float, float]) -> list[tuple]:
    """One run's (length, accuracy, far_key_weight, seed) rows: in-range accuracy at 4 and 8 (the lower at 4), the
    accuracy at 4 L = 32, the last octave's weight at the reference length 16 and at the longest, 64."""
    return [(4, in_range, 0.0, seed), (8, 1.0, 0.0, seed), (16, 0.5, weights[0], seed), (32, far, 0.1, seed),
            (64, 0.2, weights[1], seed)]


def test_the_bootstrap_by_seed_sums_gives_the_recomputed_intervals_outcomes_and_seed_counts():
    """Four seeds, each failing some check alone: seed 1 is ill-posed, off the closed form, and its control misses
    the range; seed 2's head misses its range (so no resample drawing it judges the head past it) and its control's
    cosine is low; seed 3 has no reference weight (alone: no ratio, NaN); the mean accuracy at 4 L and the kernel error
    straddle their bounds. Every resample's values, outcomes and per-seed counts are the recomputed ones."""
    head = by_length_table([row for seed, (fit, far, weights) in enumerate(
        [(1.0, 0.3, (0.4, 0.1)), (1.0, 0.6, (0.2, 0.3)), (0.98, 0.5, (0.3, 0.2)), (1.0, 0.7, (0.0, 0.1))])
        for row in seed_rows(seed, fit, far, weights)])
    control = by_length_table([row for seed, fit in enumerate([1.0, 0.7, 1.0, 0.95])
                               for row in seed_rows(seed, fit, 0.2, (0.3, 0.3))]).assign(arm=linear.CONTROL)
    # The matched softmax head: seed 3 misses its range; at 4 L it leads arm 2 by 0.4, 0.1, 0.4, 0.2, so over the
    # seeds both heads fit (0 and 1) the mean lead straddles 0.25.
    matched = by_length_table([row for seed, (fit, far) in enumerate([(1.0, 0.7), (1.0, 0.7), (1.0, 0.9), (0.98, 0.9)])
                               for row in seed_rows(seed, fit, far, (0.3, 0.3))]).assign(arm=linear.MATCHED)
    comparison = pd.concat([
        pd.DataFrame({"arm": linear.CONTROL, "offset": 2, "seed": range(4), "condition_number": [3.0, 150.0, 3.0, 3.0],
                      "kernel_cosine": [0.9995, 0.9999, 0.998, 0.9999],
                      "max_kernel_error": [0.002, 0.02, 0.001, 0.003]}),
        pd.DataFrame({"arm": linear.HEAD, "offset": 2, "seed": range(4), "relative_error": [0.3, 0.6, 0.2, 0.4]})],
        ignore_index=True)
    settings = {"task": {"train_length_max": 8, "vocab_size": 8}}

    def summed(**tables):
        return with_keys(linear.checks(tables, settings), "linear", "linear")

    tables = {"linear_by_length": pd.concat([control, head, matched], ignore_index=True),
              "linear_comparison": comparison}
    spreads = [seed_bootstrap(claims_of, tables, resamples=200, seed=0)
               for claims_of in (summed, lambda **resampled: summed(**resampled).assign(seed_sums=None))]
    exact = [column for column in spreads[0].columns if column not in ("spread_low", "spread_high")]
    pd.testing.assert_frame_equal(spreads[0][exact], spreads[1][exact])
    for column in ("spread_low", "spread_high"):
        np.testing.assert_allclose(spreads[0][column], spreads[1][column], rtol=1e-14, atol=0)
    assert spreads[0]["holds_fraction"].between(0, 1, inclusive="neither").all()  # every outcome moves
    # alone, seed 2 is not judged past its range and seed 3 has no reference weight (no ratio)
    # alone, the pair is not judged on seed 2 (arm 2 misses its range) nor seed 3 (its matched head does)
    assert spreads[0]["seeds_checked"].tolist() == [4, 4, 4, 4, 4, 3, 2, 3, 4, 2]
