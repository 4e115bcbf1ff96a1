"""The single attention head that reads from the query (last) position.

token embedding -> positional encoding -> biased q/k/v projections -> attention over
all keys (softmax, or the raw logits for the linear-attention control) -> unembedding
of the attended value.

With V tokens and one query, most of that is repeated work: it is computed once per token
and per position in small tables, gathered per sequence (``token_tables``); the plain
per-sequence computation stays as the definition (``reference_predict``).
"""

import math
import pickle
from dataclasses import asdict, dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from lengthgen.encodings import EncodingConfig, build_encoding
from lengthgen.tables import atomic_path

ATTENTION_KINDS = ("softmax", "linear")


class TokenTables(NamedTuple):
    """What the head computes for one sequence length, per token and per position."""

    logits: torch.Tensor  # (V, T, V): [key token b, key position t, query token a] attention logit
    token_outputs: torch.Tensor  # (V, V_out): unembedded value of each token, without the unembedding bias
    position_outputs: torch.Tensor | None  # (T, V_out): unembedded value of each position's term, or None


@dataclass(frozen=True)
class HeadConfig:
    vocab_size: int
    d_model: int
    pe: str
    max_positions: int
    rope_base: float = 1e4
    learned_init_std: float = 0.02
    attention: str = "softmax"

    def encoding_config(self) -> EncodingConfig:
        return EncodingConfig(self.d_model, self.max_positions, self.rope_base, self.learned_init_std)


class AttentionHead(nn.Module):
    def __init__(self, config: HeadConfig):
        super().__init__()
        if config.attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {ATTENTION_KINDS}, got {config.attention!r}")
        self.config = config
        d = config.d_model
        self.token_embedding = nn.Embedding(config.vocab_size, d)
        self.encoding = build_encoding(config.pe, config.encoding_config())
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.unembedding = nn.Linear(d, config.vocab_size)

    def predict(self, tokens: torch.Tensor, position_offset: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """(output logits (B, V), attention weights (B, T)) from one pass."""
        tables = self.token_tables(tokens.shape[1], position_offset)
        _, weights = self._attend(tokens, tables)
        return self._read_out(tokens, weights, tables), weights

    def attention(self, tokens: torch.Tensor, position_offset: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """The query's attention logits and weights over every key, each (B, T).

        ``position_offset`` shifts every position id, for the equivariance tests.
        """
        return self._attend(tokens, self.token_tables(tokens.shape[1], position_offset))

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor | None = None, position_offset: int = 0):
        """(logits (B, V), loss or None) for the token at the last position's target."""
        logits, _ = self.predict(tokens, position_offset)
        loss = None if targets is None else F.cross_entropy(logits, targets)
        return logits, loss

    def token_tables(self, length: int, position_offset: int = 0) -> TokenTables:
        """Everything the head computes for sequences of ``length``, per token and per position.

        The embedding of token v at position t is E[v] + p[t] (p from the encoding, or none), and
        every projection is linear, so queries, keys and values split into a token part and a
        position part, each computed once. Only the rotation and the logits need (token, position)
        pairs, and V x T x V logits are few.
        """
        positions = torch.arange(length, device=self.unembedding.weight.device) + position_offset  # (T,)
        tokens = self.token_embedding.weight  # (V, D)
        position_terms = self.encoding.position_embedding(positions)  # (T, D) or None
        if position_terms is not None:
            position_terms = position_terms.to(tokens.dtype)
        last = tokens if position_terms is None else tokens + position_terms[-1]  # (V, D): at the query position
        query = self.encoding.rotate(self.query(last)[:, None], positions[-1:])[:, 0]  # (V, D)
        keys = self.key(tokens)[:, None]  # (V, 1, D)
        if position_terms is not None:
            keys = keys + (position_terms @ self.key.weight.T)[None]  # (V, T, D)
        keys = self.encoding.rotate(keys, positions).expand(-1, length, -1)  # (V, T, D)
        logits = keys @ (query.T / math.sqrt(self.config.d_model))  # (V, T, V): [key token, position, query token]
        bias = self.encoding.logit_bias(positions[-1:], positions)  # (1, T) or None
        if bias is not None:
            logits = logits + bias[0][None, :, None]
        readout = self.unembedding.weight.T  # (D, V_out)
        return TokenTables(
            logits=logits,
            token_outputs=self.value(tokens) @ readout,
            position_outputs=None if position_terms is None else position_terms @ self.value.weight.T @ readout,
        )

    def _attend(self, tokens: torch.Tensor, tables: TokenTables) -> tuple[torch.Tensor, torch.Tensor]:
        """(scores (B, T), weights (B, T)): each key's logit gathered from the table.

        The gather indexes the flattened table with ``index_select``, whose backward
        (``index_add``) is deterministic on CPU and CUDA alike.
        """
        batch, length = tokens.shape
        vocab_size = tables.logits.shape[2]
        key_rows = tokens * length + torch.arange(length, device=tokens.device)  # (B, T): row of (token, position)
        cells = key_rows * vocab_size + tokens[:, -1:]  # (B, T): in the query token's column
        scores = tables.logits.reshape(-1).index_select(0, cells.reshape(-1)).view(batch, length)
        weights = scores.softmax(dim=-1) if self.config.attention == "softmax" else scores
        return scores, weights

    def _read_out(self, tokens: torch.Tensor, weights: torch.Tensor, tables: TokenTables) -> torch.Tensor:
        """Output logits (B, V_out): the attention mass on each token times its output, plus the
        position part of the values weighted by position, plus the unembedding bias."""
        batch, _ = tokens.shape
        vocab_size = tables.token_outputs.shape[0]
        slots = tokens + vocab_size * torch.arange(batch, device=tokens.device)[:, None]  # (B, T)
        mass = weights.new_zeros(batch * vocab_size).index_add(0, slots.reshape(-1), weights.reshape(-1))
        logits = mass.view(batch, vocab_size) @ tables.token_outputs + self.unembedding.bias  # (B, V_out)
        if tables.position_outputs is not None:
            logits = logits + weights @ tables.position_outputs
        return logits

    def reference_predict(self, tokens: torch.Tensor, position_offset: int = 0):
        """(output logits (B, V), attention logits (B, T), weights (B, T)), computed the plain way.

        The definition of the head: every position's embedding, query, key and value computed
        per sequence. ``predict`` and ``attention`` compute the same function from token tables,
        many times faster; the tests hold the two equal.
        """
        length = tokens.shape[1]
        positions = torch.arange(length, device=tokens.device) + position_offset  # (T,)
        x = self.token_embedding(tokens)  # (B, T, D)
        position_terms = self.encoding.position_embedding(positions)
        if position_terms is not None:
            x = x + position_terms.to(x.dtype)
        query = self.encoding.rotate(self.query(x[:, -1:]), positions[-1:])  # (B, 1, D)
        keys = self.encoding.rotate(self.key(x), positions)  # (B, T, D)
        scores = torch.einsum("bqd,btd->bt", query, keys) / math.sqrt(self.config.d_model)  # (B, T)
        bias = self.encoding.logit_bias(positions[-1:], positions)
        if bias is not None:
            scores = scores + bias[0]
        weights = scores.softmax(dim=-1) if self.config.attention == "softmax" else scores
        attended = torch.einsum("bt,btd->bd", weights, self.value(x))  # (B, D)
        return self.unembedding(attended), scores, weights


def save_head(model: AttentionHead, path) -> None:
    """Weights and config together, so a later analysis rebuilds the head without config."""
    state = {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()}
    with atomic_path(path) as temp:
        torch.save({"config": asdict(model.config), "state_dict": state}, temp)


class ModelFileError(ValueError):
    """A model file that cannot be the head its reader expects: unreadable, or of another shape or config."""


def load_head(path, device: str | torch.device = "cpu", expected: dict | None = None) -> AttentionHead:
    """The head saved at ``path``, checked before use: a file that is not a head's checkpoint, whose
    weights do not fit its own config, or whose config differs from ``expected`` (settings such as
    ``d_model`` that the reader's config fixes) raises ``ModelFileError`` naming the file and what
    differs, instead of being read as if it were the model asked for."""
    advice = "delete it and rerun to retrain it"
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
        config = HeadConfig(**checkpoint["config"])
        state = checkpoint["state_dict"]
    except (OSError, EOFError, RuntimeError, pickle.UnpicklingError, KeyError, TypeError) as error:
        reason = str(error).split("\n")[0].split(". ")[0]  # torch's first sentence; the rest is advice for other cases
        raise ModelFileError(f"{path}: not a saved attention head ({type(error).__name__}: {reason}); {advice}") from error
    differences = [f"{key} {getattr(config, key)!r} where this config has {value!r}"
                   for key, value in (expected or {}).items() if getattr(config, key) != value]
    if differences:
        raise ModelFileError(f"{path}: a head of another config: {', '.join(differences)}; {advice}")
    model = AttentionHead(config)
    wanted = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    found = {name: tuple(tensor.shape) for name, tensor in state.items()}
    mismatches = [f"{name} has shape {found.get(name, 'missing')}, expected {shape}"
                  for name, shape in wanted.items() if found.get(name) != shape]
    mismatches += [f"{name} is not a weight of this head" for name in found.keys() - wanted.keys()]
    if mismatches:
        raise ModelFileError(f"{path}: weights do not fit the head's config: {'; '.join(mismatches)}; {advice}")
    model.load_state_dict(state)
    return model.to(device).eval()
