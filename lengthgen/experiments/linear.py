"""The linear-attention control: does a RoPE head without softmax extrapolate?

One job: measure the control (a RoPE head whose logits are used directly as weights, no softmax,
no normalization) and compare its positional kernel with the minimum-norm kernel that fits the
training range, computed in closed form.

The kernel. With RoPE, the weight of a key holding token x at relative offset delta, for a query
holding token u, is s_ux(delta) = sum_i a_ux,i cos(delta theta_i) + b_ux,i sin(delta theta_i).
A plain average of s_ux over token pairs cancels: trained heads carry token identity in the
*sign* of the weight, and flip the sign of the value with it, so weight and value must be read
together. The content-averaged kernel here is therefore read through the value path:

    k(delta) = E_{u,x}[ s_ux(delta) * m(x) ],   m(x) = (U v(x))_x - mean_y (U v(x))_y,

the expected push a key at offset delta gives to the logit margin of its own token (m(x) is the
margin the value of x adds to its own logit per unit weight). It is linear in (a_ux, b_ux), so
it has one coefficient vector (a, b) in the rotary basis. The ideal retrieval kernel is 1 at
delta = K and 0 at every other offset; the minimum-norm (a, b) that achieves this over the
training offsets is the pseudo-inverse solution, and nothing in it makes it decay past them.

Conditioning. RoPE frequencies are at most 1 rad per position, so over a few dozen offsets the
rotary basis is band-limited: its singular values fall off a cliff after about a dozen
directions (d=64, base 1e4, 32 offsets: below 1e-6 of the largest after 16). A kernel that is
exactly 1 at K and 0 at its neighbours does not exist at any sane norm. The pseudo-inverse is
therefore taken at the precision the head computes in: singular values below
max(N, P) * eps(float32) of the largest are dropped (torch's default cut-off for a float32
matrix), fixed here once, not tuned.
"""


import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from lengthgen import kernel
from lengthgen.claims import check
from lengthgen.encodings import rotary_frequencies
from lengthgen.evaluation import TOKENS_PER_BATCH
from lengthgen.model import AttentionHead
from lengthgen.rules import CHANCE_MULTIPLE, EXTRAPOLATION_FACTOR, MIN_COSINE, MIN_IN_RANGE_ACCURACY

EXPERIMENT = "linear"
SOLUTIONS = ("trained", "min_norm")



# ---------------------------------------------------------------------------------------------
# Closed forms


def rotary_basis(deltas: torch.Tensor, d_model: int, rope_base: float) -> torch.Tensor:
    """[cos(delta theta_i) for i] + [sin(delta theta_i) for i], float64. (N,) -> (N, D).

    A kernel with coefficients c = (a, b) is ``rotary_basis(deltas, ...) @ c``.
    """
    theta = rotary_frequencies(d_model, rope_base)  # (D/2,)
    angles = deltas.to(torch.float64)[:, None] * theta[None, :]  # (N, D/2)
    return torch.cat((angles.cos(), angles.sin()), dim=1)


def float32_rtol(matrix: torch.Tensor) -> float:
    """The relative singular-value cut-off below which float32 cannot resolve a direction."""
    return max(matrix.shape) * torch.finfo(torch.float32).eps


def min_norm_solution(matrix: torch.Tensor, target: torch.Tensor, rtol: float | None = None) -> torch.Tensor:
    """The minimum-norm least-squares solution of matrix @ c = target, via the pseudo-inverse.

    Among all exact solutions of an underdetermined consistent system it is the shortest one.
    Singular values below ``rtol`` times the largest are dropped (default: ``float32_rtol``).
    (N, P), (N,) -> (P,), in float64.
    """
    matrix = matrix.to(torch.float64)
    rtol = float32_rtol(matrix) if rtol is None else rtol
    return torch.linalg.pinv(matrix, rtol=rtol) @ target.to(torch.float64)


def row_space_fraction(matrix: torch.Tensor, coefficients: torch.Tensor, rtol: float | None = None) -> float:
    """|P c| / |c|, P the projection on the resolved row space of ``matrix``.

    P c is the min-norm vector giving the same values matrix @ c, so this is the cosine between a
    solution and the shortest one that behaves identically on the rows: 1 for a min-norm solution,
    lower the more of c lies in directions the rows do not see (which act only off the rows).
    """
    matrix = matrix.to(torch.float64)
    rtol = float32_rtol(matrix) if rtol is None else rtol
    projected = torch.linalg.pinv(matrix, rtol=rtol) @ (matrix @ coefficients)
    return float(projected.norm() / coefficients.norm())


def numerical_rank(matrix: torch.Tensor, rtol: float | None = None) -> int:
    """How many singular directions survive the cut-off of ``min_norm_solution``."""
    matrix = matrix.to(torch.float64)
    rtol = float32_rtol(matrix) if rtol is None else rtol
    singular_values = torch.linalg.svdvals(matrix)
    return int((singular_values > rtol * singular_values[0]).sum())


def min_norm_kernel_coefficients(d_model: int, rope_base: float, offset: int, train_length_max: int) -> torch.Tensor:
    """The shortest (a, b) whose kernel is 1 at delta = offset and 0 at every other training offset.

    Training sequences of length up to train_length_max put keys at delta = 0 .. max - 1 (delta 0
    is the query's own position). (D,) float64.
    """
    deltas = torch.arange(train_length_max)
    target = (deltas == offset).to(torch.float64)  # (L,)
    return min_norm_solution(rotary_basis(deltas, d_model, rope_base), target)


# ---------------------------------------------------------------------------------------------
# The trained head's kernel


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
    """(a, b) of k(delta) = E_{u,x}[s_ux(delta) m(x)], token pairs uniform (see module doc). (D,)."""
    margins = own_token_margins(model)  # (V,)
    return torch.einsum("uxd,x->d", pair_coefficients(model), margins) / margins.numel() ** 2


def kernel_values(coefficients: torch.Tensor, deltas: torch.Tensor, d_model: int, rope_base: float) -> torch.Tensor:
    """The kernel with rotary coefficients (a, b) at each delta. (N,) float64."""
    return rotary_basis(deltas, d_model, rope_base) @ coefficients


def cosine(x: torch.Tensor, y: torch.Tensor) -> float:
    return float(x @ y / (x.norm() * y.norm()))


# ---------------------------------------------------------------------------------------------
# Measurements on one trained control head


def target_and_distractor_weights(weights: torch.Tensor, offset: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per sequence: the target's weight and sum over every other key of |weight|. (B, T) -> (B,), (B,)."""
    target = weights[:, -1 - offset]
    distractor = weights.abs().sum(dim=-1) - target.abs()
    return target, distractor


@torch.no_grad()
def evaluate_linear_head(model: AttentionHead, eval_sets: dict, offset: int, seed: int,
                         train_length_min: int, train_length_max: int) -> pd.DataFrame:
    """A ``linear_by_length`` table: accuracy, loss and weights at every evaluation length.

    ``eval_sets`` is {length: (tokens (N, length), targets (N,))}, as built by make_eval_set.
    """
    check_linear_rope(model)
    device = next(model.parameters()).device
    rows = []
    for length, (tokens, targets) in sorted(eval_sets.items()):
        batch = max(1, TOKENS_PER_BATCH // length)
        sums = dict.fromkeys(("accuracy", "loss", "target_weight", "target_abs_weight", "distractor_weight"), 0.0)
        for start in range(0, len(tokens), batch):
            chunk, chunk_targets = tokens[start:start + batch].to(device), targets[start:start + batch].to(device)
            logits, loss = model(chunk, chunk_targets)
            _, weights = model.attention(chunk)  # (B, T)
            target, distractor = target_and_distractor_weights(weights.double(), offset)
            sums["accuracy"] += (logits.argmax(-1) == chunk_targets).sum().item()
            sums["loss"] += loss.item() * len(chunk)
            sums["target_weight"] += target.sum().item()
            sums["target_abs_weight"] += target.abs().sum().item()
            sums["distractor_weight"] += distractor.sum().item()
        rows.append({"offset": offset, "seed": seed, "length": length,
                     "in_training_range": train_length_min <= length <= train_length_max,
                     **{name: total / len(tokens) for name, total in sums.items()}})
    return pd.DataFrame(rows)


def normalized_kernels(model: AttentionHead, offset: int, train_length_max: int) -> dict[str, torch.Tensor]:
    """{solution: (a, b)} for the trained and min-norm kernels, each scaled to 1 at delta = offset.

    Scaling the trained one by its own target value k(K) removes the head's arbitrary overall scale
    (and sign), so the two are compared as shapes and distractor weights are in units of the
    target's weight. The min-norm one is near 1 at K already (exactly 1 if it interpolates). (D,) each.
    """
    config = model.config
    raw = {
        "trained": content_averaged_coefficients(model),
        "min_norm": min_norm_kernel_coefficients(config.d_model, config.rope_base, offset, train_length_max),
    }
    at_target = rotary_basis(torch.tensor([offset]), config.d_model, config.rope_base)[0]  # (D,)
    return {solution: coefficients / (at_target @ coefficients) for solution, coefficients in raw.items()}


def kernel_frame(model: AttentionHead, offset: int, seed: int, train_length_max: int, max_delta: int) -> pd.DataFrame:
    """A ``linear_kernel`` table: both normalized kernels at delta = 0 .. max_delta - 1."""
    config = model.config
    deltas = torch.arange(max_delta)
    frames = [
        pd.DataFrame({"offset": offset, "seed": seed, "solution": solution, "delta": deltas.numpy(),
                      "kernel": kernel_values(coefficients, deltas, config.d_model, config.rope_base).numpy()})
        for solution, coefficients in normalized_kernels(model, offset, train_length_max).items()
    ]
    return pd.concat(frames, ignore_index=True)


def kernel_comparison(model: AttentionHead, offset: int, seed: int, train_length_max: int) -> pd.DataFrame:
    """A one-row ``linear_kernel_comparison`` table: how close the trained kernel is to the min-norm one.

    Fit errors are max |kernel - ideal| over the training offsets (ideal: 1 at K, 0 elsewhere);
    norm_ratio = |trained (a, b)| / |min-norm (a, b)| (>= 1 for an exact interpolant when the min-norm one is);
    row_space_fraction: is the trained (a, b) the shortest one with its own in-range kernel?
    basis_rank: resolved directions of the rotary basis over the training offsets.
    """
    config = model.config
    kernels = normalized_kernels(model, offset, train_length_max)
    deltas = torch.arange(train_length_max)
    basis = rotary_basis(deltas, config.d_model, config.rope_base)  # (L, D)
    ideal = (deltas == offset).to(torch.float64)
    in_range = {name: basis @ c for name, c in kernels.items()}
    min_norm = min_norm_kernel_coefficients(config.d_model, config.rope_base, offset, train_length_max)
    raw_target = kernel_values(content_averaged_coefficients(model), torch.tensor([offset]), config.d_model,
                               config.rope_base)[0]
    return pd.DataFrame([{
        "offset": offset, "seed": seed, "trained_target_kernel": float(raw_target),
        "coefficient_cosine": cosine(kernels["trained"], kernels["min_norm"]),
        "kernel_cosine": cosine(in_range["trained"], in_range["min_norm"]),
        "trained_fit_error": float((in_range["trained"] - ideal).abs().max()),
        "min_norm_fit_error": float((basis @ min_norm - ideal).abs().max()),  # the solution itself, unscaled
        "norm_ratio": float(kernels["trained"].norm() / min_norm.norm()),
        "row_space_fraction": row_space_fraction(basis, kernels["trained"]),
        "basis_rank": numerical_rank(basis),
    }])


def kernel_dilution(kernels: pd.DataFrame, lengths: list[int]) -> pd.DataFrame:
    """A ``linear_kernel_dilution`` table from a ``linear_kernel`` one.

    At length n the query sees keys at delta = 0 .. n - 1; the distractor weight is the sum of
    |kernel| over those deltas except the target's (the kernels are in units of the target's).
    """
    rows = []
    for (offset, seed, solution), group in kernels.groupby(["offset", "seed", "solution"], sort=True):
        kernel = group.sort_values("delta")
        abs_kernel = np.where(kernel["delta"].to_numpy() == offset, 0.0, kernel["kernel"].abs().to_numpy())
        if max(lengths) > len(abs_kernel):
            raise ValueError(f"kernel table has {len(abs_kernel)} deltas; length {max(lengths)} needs more")
        cumulative = np.cumsum(abs_kernel)  # cumulative[n - 1] sums deltas 0 .. n - 1
        rows += [{"offset": offset, "seed": seed, "solution": solution, "length": n,
                  "distractor_weight": float(cumulative[n - 1])} for n in sorted(lengths)]
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Claims and the RESULTS.md section


def growth_ratio(frame: pd.DataFrame, value: str, from_length: int) -> float:
    """The smallest ratio of the run-mean ``value`` between consecutive lengths >= from_length."""
    means = frame[frame["length"] >= from_length].groupby("length")[value].mean().sort_index()
    if len(means) < 2:
        raise ValueError(f"need two lengths >= {from_length} to measure growth, got {list(means.index)}")
    return float((means.to_numpy()[1:] / means.to_numpy()[:-1]).min())


def claims_linear(by_length: pd.DataFrame, comparison: pd.DataFrame, dilution: pd.DataFrame,
                  train_length_max: int, vocab_size: int) -> pd.DataFrame:
    """The ``claims`` rows of the linear control; every statistic pools all offsets and seeds."""
    far_length = EXTRAPOLATION_FACTOR * train_length_max
    if far_length not in set(by_length["length"]):
        raise ValueError(f"evaluation lengths must include {far_length} (= {EXTRAPOLATION_FACTOR} x train_length_max)")
    in_range = by_length.loc[by_length["in_training_range"], "accuracy"].mean()
    far = by_length.loc[by_length["length"] == far_length, "accuracy"].mean()
    far_limit = CHANCE_MULTIPLE / vocab_size
    measured_growth = growth_ratio(by_length, "distractor_weight", train_length_max)
    kernel_growth = {solution: growth_ratio(dilution[dilution["solution"] == solution], "distractor_weight",
                                            train_length_max) for solution in SOLUTIONS}
    coefficient_cosine = comparison["coefficient_cosine"].mean()
    kernel_cosine = comparison["kernel_cosine"].mean()
    grows = "smallest ratio of mean distractor weight between consecutive lengths from train_length_max on"
    return pd.DataFrame([
        check(EXPERIMENT, "the control fits the training range (precondition)", "mean accuracy at in-range lengths",
                  in_range, f"mean accuracy >= {MIN_IN_RANGE_ACCURACY}", in_range >= MIN_IN_RANGE_ACCURACY),
        check(EXPERIMENT, "the control does not extrapolate", f"mean accuracy at length {far_length}", far,
                  f"mean accuracy at {EXTRAPOLATION_FACTOR}x train_length_max <= {CHANCE_MULTIPLE}/V = {far_limit:.4g}",
                  far <= far_limit),
        check(EXPERIMENT, "measured distractor weight grows with length", grows, measured_growth, "ratio > 1",
                  measured_growth > 1),
        check(EXPERIMENT, "the min-norm kernel's distractor weight grows with length", grows, kernel_growth["min_norm"],
                  "ratio > 1", kernel_growth["min_norm"] > 1),
        check(EXPERIMENT, "the trained kernel's distractor weight grows with length", grows, kernel_growth["trained"],
                  "ratio > 1", kernel_growth["trained"] > 1),
        check(EXPERIMENT, "training selects the min-norm interpolant (coefficients)",
                  "mean cosine of trained vs min-norm rotary coefficients", coefficient_cosine,
                  f"mean cosine >= {MIN_COSINE}", coefficient_cosine >= MIN_COSINE),
        check(EXPERIMENT, "training selects the min-norm interpolant (kernel in range)",
                  "mean cosine of trained vs min-norm kernel over training offsets", kernel_cosine,
                  f"mean cosine >= {MIN_COSINE}", kernel_cosine >= MIN_COSINE),
    ])


def summary_by_offset(by_length: pd.DataFrame, comparison: pd.DataFrame, dilution: pd.DataFrame,
                      train_length_max: int) -> pd.DataFrame:
    """One row per offset, means over seeds: the key numbers of the section's table."""
    far_length, longest = EXTRAPOLATION_FACTOR * train_length_max, int(by_length["length"].max())

    def at(frame, length, column):
        return frame[frame["length"] == length].groupby("offset")[column].mean()

    min_norm = dilution[dilution["solution"] == "min_norm"]
    return pd.DataFrame({
        "seeds": by_length.groupby("offset")["seed"].nunique(),
        "in-range acc": by_length[by_length["in_training_range"]].groupby("offset")["accuracy"].mean(),
        f"acc @{far_length}": at(by_length, far_length, "accuracy"),
        f"acc @{longest}": at(by_length, longest, "accuracy"),
        f"distractor sum abs(w) @{train_length_max}": at(by_length, train_length_max, "distractor_weight"),
        f"distractor sum abs(w) @{longest}": at(by_length, longest, "distractor_weight"),
        f"min-norm distractor @{longest}": at(min_norm, longest, "distractor_weight"),
        "coef cosine": comparison.groupby("offset")["coefficient_cosine"].mean(),
        "kernel cosine": comparison.groupby("offset")["kernel_cosine"].mean(),
        "row-space frac": comparison.groupby("offset")["row_space_fraction"].mean(),
        "trained fit err": comparison.groupby("offset")["trained_fit_error"].mean(),
        "min-norm fit err": comparison.groupby("offset")["min_norm_fit_error"].mean(),
    }).rename_axis("K").reset_index()


def markdown_table(frame: pd.DataFrame) -> str:
    def cell(value):
        return f"{value:.3g}" if isinstance(value, (float, np.floating)) else str(value)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def section_markdown(by_length: pd.DataFrame, comparison: pd.DataFrame, dilution: pd.DataFrame,
                     claims: pd.DataFrame, train_length_min: int, train_length_max: int,
                     steps: int, batch_size: int, lr: float, figure: str = "linear_control.png") -> str:
    """The ``## linear`` section of RESULTS.md, from the tables alone."""
    summary = summary_by_offset(by_length, comparison, dilution, train_length_max)
    ranks = sorted(set(comparison["basis_rank"]))
    rank_text = "/".join(str(rank) for rank in ranks)
    claim_lines = [f"- {row.claim}: {row.statistic} = {row.value:.4g}; rule: {row.rule}; "
                   f"**{'holds' if row.holds else 'does not hold'}**" for row in claims.itertuples()]
    return "\n".join([
        f"## {EXPERIMENT}",
        "",
        "The linear-attention control: the RoPE head with its logits used directly as weights (no softmax, "
        f"no normalization), trained on lengths {train_length_min}..{train_length_max} with Adam "
        f"(lr {lr:g}, batch {batch_size}, {steps} steps). Measured per evaluation length: accuracy, and "
        "the total |weight| on distractor keys. The trained head's positional kernel is content-averaged "
        "through its value path (the push a key gives to its own token's logit margin), expressed in the "
        "rotary basis, scaled to 1 at the target offset, and compared with the minimum-norm kernel that is 1 "
        f"at the target and 0 at every other offset 0..{train_length_max - 1} (pseudo-inverse, closed form, "
        "singular values below max(N, P) x float32 eps of the largest dropped; the rotary basis over the "
        f"training offsets resolves only {rank_text} of its directions at that precision, so the min-norm "
        "kernel does not interpolate exactly: see its fit error). Row-space fraction: cosine between the "
        "trained coefficients and the shortest ones with the same in-range kernel (1 = min-norm). "
        "Distractor weight of a kernel at length n: sum of |kernel| over the non-target offsets below n.",
        "",
        markdown_table(summary),
        "",
        *claim_lines,
        "",
        f"![linear-attention control: accuracy, distractor weight and kernels vs length](figures/{figure})",
        "",
    ])
