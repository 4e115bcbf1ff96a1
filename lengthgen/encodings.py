"""Positional encodings, registered by name.

An encoding can act at three places of an attention head, and each hook defaults to
doing nothing. The same entry serves the single head (``lengthgen.model``) and every
attention layer of the transformer (``lengthgen.transformer``):

- ``position_embedding(positions)``: a (T, D) term added to the token embeddings (absolute
  encodings). Returning the term rather than the sum lets the head use linearity: a
  projection of (token + position) is the projection of each, computed once per token and
  once per position (``model.AttentionHead.token_tables``);
- ``rotate(x, positions)``: applied to queries and keys (rotary encodings), per head: x is
  (..., T, head_dim);
- ``logit_bias(query_positions, key_positions)``: added to the attention logits, (Tq, Tk)
  shared by every head (the transformer also takes (n_heads, Tq, Tk)).

Adding an encoding means writing one small class and decorating it with
``@register("name")``; the model, the workflow and the config schema pick it up.
Positions are int64 tensors of absolute position ids, so a test can shift them all; under
position interpolation (``lengthgen.length_scaling``) they are fractional, float64.
"""

from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn


@dataclass(frozen=True)
class EncodingConfig:
    """What an encoding may need to know about the model it sits in.

    ``d_model`` is the width of the token embeddings (what ``position_embedding`` adds to);
    queries and keys are split into ``n_heads`` heads of ``head_dim`` each (what ``rotate`` sees).
    """

    d_model: int
    max_positions: int
    rope_base: float = 1e4
    learned_init_std: float = 0.02
    n_heads: int = 1

    def __post_init__(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of n_heads ({self.n_heads})")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


class PositionalEncoding(nn.Module):
    """Base class: every hook is the identity."""

    def position_embedding(self, positions: torch.Tensor) -> torch.Tensor | None:
        return None  # or (T, D), added to the token embeddings

    def rotate(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return x  # (..., T, head_dim)

    def logit_bias(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor | None:
        return None  # or (Tq, Tk)


ENCODINGS: dict[str, Callable[[EncodingConfig], PositionalEncoding]] = {}


def register(name: str):
    """Class decorator adding an encoding to ``ENCODINGS`` under ``name``."""

    def add(cls):
        if name in ENCODINGS:
            raise ValueError(f"positional encoding {name!r} is registered twice")
        ENCODINGS[name] = cls
        return cls

    return add


def build_encoding(name: str, config: EncodingConfig) -> PositionalEncoding:
    """The encoding registered as ``name``; a clear error lists the known names."""
    try:
        return ENCODINGS[name](config)
    except KeyError:
        known = ", ".join(sorted(ENCODINGS))
        raise ValueError(f"unknown positional encoding {name!r}; known: {known}") from None


def rotary_frequencies(d_model: int, base: float) -> torch.Tensor:
    """theta_i = base^(-2i/d) for the d/2 rotary blocks, in float64. Shape (D/2,)."""
    return base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


@register("nope")
class NoPositionalEncoding(PositionalEncoding):
    """No positional information at all: the head sees a bag of tokens."""

    def __init__(self, config: EncodingConfig):
        super().__init__()


@register("rope")
class Rotary(PositionalEncoding):
    """Rotary encoding: block i of (x_2i, x_2i+1) is rotated by angle p * theta_i.

    Applied per head, so the frequencies are those of the head's width: theta_i =
    base^(-2i/head_dim) for its head_dim/2 blocks (with one head, head_dim = d_model).

    q_m . k_n then depends on m - n only. The angles are formed in float64 from the
    integer positions, so even position ids near 1e5 rotate by the exact angle and
    the equivariance holds to rounding of the final dtype.
    """

    def __init__(self, config: EncodingConfig):
        super().__init__()
        if config.head_dim % 2:
            raise ValueError(f"rope needs an even head width (d_model / n_heads), got {config.head_dim}")
        self.register_buffer("theta", rotary_frequencies(config.head_dim, config.rope_base), persistent=False)

    def rotate(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        angles = positions.to(torch.float64)[:, None] * self.theta.to(positions.device)[None, :]  # (T, D/2)
        complex_dtype = torch.complex128 if x.dtype == torch.float64 else torch.complex64
        phasors = torch.polar(torch.ones_like(angles), angles).to(complex_dtype)  # (T, D/2): e^{i p theta}
        # Block (x_2i, x_2i+1) as the complex number x_2i + i x_2i+1: the rotation is one product.
        blocks = torch.view_as_complex(x.unflatten(-1, (-1, 2)))  # (..., T, D/2)
        return torch.view_as_real(blocks * phasors).flatten(-2)


@register("learned")
class LearnedAbsolute(PositionalEncoding):
    """A learned table of ``max_positions`` rows added to the token embeddings.

    Rows of positions never seen in training keep their initial values: they get no
    gradient, which is what lets the head memorize absolute positions. A fractional
    position p (position interpolation) gets the linear interpolation of rows floor(p)
    and floor(p) + 1.
    """

    def __init__(self, config: EncodingConfig):
        super().__init__()
        self.max_positions = config.max_positions
        self.table = nn.Parameter(torch.randn(config.max_positions, config.d_model) * config.learned_init_std)

    def position_embedding(self, positions: torch.Tensor) -> torch.Tensor:
        if float(positions.max()) > self.max_positions - 1 or float(positions.min()) < 0:
            raise IndexError(
                f"learned encoding has {self.max_positions} positions (model.max_positions); "
                f"got position ids {float(positions.min()):g}..{float(positions.max()):g}"
            )
        if not positions.is_floating_point():
            return self.table[positions]  # (T, D)
        below = positions.floor()
        fraction = (positions - below).to(self.table.dtype)[:, None]  # (T, 1)
        rows = below.long()
        above = (rows + 1).clamp(max=self.max_positions - 1)  # p = max_positions - 1 has fraction 0
        return self.table[rows] * (1 - fraction) + self.table[above] * fraction  # (T, D)


@register("sinusoidal")
class Sinusoidal(PositionalEncoding):
    """The fixed sin/cos absolute encoding of Vaswani et al., added to the embeddings."""

    def __init__(self, config: EncodingConfig):
        super().__init__()
        self.register_buffer("theta", rotary_frequencies(config.d_model, 1e4), persistent=False)

    def position_embedding(self, positions: torch.Tensor) -> torch.Tensor:
        angles = positions.to(torch.float64)[:, None] * self.theta.to(positions.device)[None, :]  # (T, D/2)
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)  # (T, D), float64
