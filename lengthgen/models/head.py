"""The single attention head that reads from the query (last) position.

token embedding -> positional encoding -> biased q/k/v projections -> attention over
all keys (softmax, or the raw logits for the linear-attention control) -> unembedding
of the attended value.

With V tokens and one query, most of that is repeated work: it is computed once per token
and per position in small tables, gathered per sequence (``token_tables``); the plain
per-sequence computation stays as the definition (``reference_predict``).

Randomized encodings give every sequence its own position ids (``positions``, (B, T), drawn by
``encoding.sample_positions``): then the query position differs per sequence, so the head
projects once per token and once per position id, gathers each sequence's keys from those
tables and takes one query per sequence (``_attend_per_sequence``).
"""

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from lengthgen.models.checkpoint import load_model
from lengthgen.models.defaults import MODEL_DEFAULTS
from lengthgen.models.encodings import EncodingConfig, PositionalEncoding, build_encoding
from lengthgen.models.init import initialize, parse_init
from lengthgen.models.length_scaling import LOGIT_SCALES, POSITION_SCALES, check_scales

ATTENTION_KINDS = ("softmax", "linear")


def token_mass(tokens: torch.Tensor, weights: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """The summed weight of the keys holding each token, per sequence. (B, T), (B, T) -> (B, V).

    One ``index_add`` into a flat (B * V) buffer: deterministic, with a deterministic backward.
    """
    batch = tokens.shape[0]
    slots = tokens + vocab_size * torch.arange(batch, device=tokens.device)[:, None]  # (B, T)
    mass = weights.new_zeros(batch * vocab_size).index_add(0, slots.reshape(-1), weights.reshape(-1))
    return mass.view(batch, vocab_size)


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
    trained_positions: int  # the longest training length: rows a learned table stores (encodings.EncodingConfig)
    rope_base: float = MODEL_DEFAULTS["rope_base"]
    learned_init_std: float = MODEL_DEFAULTS["learned_init_std"]
    attention: str = "softmax"
    # Length scaling (lengthgen/models/length_scaling.py): factors of the sequence length n and of
    # reference_length (the longest training length) on the attention logits and position ids.
    logit_scale: str = "none"
    position_scale: str = "none"
    reference_length: int | None = None
    init: str = MODEL_DEFAULTS["init"]  # the init of every weight, by name (model.init; lengthgen/models/init.py)
    init_seed: int = 0  # the seed of the model's init (training.seeded_init sets it)

    def encoding_config(self) -> EncodingConfig:
        return EncodingConfig(self.d_model, self.trained_positions, self.rope_base, self.learned_init_std,
                              init_seed=self.init_seed, init_std=parse_init(self.init).encoding_std)


class AttentionHead(nn.Module):
    def __init__(self, config: HeadConfig):
        super().__init__()
        if config.attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {ATTENTION_KINDS}, got {config.attention!r}")
        check_scales(config.logit_scale, config.position_scale, config.reference_length)
        self.config = config
        d = config.d_model
        self.token_embedding = nn.Embedding(config.vocab_size, d)
        self.encoding = build_encoding(config.pe, config.encoding_config())
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.unembedding = nn.Linear(d, config.vocab_size)
        initialize([self.token_embedding, self.query, self.key, self.value, self.unembedding], parse_init(config.init))

    def predict(self, tokens: torch.Tensor, position_offset: int = 0, positions: torch.Tensor | None = None,
                tables: TokenTables | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(output logits (B, V), attention weights (B, T)) from one pass.

        ``positions``: (B, T) position ids per sequence; None: 0..T-1 for every sequence. ``tables``: this
        length's ``token_tables(T, position_offset)``, where a caller passes many batches of one length: the
        same numbers, the tables computed once rather than per batch.
        """
        if positions is not None:
            _, weights, position_readout = self._attend_per_sequence(tokens, self._per_sequence(positions) + position_offset)
            return self._read_out(tokens, weights, self._token_outputs(), position_readout), weights
        tables = self.token_tables(tokens.shape[1], position_offset) if tables is None else tables
        _, weights = self._attend(tokens, tables)
        position_readout = None if tables.position_outputs is None else weights @ tables.position_outputs
        return self._read_out(tokens, weights, tables.token_outputs, position_readout), weights

    def attention(self, tokens: torch.Tensor, position_offset: int = 0, positions: torch.Tensor | None = None,
                  tables: TokenTables | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """The query's attention logits and weights over every key, each (B, T).

        ``position_offset`` shifts every position id, for the equivariance tests; ``tables`` as in ``predict``.
        """
        if positions is not None:
            return self._attend_per_sequence(tokens, self._per_sequence(positions) + position_offset)[:2]
        return self._attend(tokens, self.token_tables(tokens.shape[1], position_offset) if tables is None else tables)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor | None = None, position_offset: int = 0,
                positions: torch.Tensor | None = None):
        """(logits (B, V), loss or None) for the token at the last position's target."""
        logits, _ = self.predict(tokens, position_offset, positions)
        loss = None if targets is None else F.cross_entropy(logits, targets)
        return logits, loss

    def token_tables(self, length: int, position_offset: int = 0) -> TokenTables:
        """Everything the head computes for sequences of ``length``, per token and per position.

        The embedding of token v at position t is E[v] + p[t] (p from the encoding, or none), and
        every projection is linear, so queries, keys and values split into a token part and a
        position part, each computed once. Only the rotation and the logits need (token, position)
        pairs, and V x T x V logits are few.
        """
        positions = self.positions(length, position_offset, self.unembedding.weight.device)  # (T,)
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
        logits = logits * self.logit_factor(length)
        return TokenTables(logits=logits, token_outputs=self._token_outputs(),
                           position_outputs=self._position_outputs(position_terms))

    def _token_outputs(self) -> torch.Tensor:
        """(V, V_out): the unembedded value of each token, without the unembedding bias."""
        return self.value(self.token_embedding.weight) @ self.unembedding.weight.T

    def _position_outputs(self, position_terms: torch.Tensor | None) -> torch.Tensor | None:
        """(..., V_out): the unembedded value of position terms (..., D) (no value bias: it is in the tokens')."""
        return None if position_terms is None else position_terms @ self.value.weight.T @ self.unembedding.weight.T

    def positions(self, length: int, position_offset: int, device) -> torch.Tensor:
        """The position ids of a sequence of ``length``: 0..length-1 shifted by ``position_offset``,
        int64; times the position scale's factor, as float64, where that factor is not 1."""
        positions = torch.arange(length, device=device) + position_offset  # (T,)
        factor = POSITION_SCALES[self.config.position_scale](length, self.config.reference_length)
        return positions if factor == 1 else positions.to(torch.float64) * factor

    def _per_sequence(self, positions: torch.Tensor) -> torch.Tensor:
        """Per-sequence position ids (B, T) as given: a position scale is defined for 0..T-1 only."""
        if self.config.position_scale != "none":
            raise ValueError(f"position_scale {self.config.position_scale!r} rescales 0..T-1; it is not "
                             "defined for per-sequence position ids")
        return positions

    def logit_factor(self, length: int) -> float:
        """What the logit scale multiplies every attention logit by at this sequence length."""
        return LOGIT_SCALES[self.config.logit_scale](length, self.config.reference_length)

    def _attend(self, tokens: torch.Tensor, tables: TokenTables) -> tuple[torch.Tensor, torch.Tensor]:
        """(scores (B, T), weights (B, T)): each key's logit gathered from the table.

        The gather indexes the flattened table with ``index_select``, whose backward
        (``index_add``) is deterministic on CPU and CUDA alike.
        """
        batch, length = tokens.shape
        if tables.logits.shape[1] != length:  # the flat gather would read another length's cells without an error
            raise ValueError(f"token tables of length {tables.logits.shape[1]} for sequences of length {length}")
        vocab_size = tables.logits.shape[2]
        key_rows = tokens * length + torch.arange(length, device=tokens.device)  # (B, T): row of (token, position)
        cells = key_rows * vocab_size + tokens[:, -1:]  # (B, T): in the query token's column
        scores = tables.logits.reshape(-1).index_select(0, cells.reshape(-1)).view(batch, length)
        weights = scores.softmax(dim=-1) if self.config.attention == "softmax" else scores
        return scores, weights

    def _attend_per_sequence(self, tokens: torch.Tensor, positions: torch.Tensor):
        """(scores (B, T), weights (B, T), position readout (B, V_out) or None) when each sequence
        has its own position ids (B, T).

        Queries, keys and values split into a token part and a position part as in ``token_tables``;
        the token parts are projected once per token and gathered. The position part is never
        projected key by key: an encoding that does not rotate adds p_t . (W_k^T q) to the logit and
        (sum_t w_t p_t) W_v^T W_u^T to the output, so the cost does not grow with the ids' range.
        No shape depends on the ids' values, so seeds train side by side under vmap.
        """
        embeddings = self.token_embedding.weight  # (V, D)
        position_terms = self.encoding.position_embedding(positions)  # (B, T, D) or None
        query_in = gather_rows(embeddings, tokens[:, -1])  # (B, D)
        if position_terms is not None:
            if type(self.encoding).rotate is not PositionalEncoding.rotate:
                raise NotImplementedError(f"{self.config.pe}: per-sequence ids with both a position term and a rotation")
            position_terms = position_terms.to(embeddings.dtype)
            query_in = query_in + position_terms[:, -1]
        query = self.encoding.rotate(self.query(query_in)[:, None], positions[:, -1:])  # (B, 1, D)
        keys = self.encoding.rotate(gather_rows(self.key(embeddings), tokens), positions)  # (B, T, D)
        scores = (keys @ query.transpose(1, 2))[..., 0]  # (B, T)
        if position_terms is not None:
            scores = scores + (position_terms @ (query @ self.key.weight).transpose(1, 2))[..., 0]
        scores = scores / math.sqrt(self.config.d_model)
        bias = self.encoding.logit_bias(positions[:, -1:], positions)  # (B, 1, T) or None
        if bias is not None:
            scores = scores + bias[:, 0]
        scores = scores * self.logit_factor(tokens.shape[1])
        weights = scores.softmax(dim=-1) if self.config.attention == "softmax" else scores
        if position_terms is None:
            return scores, weights, None
        attended_positions = (weights[:, None, :] @ position_terms)[:, 0]  # (B, D)
        return scores, weights, self._position_outputs(attended_positions)

    def _read_out(self, tokens: torch.Tensor, weights: torch.Tensor, token_outputs: torch.Tensor,
                  position_readout: torch.Tensor | None) -> torch.Tensor:
        """Output logits (B, V_out): the attention mass on each token times its output, plus the
        position part of the values as weighted by the attention (B, V_out), plus the unembedding bias."""
        logits = token_mass(tokens, weights, token_outputs.shape[0]) @ token_outputs + self.unembedding.bias
        return logits if position_readout is None else logits + position_readout

    def reference_predict(self, tokens: torch.Tensor, position_offset: int = 0,
                          positions: torch.Tensor | None = None):
        """(output logits (B, V), attention logits (B, T), weights (B, T)), computed the plain way.

        The definition of the head: every position's embedding, query, key and value computed
        per sequence. ``predict`` and ``attention`` compute the same function from token tables,
        many times faster; the tests hold the two equal.
        """
        length = tokens.shape[1]
        if positions is None:
            positions = self.positions(length, position_offset, tokens.device)  # (T,)
        else:
            positions = self._per_sequence(positions) + position_offset  # (B, T)
        x = self.token_embedding(tokens)  # (B, T, D)
        position_terms = self.encoding.position_embedding(positions)
        if position_terms is not None:
            x = x + position_terms.to(x.dtype)
        query = self.encoding.rotate(self.query(x[:, -1:]), positions[..., -1:])  # (B, 1, D)
        keys = self.encoding.rotate(self.key(x), positions)  # (B, T, D)
        scores = torch.einsum("bqd,btd->bt", query, keys) / math.sqrt(self.config.d_model)  # (B, T)
        bias = self.encoding.logit_bias(positions[..., -1:], positions)  # (1, T) or (B, 1, T)
        if bias is not None:
            scores = scores + bias[..., 0, :]
        scores = scores * self.logit_factor(length)
        weights = scores.softmax(dim=-1) if self.config.attention == "softmax" else scores
        attended = torch.einsum("bt,btd->bd", weights, self.value(x))  # (B, D)
        return self.unembedding(attended), scores, weights


def gather_rows(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``table[index]`` for an index of any shape, through ``index_select``, whose backward
    (``index_add``) is deterministic on CPU and CUDA alike. (N, D), (...) -> (..., D)."""
    return table.index_select(0, index.reshape(-1)).view(*index.shape, *table.shape[1:])


def load_head(path, device: str | torch.device = "cpu", expected: dict | None = None) -> AttentionHead:
    """The head saved at ``path``, checked against ``expected`` settings (``checkpoint.load_model``)."""
    return load_model(path, AttentionHead, HeadConfig, device, expected)
