"""The attention-logit kernel of a trained rotary head, computed exactly from its parameters.

Write rotary block i of a vector x as the complex number z_i = x_2i + i x_2i+1; rotating the
vector by angle p * theta_i multiplies z_i by exp(i p theta_i). For a query token a at the
last position and a key token b ``delta`` positions before it, the head's logit is then

    s_ab(delta) = sum_i Re(c_ab,i exp(i delta theta_i)),   c_ab,i = zq_a,i conj(zk_b,i) / sqrt(D),

where zq_a (zk_b) is the unrotated query (key) of token a (b): ``W x + bias`` of its token
embedding. The kernel depends on delta alone (RoPE's equivariance), so one (V, V, n) table
gives every logit the head can produce at any length up to n.

Content averages, over tokens drawn uniformly:

- over independent a and b, the kernel is bilinear in the mean query and the mean key, so it
  is again a sum of cosines with coefficients mean(zq) conj(mean(zk)) / sqrt(D)
  (``mean_block_coefficients``; the frequency decomposition);
- at delta = 0 the key *is* the query position, so only b = a occurs there; the averages
  that describe attention in real sequences (``realized_mean_logit``,
  ``log_mean_exp_over_keys``) use the diagonal S[a, a, 0] at delta = 0.
"""

import math
from dataclasses import dataclass

import torch

from lengthgen.models.encodings.rope import Rotary
from lengthgen.models.head import AttentionHead


@dataclass(frozen=True)
class RotaryBlocks:
    """Per-token unrotated queries and keys of a rotary head, as complex block coefficients."""

    query: torch.Tensor  # (V, D/2) complex128: zq_a,i
    key: torch.Tensor  # (V, D/2) complex128: zk_b,i
    theta: torch.Tensor  # (D/2,) float64: rotary frequencies
    scale: float  # 1 / sqrt(D), the head's logit scale


def as_complex_blocks(vectors: torch.Tensor) -> torch.Tensor:
    """(..., D) real -> (..., D/2) complex, block i = x_2i + i x_2i+1 (the rotation's convention)."""
    return torch.complex(vectors[..., 0::2], vectors[..., 1::2])


@torch.no_grad()
def rotary_blocks(model: AttentionHead) -> RotaryBlocks:
    """The query and key of every token, in float64, from the parameters of a rotary head."""
    if not isinstance(model.encoding, Rotary):
        raise ValueError(f"the logit kernel needs a rotary head, got pe={model.config.pe!r}")
    embeddings = model.token_embedding.weight.detach().double().cpu()  # (V, D)

    def project(linear):
        return embeddings @ linear.weight.detach().double().cpu().T + linear.bias.detach().double().cpu()

    return RotaryBlocks(
        query=as_complex_blocks(project(model.query)),
        key=as_complex_blocks(project(model.key)),
        theta=model.encoding.theta.detach().double().cpu(),
        scale=1.0 / math.sqrt(model.config.d_model),
    )


def pair_coefficients(blocks: RotaryBlocks) -> torch.Tensor:
    """c_ab,i = zq_a,i conj(zk_b,i) / sqrt(D) for every token pair. (V, V, D/2) complex."""
    return blocks.query[:, None, :] * blocks.key.conj()[None, :, :] * blocks.scale


def mean_block_coefficients(blocks: RotaryBlocks) -> torch.Tensor:
    """Content average of c_ab over independent uniform a and b: exact, since c is bilinear. (D/2,) complex."""
    return blocks.query.mean(0) * blocks.key.mean(0).conj() * blocks.scale


def cosine_sum(coefficients: torch.Tensor, theta: torch.Tensor, deltas: torch.Tensor) -> torch.Tensor:
    """sum_i Re(c_i exp(i delta theta_i)) for every delta. (..., D/2) -> (..., len(deltas)).

    Written as two real matrix products, so a (V*V, D/2) by (D/2, n) table never
    materializes the (V, V, n, D/2) complex intermediate.
    """
    angles = theta[:, None] * deltas.to(torch.float64)[None, :]  # (D/2, n)
    return coefficients.real @ angles.cos() - coefficients.imag @ angles.sin()


def logit_kernel(model: AttentionHead, length: int) -> torch.Tensor:
    """S[a, b, delta] = s_ab(delta) for the keys of a sequence of ``length``, delta in 0..length-1,
    float64. (V, V, length).

    The head's length scales (``model.positions``, ``model.logit_factor``) apply: position
    interpolation moves the key at delta to the fractional offset delta x factor, and a logit
    scale multiplies the kernel. Without them S does not depend on ``length``: a longer
    sequence only adds offsets. S[a, b, 0] with b != a is the formula's value but never occurs
    in a sequence (see module doc).
    """
    blocks = rotary_blocks(model)
    positions = model.positions(length, 0, "cpu")  # (T,): the query sits at positions[-1]
    deltas = positions[-1] - positions.flip(0)  # (T,): delta = 0 .. length - 1, scaled as the positions are
    return cosine_sum(pair_coefficients(blocks), blocks.theta, deltas) * model.logit_factor(length)


def self_logits(kernel: torch.Tensor) -> torch.Tensor:
    """The query's logit on its own position, S[a, a, 0]. (V, V, n) -> (V,)."""
    return kernel[:, :, 0].diagonal()


def realized_mean_logit(kernel: torch.Tensor) -> torch.Tensor:
    """Content-averaged logit at each delta as it occurs in sequences. (V, V, n) -> (n,).

    delta >= 1: mean over independent a, b; delta = 0: mean over a of S[a, a, 0].
    """
    mean = kernel.mean(dim=(0, 1)).clone()
    mean[0] = self_logits(kernel).mean()
    return mean


def log_mean_exp_over_keys(kernel: torch.Tensor) -> torch.Tensor:
    """log E_b[exp s_ab(delta)] per query token a, b uniform; delta = 0 uses b = a. (V, V, n) -> (V, n).

    Computed as a logsumexp so large logits do not overflow.
    """
    vocab_size = kernel.shape[1]
    log_mean = torch.logsumexp(kernel, dim=1) - math.log(vocab_size)  # (V, n)
    log_mean[:, 0] = self_logits(kernel)
    return log_mean
