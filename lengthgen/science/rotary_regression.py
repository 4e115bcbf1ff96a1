"""The min-norm control: a positional kernel linear in its parameters, trained from zero by SGD.

The model. The weight of the key ``delta`` places before the query is

    k(delta) = w . phi(delta),   phi(delta) = [cos(delta theta_i)]_i ++ [sin(delta theta_i)]_i,

with theta_i = base^(-2i/d) the rotary frequencies: the RoPE logit of a head whose query and key
do not depend on content, used directly as the weight (no softmax). The readout is fixed: the output
for token v is the sum of the weights of the keys holding v (one-hot values, identity unembedding).
The loss is the squared error against the target's one-hot, and w starts at 0 and follows plain SGD.

Why these choices. Each gradient is a combination of phi(delta) over the offsets in the batch, so w
stays in the span of the training offsets' features (the row space of the basis Phi) from w = 0 on.
As a function of the kernel on the training offsets, the expected loss is
E || sum_t (k(delta_t) - [delta_t = K]) e_x_t ||^2 / 2, with Hessian (1 - 1/V) I + (1/V) 1 1^T on
the offsets of a sequence: positive definite, so its minimizers are exactly the w with Phi w = e_K,
and the only one in the row space is Phi^+ e_K, the minimum-norm interpolant. Gradient descent on
this least-squares problem therefore converges to the min-norm interpolant: the implicit bias the
claim names, made exact. A cross-entropy loss would not do this: on separable data its minimizer is
at infinity and gradient descent heads for the max-margin direction instead (Soudry et al., 2018).
Adam is not used either: its per-coordinate step sizes leave the row space.

Conditioning. The min-norm interpolant is only well-posed if Phi, over the training offsets
0..L-1, is well-conditioned. With base >= 1 every theta_i is at most 1 rad, the features are
band-limited, and Phi is numerically singular whatever d (condition number above 1e15 at L = 32 for
every d from 32 to 256): a one-hot kernel needs frequencies up to pi. A base below 1 makes the
frequencies run from 1 rad upward; on integer offsets a frequency acts modulo 2 pi, so they spread
over (0, pi] and the basis becomes well-conditioned. ``condition_number`` reports the result.
"""

from dataclasses import dataclass

import pandas as pd
import torch
import torch.nn.functional as F

from lengthgen.models.encodings import rotary_frequencies
from lengthgen.models.head import token_mass
from lengthgen.runtime.seeding import generator
from lengthgen.task import TaskConfig, sample_training_batch


@dataclass(frozen=True)
class RegressionConfig:
    d_model: int  # number of features: d/2 rotary blocks, cos and sin each
    rope_base: float
    steps: int
    batch_size: int
    lr: float  # plain SGD
    log_every: int = 50  # steps between rows of the convergence history


# ---------------------------------------------------------------------------------------------
# The basis and its closed forms


def rotary_basis(deltas: torch.Tensor, d_model: int, rope_base: float) -> torch.Tensor:
    """[cos(delta theta_i) for i] + [sin(delta theta_i) for i], float64. (N,) -> (N, D).

    A kernel with coefficients c = (a, b) is ``rotary_basis(deltas, ...) @ c``.
    """
    theta = rotary_frequencies(d_model, rope_base)  # (D/2,)
    angles = deltas.to(torch.float64)[:, None] * theta[None, :]  # (N, D/2)
    return torch.cat((angles.cos(), angles.sin()), dim=1)


def condition_number(matrix: torch.Tensor) -> float:
    """Largest over smallest of its min(N, P) singular values (inf when one is 0)."""
    singular_values = torch.linalg.svdvals(matrix.to(torch.float64))
    return float(singular_values[0] / singular_values[-1])


def interpolation_target(train_length_max: int, offset: int) -> torch.Tensor:
    """The ideal kernel over the training offsets 0..L-1: 1 at delta = offset, 0 elsewhere. (L,)."""
    return (torch.arange(train_length_max) == offset).to(torch.float64)


def min_norm_solution(matrix: torch.Tensor, target: torch.Tensor, rtol: float = 0.0) -> torch.Tensor:
    """The minimum-norm least-squares solution of matrix @ c = target, via the pseudo-inverse.

    Among all exact solutions of an underdetermined consistent system it is the shortest one.
    Singular values below ``rtol`` times the largest are dropped (0: none, the exact pseudo-inverse
    of a well-conditioned matrix). (N, P), (N,) -> (P,), in float64.
    """
    return torch.linalg.pinv(matrix.to(torch.float64), rtol=rtol) @ target.to(torch.float64)


def numerical_rank(matrix: torch.Tensor, rtol: float) -> int:
    """How many singular directions survive the cut-off ``rtol`` of ``min_norm_solution``."""
    singular_values = torch.linalg.svdvals(matrix.to(torch.float64))
    return int((singular_values > rtol * singular_values[0]).sum())


def row_space_fraction(matrix: torch.Tensor, coefficients: torch.Tensor, rtol: float) -> float:
    """|P c| / |c|, P the projection on the row space of ``matrix`` resolved at ``rtol``.

    P c is the min-norm vector giving the same values matrix @ c, so this is the cosine between a
    solution and the shortest one that behaves identically on the rows: 1 for a min-norm solution,
    lower the more of c lies in directions the rows do not see (which act only off the rows).
    """
    matrix = matrix.to(torch.float64)
    projected = torch.linalg.pinv(matrix, rtol=rtol) @ (matrix @ coefficients)
    return float(projected.norm() / coefficients.norm())


# ---------------------------------------------------------------------------------------------
# The model and its training


def sequence_weights(kernel: torch.Tensor, length: int) -> torch.Tensor:
    """The weight of each position of a length-``length`` sequence: position t is delta = length-1-t back.

    ``kernel`` holds k(delta) for delta = 0.. at least length-1. (>= length,) -> (length,).
    """
    return kernel[:length].flip(0)


def regression_outputs(kernel: torch.Tensor, tokens: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """Output per token: the summed weight of the keys holding it. (B, T) -> (B, V)."""
    weights = sequence_weights(kernel, tokens.shape[1]).expand(tokens.shape)  # (B, T)
    return token_mass(tokens, weights, vocab_size)


def squared_loss(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Half the squared distance to the target's one-hot, summed over tokens, mean over the batch."""
    return 0.5 * (outputs - F.one_hot(targets, outputs.shape[1]).to(outputs.dtype)).pow(2).sum(-1).mean()


def train_regression(config: RegressionConfig, task: TaskConfig, seed: int) -> tuple[torch.Tensor, pd.DataFrame, torch.Tensor]:
    """SGD from w = 0 on fresh batches; returns (w (D,), history, snapshots (rows of history, D)).

    The batches come from the same seeded stream as the attention heads' (``train``, seed, offset),
    so both arms of the control see the same data. The history has step and loss every
    ``log_every`` steps (and at the last); ``snapshots`` holds w at those steps. Float64 throughout.
    """
    basis = rotary_basis(torch.arange(task.train_length_max), config.d_model, config.rope_base)  # (L, D)
    weights = torch.zeros(config.d_model, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.SGD([weights], lr=config.lr)
    data_rng = generator("train", seed, task.offset)
    steps, losses, snapshots = [], [], []
    for step in range(1, config.steps + 1):
        tokens, targets = sample_training_batch(data_rng, task, config.batch_size)
        loss = squared_loss(regression_outputs(basis @ weights, tokens, task.vocab_size), targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % config.log_every == 0 or step == config.steps:
            steps.append(step)
            losses.append(loss.item())
            snapshots.append(weights.detach().clone())
    return weights.detach(), pd.DataFrame({"step": steps, "loss": losses}), torch.stack(snapshots)
