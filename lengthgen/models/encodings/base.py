"""What every positional encoding shares: the hooks it may fill, what it may know of the model, and the
registry that finds an encoding's class by its name.

An encoding can act at three places of an attention head, and each hook defaults to
doing nothing. The same entry serves the single head (``lengthgen.models.head``) and every
attention layer of the transformer (``lengthgen.models.transformer``):

- ``position_embedding(positions)``: the term added to the token embeddings, (..., D) for
  position ids (...) (absolute encodings). Returning the term rather than the sum lets the head
  use linearity: a projection of (token + position) is the projection of each, computed once per
  token and once per position (``model.AttentionHead.token_tables``);
- ``rotate(x, positions)``: applied to queries and keys (rotary encodings), per head: x is
  (..., T, head_dim);
- ``logit_bias(query_positions, key_positions)``: added to the attention logits, (..., Tq, Tk)
  shared by every head (the transformer also takes (n_heads, Tq, Tk)).

A fourth hook says where the positions come from: ``sample_positions(batch_size, length, rng)``
returns None (every sequence at 0..T-1, the default) or (B, T) position ids drawn per sequence
from ``rng`` (randomized encodings; the single head only).

Positions are int64 tensors of absolute position ids, so a test can shift them all; every hook
takes them of any leading shape, (T,) shared by a batch or (B, T) per sequence. Under position
interpolation (``lengthgen.models.length_scaling``) they are fractional, float64.

A registered name may carry parameters, ``name@key=value,key=value`` (``rope@base=100``): they
are the keyword-only arguments of the class, so a variant is a config line, not a new class.

Each encoding family is one module of this folder (``rope.py``, ``alibi.py``, ...), which declares its
encodings in a literal ``DECLARATIONS`` dict (the table, ``lengthgen/models/encodings_table.py``). A name is
looked up there and its module imported only then, so a job loads (and its fingerprint covers) the
modules of the encodings it runs, not every encoding's.
"""

import importlib
import inspect
from collections.abc import MutableMapping
from dataclasses import dataclass

import torch
from torch import nn

from lengthgen.models.defaults import MODEL_DEFAULTS
from lengthgen.models.encodings_table import POSITION_HOOKS, PROPERTIES, CatalogEntry, encoding_catalog
from lengthgen.models.names import parse_name


@dataclass(frozen=True)
class EncodingConfig:
    """What an encoding may need to know about the model it sits in.

    ``d_model`` is the width of the token embeddings (what ``position_embedding`` adds to);
    queries and keys are split into ``n_heads`` heads of ``head_dim`` each (what ``rotate`` sees).
    ``trained_positions``: positions 0..trained_positions-1 are those training reaches (the
    longest training sequence), the rows a learned table stores. ``init_seed`` seeds the init of
    whatever an encoding draws row by row (the learned table), so a row past the stored ones is
    drawn at evaluation with the numbers a longer table would have held. ``init_std``: the std of a
    named normal init (``model.init``, ``lengthgen/models/init.py``), which every weight of the
    encoding is drawn with (the learned table, t5's buckets, FIRE's MLP; biases zero); None: each
    encoding's own init.
    """

    d_model: int
    trained_positions: int
    rope_base: float = MODEL_DEFAULTS["rope_base"]
    learned_init_std: float = MODEL_DEFAULTS["learned_init_std"]
    n_heads: int = 1
    init_seed: int = 0
    init_std: float | None = None

    def __post_init__(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of n_heads ({self.n_heads})")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


class PositionalEncoding(nn.Module):
    """Base class: every hook is the identity. What an encoding's mechanism is (offset only, trained past the
    range, monotone in the offset) is declared in its module's ``DECLARATIONS``, not on the class."""

    def position_embedding(self, positions: torch.Tensor) -> torch.Tensor | None:
        return None  # or (..., D), added to the token embeddings

    def rotate(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return x  # (..., T, head_dim)

    def logit_bias(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor | None:
        return None  # or (..., Tq, Tk)

    def sample_positions(self, batch_size: int, length: int, rng: torch.Generator) -> torch.Tensor | None:
        return None  # or (B, T) position ids, one row per sequence


def encoding_parameters(cls) -> list[str]:
    """The parameters a registered name may set: the class's keyword-only arguments."""
    return [parameter.name for parameter in inspect.signature(cls).parameters.values()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY]


def check_class(name: str, cls: type, entry: CatalogEntry) -> None:
    """Stop where the class of encoding ``name`` and its declaration in the table could tell two stories: a class
    that states a mechanism property itself (which the workflow would not read), or whose hooks or parameters
    are not the ones declared. The error names the encoding and the property."""
    where = f"positional encoding {name!r} (class {cls.__name__}, {entry.module})"
    if not (isinstance(cls, type) and issubclass(cls, PositionalEncoding)):
        raise TypeError(f"{where}: not a subclass of PositionalEncoding")
    for prop in PROPERTIES:
        if hasattr(cls, prop):
            raise TypeError(f"{where}: the class sets {prop}; declare it in DECLARATIONS only, the one place the "
                            "workflow and the model both read")
    hooks = {hook for hook in POSITION_HOOKS if getattr(cls, hook) is not getattr(PositionalEncoding, hook)}
    found = {"random_positions": "sample_positions" in hooks, "position_term": bool(hooks),
             "parameters": tuple(encoding_parameters(cls))}
    for prop, value in found.items():
        if getattr(entry, prop) != value:
            raise TypeError(f"{where}: declares {prop} = {getattr(entry, prop)!r}, the class has {value!r}")


class Registry(MutableMapping):
    """Encoding classes by registry name: those of the table, each imported from its module when first asked
    for (and checked against its declaration), and any class registered at run time (``register``: a test's)."""

    def __init__(self):
        self.added: dict[str, type] = {}

    def __getitem__(self, name: str) -> type:
        if name in self.added:
            return self.added[name]
        entry = encoding_catalog()[name]  # KeyError for a name the table does not hold
        cls = getattr(importlib.import_module(entry.module), entry.class_name)
        check_class(name, cls, entry)
        return cls

    def __setitem__(self, name: str, cls: type) -> None:
        if name in self:
            raise ValueError(f"positional encoding {name!r} is registered twice")
        self.added[name] = cls

    def __delitem__(self, name: str) -> None:
        del self.added[name]

    def __iter__(self):
        yield from encoding_catalog()
        yield from self.added

    def __len__(self) -> int:
        return len(encoding_catalog()) + len(self.added)

    def __contains__(self, name) -> bool:
        return name in self.added or name in encoding_catalog()


ENCODINGS = Registry()


def register(name: str):
    """Class decorator adding an encoding defined outside this folder (a test's, a notebook's) under ``name``:
    usable by the model, unknown to the workflow. An encoding the workflow runs is declared in the table."""

    def add(cls):
        ENCODINGS[name] = cls
        return cls

    return add


def resolve_encoding(name: str) -> tuple[type, dict[str, float]]:
    """(class, parameters) of a registry name such as ``rope`` or ``rope@base=100``; a clear
    error names what is wrong (the form, an unknown encoding, or an unknown parameter: ``names.parse_name``)."""
    registry = {registered: entry.parameters for registered, entry in encoding_catalog().items()}
    registry |= {registered: tuple(encoding_parameters(cls)) for registered, cls in ENCODINGS.added.items()}
    registered, parameters = parse_name(name, "positional encoding", registry)
    return ENCODINGS[registered], parameters


def build_encoding(name: str, config: EncodingConfig) -> PositionalEncoding:
    """The encoding registered as ``name``, with the parameters the name carries."""
    cls, parameters = resolve_encoding(name)
    return cls(config, **parameters)


def rotary_frequencies(d_model: int, base: float) -> torch.Tensor:
    """theta_i = base^(-2i/d) for the d/2 rotary blocks, in float64. Shape (D/2,)."""
    return base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


def query_key_offsets(query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
    """i - j for every (query, key) pair, in exact integers. (..., Tq), (..., Tk) -> (..., Tq, Tk)."""
    return query_positions[..., :, None] - key_positions[..., None, :]
