"""Model inits by name: the ``model.init`` setting (every single head) and ``transformer.init``.

- ``torch_default``: each layer as PyTorch builds it: embeddings N(0, 1), linear weights and biases
  U(+-1/sqrt(fan_in)); the encoding keeps its own init (the learned table N(0, model.learned_init_std^2),
  t5's buckets N(0, 1/d_model)). The single head's init before this setting existed.
- ``normal@std=S``: every weight N(0, S^2): token embeddings, projections, unembedding, and the weights
  of the encoding (the learned position table, t5's bucket table, FIRE's MLP); every bias zero.
  Normalization gains stay 1, and an encoding's scalars keep the values that define its mechanism at
  init (ALiBi's slope 2^-8, FIRE's c and threshold scale): drawn from N(0, S^2) they would be another
  encoding. nanoGPT and GPT-2 take S = 0.02.
- ``nanogpt``: nanoGPT's init, the transformer's before this setting existed: weights N(0, 0.02^2),
  the projections into the residual stream N(0, 0.02^2 / (2 n_layers)) so that its variance does not
  grow with depth, zero biases, and the encoding's own init (as ``torch_default``).

Every draw comes from torch's global generator, which ``training.seeded_init`` seeds from the model's
seed alone: the same seed gives the same weights, whichever seeds are built beside it.

The names are spelled and parsed as the encodings' (``lengthgen/models/names.py``); this module imports torch
only where it initializes, so the config check reads the names without it.
"""

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lengthgen.models.names import parse_name

if TYPE_CHECKING:
    from torch import nn

# Each init's name and the parameters its name sets (normal's std is required).
INITS: dict[str, tuple[str, ...]] = {"torch_default": (), "normal": ("std",), "nanogpt": ()}
NANOGPT_STD = 0.02


@dataclass(frozen=True)
class Init:
    """A parsed init name: its kind (a key of ``INITS``) and the std of a normal init."""

    kind: str
    std: float | None = None

    @property
    def encoding_std(self) -> float | None:
        """The std every weight of the encoding is drawn with (``EncodingConfig.init_std``), or None where
        the encoding keeps its own init."""
        return self.std if self.kind == "normal" else None


def parse_init(name: str) -> Init:
    """The init ``name`` (``torch_default``, ``normal@std=0.02``, ``nanogpt``); a ``ValueError`` that
    names the init says what is wrong with a bad one."""
    kind, parameters = parse_name(name, "model init", INITS)
    if kind == "normal" and "std" not in parameters:
        raise ValueError(f"model init {name!r}: normal needs a std; allowed: normal@std=S, e.g. normal@std=0.02")
    std = parameters.get("std")
    if std is not None and not 0 < std < math.inf:
        raise ValueError(f"model init {name!r}: std {std:g} is not positive and finite; "
                         "allowed: normal@std=S with S > 0")
    return Init(kind, std)


def initialize(modules: "Iterable[nn.Module]", init: Init, residual: Callable[[str], bool] = lambda name: False,
               n_layers: int = 1) -> None:
    """Draw the weights of ``modules`` (the model's own layers, not its encoding) as ``init`` says, in place.

    ``residual(name)``: whether the parameter ``name`` (as ``module.named_parameters`` gives it) projects into
    a residual stream of ``n_layers`` blocks, for ``nanogpt``. Under ``torch_default`` nothing is redrawn: the
    layers keep the init PyTorch drew as they were built.
    """
    if init.kind == "torch_default":
        return
    from torch import nn  # here, not above: the config check parses init names without torch

    std = NANOGPT_STD if init.kind == "nanogpt" else init.std
    for module in modules:
        for name, parameter in module.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(parameter)
            elif parameter.dim() > 1:  # embeddings and projections; one-dimensional weights are norm gains
                scaled = init.kind == "nanogpt" and residual(name)
                nn.init.normal_(parameter, 0.0, std / math.sqrt(2 * n_layers) if scaled else std)
