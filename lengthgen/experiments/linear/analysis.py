"""linear: without softmax normalization, does training select a min-norm interpolant that does not extrapolate?

Two arms, one section.

Arm 1, the min-norm control (``lengthgen.science.rotary_regression``): a positional kernel linear in its
parameters over rotary features, with a fixed one-hot readout, a squared loss and SGD from zero.
Gradient descent there converges to the min-norm interpolant of the training offsets, computed here
in closed form. Its outcome is set by its setup, not by anything training decides: the min-norm
weight at far offsets scales as 1/sqrt(d), so whether it extrapolates depends on the width d, and
the rotary base decides whether the problem is well-posed at all. So arm 1 is reported as a sweep
over d and the base (``min_norm_sweep``: closed forms only, cheap), with SGD trained at the configured
point only, and its checks are sanity checks (training reaches the closed form), not evidence.

Arm 2, the linear-attention head: the factorized ``AttentionHead`` (embeddings, W_q, W_k, W_v,
unembedding) with its RoPE logits used as weights, trained with Adam and cross-entropy like the
sweep. This arm tests the paper's claim. It has a rotary base of its own (``linear.rope_base``): at
the model's base the basis is ill-conditioned over the training offsets and the head does not fit
its range, which would confound "does not extrapolate" with "did not learn". Its checks ask first
whether it fits its range at every in-range length of every run; the extrapolation checks are only
judged on a head that does. Nothing makes its training minimize a norm of its positional kernel, so
whether its kernel is the min-norm one is an empirical question; the min-norm solution is computed
at each cut-off of ``thresholds.LINEAR_CUTOFFS`` (they matter only for an ill-conditioned basis) and
every one is reported.

The kernel of an attention head. With RoPE, the weight of a key holding token x at offset delta, for
a query holding token u, is s_ux(delta) = sum_i a_ux,i cos(delta theta_i) + b_ux,i sin(delta theta_i).
A plain average of s_ux over token pairs cancels (heads carry token identity in the sign of the
weight and flip the sign of the value with it), so the kernel is read through the value path:

    k(delta) = E_{u,x}[ s_ux(delta) * m(x) ],   m(x) = (U v(x))_x - mean_y (U v(x))_y,

the expected push a key at offset delta gives to its own token's logit margin. For delta >= 1 the
key's token is independent of the query's, k is linear in (a_ux, b_ux), and it has one coefficient
vector in the rotary basis. At delta = 0 the key is the query itself (x = u), so k(0) is the mean
over u of s_uu(0) m(u), as in ``kernel.realized_mean_logit``.

One normalization. Every kernel, trained or min-norm, of either arm, is divided by its own value at
delta = K: fit errors, norms, norm ratios and distractor weights are all in units of the target's
weight, and measured weights are reported divided by the mean |target weight| at the same length.

Rates, not running sums. A running sum of |weight| never decreases, so "it grows" cannot fail.
The checks ask instead whether the weight per distractor key past the range decays: the mean
|weight| over the keys in the last octave of the sequence (delta in [n/2, n), the target left out),
at the longest length against at the first length >= 2 L (where the octave is [L, 2L) or later).
A kernel that does not decay keeps it (and its total distractor mass grows linearly in n); a kernel
decaying as delta^-1/2 or faster, or a normalized head whose distractors fill its denominator,
loses at least half of it over the 16x of the default lengths.
"""

import logging
from collections.abc import Callable

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from lengthgen.science import kernel

from lengthgen.checks import seed_sums
from lengthgen.checks.check import check
from lengthgen.evaluation import TOKENS_PER_BATCH
from lengthgen.models.head import AttentionHead
from lengthgen.checks.seed_sums import SeedSums
from lengthgen.science.rotary_regression import (RegressionConfig, condition_number, interpolation_target, min_norm_solution,
                                         numerical_rank, regression_outputs, rotary_basis, row_space_fraction,
                                         sequence_weights, train_regression)
from lengthgen.experiments.linear.thresholds import (CHANCE_MULTIPLE, EXTRAPOLATION_FACTOR, LINEAR_CUTOFFS,
                                                     LINEAR_HEAD_FIT_ACCURACY, MAX_CONDITION_NUMBER, MAX_KERNEL_ERROR,
                                                     MAX_RELATIVE_KERNEL_ERROR, MIN_CONVERGENCE_COSINE,
                                                     MIN_FAR_WEIGHT_RATIO, MIN_IN_RANGE_ACCURACY,
                                                     MIN_SOFTMAX_ADVANTAGE)
from lengthgen.experiments.linear.tables import ARMS
from lengthgen.task import TaskConfig
from lengthgen.experiments.linear.summaries import CONTROL, HEAD, MATCHED, SWEEP_CUTOFF, comparison_lengths

log = logging.getLogger(__name__)
EXACT = 0.0  # the pseudo-inverse with no cut-off: arm 1's reference, its basis being well-conditioned


# ---------------------------------------------------------------------------------------------
# Measured weights, for any head that returns (outputs, weights) per sequence


def weight_statistics(weights: torch.Tensor, offset: int) -> dict[str, torch.Tensor]:
    """Per sequence: target weight, its |.|, summed |weight| of the other keys, and the mean |weight|
    of the keys in the last octave (delta in [T/2, T), target excluded). (B, T) -> {name: (B,)}."""
    length = weights.shape[1]
    deltas = torch.arange(length - 1, -1, -1, device=weights.device)  # (T,): position t is delta T-1-t
    distractors = deltas != offset
    octave = distractors & (deltas >= length // 2)
    target = weights[:, -1 - offset]
    magnitude = weights.abs()
    return {"target_weight": target, "target_abs_weight": target.abs(),
            "distractor_weight": magnitude[:, distractors].sum(-1),
            "far_key_weight": magnitude[:, octave].mean(-1)}


Predict = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


@torch.no_grad()
def evaluate_weights(predict: Predict, eval_sets: dict, offset: int) -> pd.DataFrame:
    """Per evaluation length: accuracy and the means of ``weight_statistics`` over the sequences.

    ``predict(tokens)`` returns (outputs (B, V), weights (B, T)); ``eval_sets`` is
    {length: (tokens (N, length), targets (N,))}, as built by make_eval_set.
    """
    rows = []
    for length, (tokens, targets) in sorted(eval_sets.items()):
        batch = max(1, TOKENS_PER_BATCH // length)
        sums = dict.fromkeys(("accuracy", "target_weight", "target_abs_weight", "distractor_weight",
                              "far_key_weight"), 0.0)
        for start in range(0, len(tokens), batch):
            chunk, chunk_targets = tokens[start:start + batch], targets[start:start + batch]
            outputs, weights = predict(chunk)
            sums["accuracy"] += (outputs.argmax(-1).cpu() == chunk_targets).sum().item()
            for name, values in weight_statistics(weights.double(), offset).items():
                sums[name] += values.sum().item()
        rows.append({"length": length, **{name: total / len(tokens) for name, total in sums.items()}})
    return pd.DataFrame(rows)


def head_predictor(model: AttentionHead) -> Predict:
    device = next(model.parameters()).device
    return lambda tokens: model.predict(tokens.to(device))


def regression_predictor(coefficients: torch.Tensor, config: RegressionConfig, vocab_size: int) -> Predict:
    def predict(tokens):
        length = tokens.shape[1]
        kernel_values = rotary_basis(torch.arange(length), config.d_model, config.rope_base) @ coefficients
        return (regression_outputs(kernel_values, tokens, vocab_size),
                sequence_weights(kernel_values, length).expand(tokens.shape))
    return predict


# ---------------------------------------------------------------------------------------------
# Kernels, in units of the target's weight


def check_linear_rope(model: AttentionHead) -> None:
    config = model.config
    if config.pe != "rope" or config.attention != "linear":
        raise ValueError(f"the linear control needs pe='rope', attention='linear'; got {config.pe!r}, {config.attention!r}")


def pair_coefficients(model: AttentionHead) -> torch.Tensor:
    """Rotary coefficients (a, b) of the weight s_ux(delta), per (query token u, key token x).

    The weight is Re(c_ux,i e^{i delta theta_i}) summed over blocks i, with c from
    ``kernel.pair_coefficients``; so a = Re c and b = -Im c. (V, V, D) float64.
    """
    check_linear_rope(model)
    coefficients = kernel.pair_coefficients(kernel.rotary_blocks(model))  # (V, V, D/2) complex
    return torch.cat((coefficients.real, -coefficients.imag), dim=-1)


def own_token_margins(model: AttentionHead) -> torch.Tensor:
    """m(x): how much the value of token x, at unit weight, lifts its own logit above the mean. (V,)."""
    with torch.no_grad():
        embeddings = model.token_embedding.weight.double()
        values = F.linear(embeddings, model.value.weight.double(), model.value.bias.double())  # (V, D)
        logits = values @ model.unembedding.weight.double().T  # (V keys, V classes); the bias is added once, not per key
    return logits.diagonal() - logits.mean(dim=1)


def content_averaged_coefficients(model: AttentionHead) -> torch.Tensor:
    """(a, b) of k(delta) = E_{u,x}[s_ux(delta) m(x)] for delta >= 1, u and x independent (module doc). (D,)."""
    margins = own_token_margins(model)  # (V,)
    return torch.einsum("uxd,x->d", pair_coefficients(model), margins) / margins.numel() ** 2


def realized_head_kernel(model: AttentionHead, n_offsets: int) -> torch.Tensor:
    """k(delta) for delta = 0..n_offsets-1 as it occurs in sequences: delta = 0 has x = u. (n,) float64."""
    check_linear_rope(model)
    weighted = kernel.logit_kernel(model, n_offsets) * own_token_margins(model)[None, :, None]  # (V, V, n)
    return kernel.realized_mean_logit(weighted)


def cosine(x: torch.Tensor, y: torch.Tensor) -> float:
    return float(x @ y / (x.norm() * y.norm()))


def octave_weight(kernel_values: torch.Tensor, offset: int) -> float:
    """Mean |k| over the last octave [n/2, n) of a kernel given at delta = 0..n-1, the target excluded."""
    deltas = torch.arange(len(kernel_values))
    octave = (deltas >= len(kernel_values) // 2) & (deltas != offset)
    return float(kernel_values[octave].abs().mean())


def min_norm_kernel(basis: torch.Tensor, train_length_max: int, offset: int,
                    rtol: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(coefficients (D,), kernel (n,)) of the min-norm interpolant at cut-off ``rtol``, divided by its value
    at delta = offset; ``basis`` (n, D) is the rotary basis at delta = 0..n-1, n >= train_length_max."""
    coefficients = min_norm_solution(basis[:train_length_max], interpolation_target(train_length_max, offset), rtol)
    coefficients = coefficients / (basis[offset] @ coefficients)
    return coefficients, basis @ coefficients


def cutoff_sweep(coefficients: torch.Tensor, kernel_values: torch.Tensor, d_model: int, rope_base: float,
                 offset: int, train_length_max: int, rtols) -> pd.DataFrame:
    """A trained kernel against the min-norm interpolant at each cut-off ``rtol``, all in target units.

    ``coefficients`` (D,) are the trained kernel's rotary coefficients and ``kernel_values`` (n,) the
    kernel as realized at delta = 0..n-1, both already divided by their value at delta = offset. Each
    min-norm solution is divided by its own value at the offset too (with a cut-off it need not be 1).
    Columns: rtol, rank, min_norm_norm, min_norm_fit_error (max |k - ideal| over the training offsets),
    kernel_cosine, max_kernel_error and relative_error (|trained - min-norm| / |min-norm|, L2 over
    delta = 0..n-1: sensitive to shape and size alike), coefficient_cosine, norm_ratio
    (|trained| / |min-norm|), row_space_fraction (of the trained coefficients), min_norm_far_key_weight
    (``octave_weight`` of the min-norm kernel at n).
    """
    basis = rotary_basis(torch.arange(len(kernel_values)), d_model, rope_base)  # (n, D)
    training = basis[:train_length_max]  # (L, D)
    ideal = interpolation_target(train_length_max, offset)
    rows = []
    for rtol in rtols:
        min_norm, min_norm_values = min_norm_kernel(basis, train_length_max, offset, rtol)
        rows.append({
            "rtol": rtol, "rank": numerical_rank(training, rtol), "min_norm_norm": float(min_norm.norm()),
            "min_norm_fit_error": float((min_norm_values[:train_length_max] - ideal).abs().max()),
            "kernel_cosine": cosine(kernel_values, min_norm_values),
            "max_kernel_error": float((kernel_values - min_norm_values).abs().max()),
            "relative_error": float((kernel_values - min_norm_values).norm() / min_norm_values.norm()),
            "coefficient_cosine": cosine(coefficients, min_norm),
            "norm_ratio": float(coefficients.norm() / min_norm.norm()),
            "row_space_fraction": row_space_fraction(training, coefficients, rtol),
            "min_norm_far_key_weight": octave_weight(min_norm_values, offset),
        })
    return pd.DataFrame(rows)


def compare(coefficients: torch.Tensor, kernel_values: torch.Tensor, d_model: int, rope_base: float,
            offset: int, train_length_max: int, rtols, reference: float | None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(cut-off sweep, one comparison row, kernel table rows) for one run's trained kernel (raw units).

    The comparison is at cut-off ``reference``, or, if None, at the cut-off whose min-norm kernel is
    closest to the trained one (lowest relative error): the reading most favourable to the claim.
    """
    target_value = float(kernel_values[offset])
    coefficients, kernel_values = coefficients / target_value, kernel_values / target_value
    sweep = cutoff_sweep(coefficients, kernel_values, d_model, rope_base, offset, train_length_max, rtols)
    chosen = sweep.loc[[sweep["relative_error"].idxmin()]] if reference is None else sweep[sweep["rtol"] == reference]
    ideal = interpolation_target(train_length_max, offset)
    comparison = chosen.assign(
        condition_number=condition_number(rotary_basis(torch.arange(train_length_max), d_model, rope_base)),
        trained_target_kernel=target_value,
        trained_fit_error=float((kernel_values[:train_length_max] - ideal).abs().max()),
        trained_far_key_weight=octave_weight(kernel_values, offset))
    plotted = torch.arange(min(len(kernel_values), EXTRAPOLATION_FACTOR * train_length_max))
    _, min_norm_values = min_norm_kernel(rotary_basis(plotted, d_model, rope_base), train_length_max, offset,
                                         float(chosen["rtol"].iloc[0]))
    kernels = pd.concat([
        pd.DataFrame({"solution": "trained", "delta": plotted.numpy(), "kernel": kernel_values[plotted].numpy()}),
        pd.DataFrame({"solution": "min_norm", "delta": plotted.numpy(), "kernel": min_norm_values.numpy()}),
    ], ignore_index=True)
    return sweep, comparison, kernels


# ---------------------------------------------------------------------------------------------
# One run of each arm


def analyze_control(config: RegressionConfig, task: TaskConfig, seed: int, eval_sets: dict,
                    n_offsets: int) -> dict[str, pd.DataFrame]:
    """Train arm 1 for one (seed, offset) and measure it: by_length, kernels, cutoffs, comparison, convergence."""
    coefficients, history, snapshots = train_regression(config, task, seed)
    basis = rotary_basis(torch.arange(n_offsets), config.d_model, config.rope_base)  # (n, D)
    sweep, comparison, kernels = compare(coefficients, basis @ coefficients, config.d_model, config.rope_base,
                                         task.offset, task.train_length_max, (EXACT, *LINEAR_CUTOFFS), EXACT)
    predict = regression_predictor(coefficients, config, task.vocab_size)
    return {
        "by_length": in_range(evaluate_weights(predict, eval_sets, task.offset), task),
        "kernels": kernels, "cutoffs": sweep, "comparison": comparison,
        "convergence": history.assign(**convergence(snapshots, basis, task.offset, task.train_length_max)),
    }


def convergence(snapshots: torch.Tensor, basis: torch.Tensor, offset: int, train_length_max: int) -> dict:
    """Per snapshot of w: kernel cosine and max |error| against the closed-form min-norm kernel over
    every offset of ``basis`` (n, D), each kernel divided by its own value at the offset."""
    _, reference = min_norm_kernel(basis, train_length_max, offset, EXACT)  # (n,)
    kernels = snapshots @ basis.T  # (S, n)
    kernels = kernels / kernels[:, offset:offset + 1]
    return {"kernel_cosine": [cosine(row, reference) for row in kernels],
            "max_kernel_error": (kernels - reference).abs().amax(dim=1).tolist()}


def analyze_head(model: AttentionHead, task: TaskConfig, eval_sets: dict, n_offsets: int) -> dict[str, pd.DataFrame]:
    """Measure one trained arm-2 head: by_length, kernels, cutoffs, comparison (at the best cut-off)."""
    config = model.config
    sweep, comparison, kernels = compare(content_averaged_coefficients(model), realized_head_kernel(model, n_offsets),
                                         config.d_model, config.rope_base, task.offset, task.train_length_max,
                                         LINEAR_CUTOFFS, None)
    by_length = in_range(evaluate_weights(head_predictor(model), eval_sets, task.offset), task)
    return {"by_length": by_length, "kernels": kernels, "cutoffs": sweep, "comparison": comparison}


def analyze_matched(model: AttentionHead, task: TaskConfig, eval_sets: dict) -> pd.DataFrame:
    """Measure one matched softmax head (arm 2 with its softmax): by_length only, its accuracy and weights being what
    it is compared on; the min-norm kernel is a question about heads without a softmax."""
    if model.config.attention != "softmax" or model.config.pe != "rope":
        raise ValueError(f"the matched softmax head needs pe='rope', attention='softmax'; got {model.config.pe!r}, "
                         f"{model.config.attention!r}")
    return in_range(evaluate_weights(head_predictor(model), eval_sets, task.offset), task)


def in_range(by_length: pd.DataFrame, task: TaskConfig) -> pd.DataFrame:
    return by_length.assign(in_training_range=by_length["length"].between(task.train_length_min, task.train_length_max))


def training_progress(curves: pd.DataFrame, parts: int = 4) -> pd.DataFrame:
    """Mean training accuracy in each of ``parts`` equal windows of steps, per run: offset, seed, until_step, accuracy."""
    steps = int(curves["step"].max())
    window = np.ceil(curves["step"] * parts / steps).astype(int)
    progress = curves.assign(until_step=window * steps // parts).groupby(["offset", "seed", "until_step"])
    return progress["accuracy"].mean().reset_index()


# ---------------------------------------------------------------------------------------------
# Arm 1's sweep over the width and the base: closed forms only


def min_norm_sweep(d_models, rope_bases, train_length_max: int, eval_sets_by_offset: dict,
                   vocab_size: int) -> pd.DataFrame:
    """The closed-form min-norm interpolant of arm 1 per (d, base, offset), at the longest evaluation length n.

    ``eval_sets_by_offset`` is {offset: {length: (tokens, targets)}}. The interpolant is taken at the cut-off
    ``SWEEP_CUTOFF`` (rank says how many directions it keeps) and divided by its value at the offset.
    Columns as ``tables.LINEAR_MIN_NORM_SWEEP``.
    """
    rows = []
    for d_model in d_models:
        for rope_base in rope_bases:
            config = RegressionConfig(d_model, rope_base, steps=0, batch_size=0, lr=0.0)
            training = rotary_basis(torch.arange(train_length_max), d_model, rope_base)
            for offset, eval_sets in sorted(eval_sets_by_offset.items()):
                length = max(eval_sets)
                coefficients, kernel_values = min_norm_kernel(rotary_basis(torch.arange(length), d_model, rope_base),
                                                              train_length_max, offset, SWEEP_CUTOFF)
                accuracy = evaluate_weights(regression_predictor(coefficients, config, vocab_size),
                                            {length: eval_sets[length]}, offset)["accuracy"].iloc[0]
                rows.append({"d_model": d_model, "rope_base": rope_base, "offset": offset,
                             "condition_number": condition_number(training), "rtol": SWEEP_CUTOFF,
                             "rank": numerical_rank(training, SWEEP_CUTOFF), "length": length,
                             "far_key_weight": octave_weight(kernel_values, offset), "accuracy": float(accuracy)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# The experiment: both arms of every run, and the checks


def run_task(task: dict, run: dict) -> TaskConfig:
    return TaskConfig(task["vocab_size"], int(run["offset"]), task["train_length_min"], task["train_length_max"])


def analyze(inputs: dict, settings: dict) -> dict[str, pd.DataFrame]:
    """Arm 1 trained here per (seed, offset) and swept in closed form, arm 2 the trained heads, and arm 2's matched
    softmax heads (rows of linear_by_length): seven tables."""
    task, min_norm = settings["task"], dict(settings["linear"]["min_norm"])
    sweep_d_models, sweep_rope_bases = min_norm.pop("sweep_d_model"), min_norm.pop("sweep_rope_base")
    control = RegressionConfig(**min_norm)
    n_offsets = max(task["eval_lengths"])
    parts = []
    for run, model in inputs["models"]:
        offset, seed = int(run["offset"]), int(run["seed"])
        eval_sets = inputs["eval_sets"][offset]
        log.info("arm 1: training the min-norm control for seed %d, offset %d", seed, offset)
        for arm, tables in ((CONTROL, analyze_control(control, run_task(task, run), seed, eval_sets, n_offsets)),
                            (HEAD, analyze_head(model, run_task(task, run), eval_sets, n_offsets))):
            parts.append({name: frame.assign(arm=arm, offset=offset, seed=seed) for name, frame in tables.items()})
    for run, model in inputs["matched"]:
        by_length = analyze_matched(model, run_task(task, run), inputs["eval_sets"][int(run["offset"])])
        parts.append({"by_length": by_length.assign(arm=MATCHED, offset=int(run["offset"]), seed=int(run["seed"]))})
    tables = {f"linear_{name}": pd.concat([part[name] for part in parts if name in part], ignore_index=True)
              for name in ("by_length", "cutoffs", "comparison", "convergence")}
    tables["linear_kernel"] = pd.concat([part["kernels"] for part in parts if "kernels" in part], ignore_index=True)
    sweep = min_norm_sweep(sweep_d_models, sweep_rope_bases, task["train_length_max"], inputs["eval_sets"],
                           task["vocab_size"])
    return {**tables, "linear_training_progress": training_progress(inputs["curves"]), "linear_min_norm_sweep": sweep}


CHECKED = ("linear_by_length", "linear_comparison")


def checks(tables: dict[str, pd.DataFrame], settings: dict) -> list[dict]:
    task = settings["task"]
    return claims_linear(tables["linear_by_length"], tables["linear_comparison"], task["train_length_max"],
                         task["vocab_size"])


def far_weight_ratio(by_length: pd.DataFrame, train_length_max: int) -> float:
    """Mean per-key distractor weight of the last octave at the longest length over that at the reference
    length (``comparison_lengths``); NaN when the reference weight is 0 (nothing to decay)."""
    reference, far = comparison_lengths(by_length["length"], train_length_max)
    means = by_length.groupby("length")["far_key_weight"].mean()
    return float(means[far] / means[reference]) if means[reference] > 0 else float("nan")


def far_weight_ratio_of_seed_sums(by_length: pd.DataFrame, train_length_max: int) -> SeedSums:
    """``far_weight_ratio`` as a statistic of per-seed sums (``lengthgen.checks.seed_sums``), for the seed bootstrap."""
    reference, far = comparison_lengths(by_length["length"], train_length_max)
    far_mean, reference_mean = (seed_sums.mean(by_length[by_length["length"] == length], "far_key_weight")
                                for length in (far, reference))
    return seed_sums.combine(lambda far, reference: np.where(reference > 0, far / reference, np.nan),
                             far_mean, reference_mean)


def accuracy_at(by_length: pd.DataFrame, length: int) -> float:
    rows = by_length[by_length["length"] == length]
    if rows.empty:
        raise ValueError(f"no evaluation at length {length} (EXTRAPOLATION_FACTOR x train_length_max)")
    return float(rows["accuracy"].mean())


def in_range_accuracy(by_length: pd.DataFrame) -> pd.Series:
    """Accuracy per (offset, seed, in-range length)."""
    return by_length[by_length["in_training_range"]].set_index(["offset", "seed", "length"])["accuracy"]


def control_checks(by_length: pd.DataFrame, comparison: pd.DataFrame, train_length_max: int) -> list[dict]:
    """Arm 1, sanity: well-posed, fits, reaches the closed form (cosine, max error): what only a bug fails.
    Whether it extrapolates is no check: the closed form sets it from d and the base (``min_norm_sweep``), so
    its failure would be neither a bug nor evidence on the claim; the section's tables report it.

    Each is a statistic of per-seed sums (``lengthgen.checks.seed_sums``), which the seed bootstrap resamples: a worst
    run's value, exactly; the mean accuracy keeps pandas' mean as its value (the sums give it up to rounding)."""
    label = ARMS[CONTROL]
    in_range = by_length[by_length["in_training_range"]]
    return [
        check(f"{label}: the min-norm interpolant is well-posed",
              "condition number of the rotary basis over the training offsets",
              seed_sums.maximum(comparison, "condition_number"), "<=", MAX_CONDITION_NUMBER,
              rule=f"<= {MAX_CONDITION_NUMBER:g} (offsets 0..{train_length_max - 1})", kind="sanity"),
        check(f"{label}: fits the training range", "mean accuracy at in-range lengths",
              in_range_accuracy(by_length).mean(), ">=", MIN_IN_RANGE_ACCURACY, kind="sanity",
              resampled=seed_sums.mean(in_range, "accuracy")),
        check(f"{label}: training selects the min-norm interpolant (shape)",
              "lowest kernel cosine, trained vs closed form, over every evaluated offset",
              seed_sums.minimum(comparison, "kernel_cosine"), ">=", MIN_CONVERGENCE_COSINE, kind="sanity"),
        check(f"{label}: training selects the min-norm interpolant (values)",
              "largest max |trained - closed form| over every evaluated offset (target = 1)",
              seed_sums.maximum(comparison, "max_kernel_error"), "<=", MAX_KERNEL_ERROR, kind="sanity"),
    ]


def head_checks(by_length: pd.DataFrame, comparison: pd.DataFrame, train_length_max: int,
                vocab_size: int) -> list[dict]:
    """Arm 2, evidence: fits its range at every in-range length of every run (the precondition), then does
    not extrapolate, per-key weight does not decay, its kernel is the min-norm one at the most favourable
    cut-off. On a head that does not fit, those three are not judged: their value is NaN (so they do not
    hold) and their rule says why, instead of a verdict on a model that did not learn.

    Each is a statistic of per-seed sums (``lengthgen.checks.seed_sums``), which the seed bootstrap resamples, the three
    judged ones NaN in a resample whose worst run does not fit (``fit_judged``); a value that is a mean or a ratio of
    means keeps pandas' as its value (the sums give it up to rounding)."""
    label = ARMS[HEAD]
    worst_fit = fits_range(by_length)
    fits = worst_fit.value() >= LINEAR_HEAD_FIT_ACCURACY
    far_length, chance_bound = EXTRAPOLATION_FACTOR * train_length_max, CHANCE_MULTIPLE / vocab_size
    reference, far = comparison_lengths(by_length["length"], train_length_max)

    def judged(value: float, statistic: SeedSums, rule: str) -> dict:
        """A judged check's value and rule on all seeds, and its statistic per resample (``check``'s keywords)."""
        return {"value": value if fits else float("nan"), "resampled": fit_judged(worst_fit, statistic),
                "rule": rule if fits else f"not judged: arm 2 does not fit its range ({rule})"}

    extrapolation = judged(accuracy_at(by_length, far_length),
                           seed_sums.mean(by_length[by_length["length"] == far_length], "accuracy"),
                           f"<= {CHANCE_MULTIPLE}/V = {chance_bound:.3g} (n={far_length})")
    decay = judged(far_weight_ratio(by_length, train_length_max),
                   far_weight_ratio_of_seed_sums(by_length, train_length_max),
                   f">= {MIN_FAR_WEIGHT_RATIO:g} (n={far} over n={reference})")
    kernel_error = judged(comparison["relative_error"].max(), seed_sums.maximum(comparison, "relative_error"),
                          f"<= {MAX_RELATIVE_KERNEL_ERROR:.3g}")
    return [
        check(f"{label}: fits the training range (precondition)",
              "lowest accuracy over every in-range length, offset and seed", worst_fit, ">=",
              LINEAR_HEAD_FIT_ACCURACY),
        check(f"{label}: does not extrapolate", f"mean accuracy at {EXTRAPOLATION_FACTOR}x the longest training length",
              comparison="<=", threshold=chance_bound, **extrapolation),
        check(f"{label}: distractor weight per key past the range does not decay",
              "mean |weight| per key in [n/2, n) at the longest length over that at the first length >= 2 L",
              comparison=">=", threshold=MIN_FAR_WEIGHT_RATIO, **decay),
        check(f"{label}: its kernel is the min-norm interpolant",
              "largest |trained - min-norm| / |min-norm| over every evaluated offset, at each run's most "
              "favourable cut-off", comparison="<=", threshold=MAX_RELATIVE_KERNEL_ERROR, **kernel_error),
    ]


def fit_judged(worst_fit: SeedSums, statistic: SeedSums) -> SeedSums:
    """``statistic`` in a resample whose worst in-range accuracy (``worst_fit``) reaches the fit bar, NaN in one
    whose does not: what ``head_checks`` recomputed on that resample gives."""
    return seed_sums.combine(lambda worst, value: np.where(worst >= LINEAR_HEAD_FIT_ACCURACY, value, np.nan),
                             worst_fit, statistic)


def fits_range(by_length: pd.DataFrame) -> SeedSums:
    """The lowest accuracy over every in-range length, offset and seed of ``by_length``'s rows."""
    return seed_sums.minimum(by_length[by_length["in_training_range"]], "accuracy")


def matched_checks(by_length: pd.DataFrame, train_length_max: int) -> list[dict]:
    """Arm 2 against its matched softmax head, evidence: the matched head fits its range (the precondition, over
    every run), then per offset K the matched head's mean accuracy at 4x the longest training length minus arm 2's
    reaches ``MIN_SOFTMAX_ADVANTAGE``, judged only where both heads fit every in-range length of every seed at that
    K (not judged: NaN, and its rule says why). ``by_length`` holds both heads' rows (arms HEAD and MATCHED); a K
    the matched head has no rows at gives NaN, which does not hold."""
    matched_label, far_length = ARMS[MATCHED], EXTRAPOLATION_FACTOR * train_length_max
    checks = [check(f"{matched_label}: fits the training range (precondition)",
                    "lowest accuracy over every in-range length, offset and seed",
                    fits_range(by_length[by_length["arm"] == MATCHED]), ">=", LINEAR_HEAD_FIT_ACCURACY)]
    for offset in sorted(by_length.loc[by_length["arm"] == HEAD, "offset"].unique()):
        heads = by_length[by_length["offset"] == offset]
        far = heads[heads["length"] == far_length]
        pair = [heads[heads["arm"] == arm] for arm in (HEAD, MATCHED)]
        worst_fit = seed_sums.smallest([fits_range(rows) for rows in pair])
        difference = seed_sums.mean(far[far["arm"] == MATCHED], "accuracy") - seed_sums.mean(
            far[far["arm"] == HEAD], "accuracy")
        rule = f">= {MIN_SOFTMAX_ADVANTAGE:g} (n={far_length})"
        fits = worst_fit.value() >= LINEAR_HEAD_FIT_ACCURACY
        checks.append(check(
            f"{matched_label}: arm 2's shortfall against it is the softmax's, not the base's",
            f"matched softmax head's mean accuracy at {EXTRAPOLATION_FACTOR}x the longest training length minus arm 2's",
            difference.value() if fits else float("nan"), ">=", MIN_SOFTMAX_ADVANTAGE, offset=int(offset),
            rule=rule if fits else f"not judged: a head of the pair does not fit its range ({rule})",
            resampled=fit_judged(worst_fit, difference)))
    return checks


def claims_linear(by_length: pd.DataFrame, comparison: pd.DataFrame, train_length_max: int,
                  vocab_size: int) -> list[dict]:
    """Arm 1's sanity checks (``control_checks``), then arm 2's evidence (``head_checks``), then arm 2 against its
    matched softmax head (``matched_checks``). Thresholds from ``thresholds.py``; ``tests/test_linear.py`` builds runs
    that fail each."""
    return [*control_checks(by_length[by_length["arm"] == CONTROL], comparison[comparison["arm"] == CONTROL],
                            train_length_max),
            *head_checks(by_length[by_length["arm"] == HEAD], comparison[comparison["arm"] == HEAD],
                         train_length_max, vocab_size),
            *matched_checks(by_length[by_length["arm"].isin([HEAD, MATCHED])], train_length_max)]
