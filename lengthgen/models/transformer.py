"""A causal decoder in the spirit of nanoGPT's ``model.py``, for the full-sequence task.

token embedding (+ the encoding's position term) -> n_layers pre-norm blocks (causal multi-head
self-attention, MLP) -> final LayerNorm -> unembedding, predicting a token at every position.

The positional encoding is one entry of the registry in ``lengthgen.models.encodings``, the same that the
single head uses, and its hooks act where they would in the head: ``position_embedding`` once, on
the token embeddings; ``rotate`` on every layer's queries and keys, per head; ``logit_bias`` on
every layer's attention logits, together with the causal mask. ALiBi named without a slope gets
Press et al.'s slope per head, 2^(-8h/H) for head h = 1..H (``alibi_head_slopes``), as the
published model does; the single head keeps its one slope 2^-8, the same formula at H = 1.

``training.loop.train_transformers`` trains it on the full-sequence task with the single head's training loop.
Attention runs through ``F.scaled_dot_product_attention``. The analyses need what it does not
return (each head's unrotated queries and keys, its logits and weights); ``trace`` runs the same
model with a plain attention that records them, and the tests hold the two paths equal.
"""

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from lengthgen.models.checkpoint import load_model
from lengthgen.models.defaults import MODEL_DEFAULTS, TRANSFORMER_DEFAULTS
from lengthgen.models.encodings import (EncodingConfig, PositionalEncoding, build_encoding, encoding_parameters,
                                        resolve_encoding)
from lengthgen.models.init import initialize, parse_init
from lengthgen.task import IGNORE_INDEX


@dataclass(frozen=True)
class TransformerConfig:
    vocab_size: int
    pe: str
    n_layers: int
    n_heads: int
    d_model: int
    trained_positions: int  # the longest training length: rows a learned table stores (encodings.EncodingConfig)
    rope_base: float = MODEL_DEFAULTS["rope_base"]
    learned_init_std: float = MODEL_DEFAULTS["learned_init_std"]
    mlp_ratio: int = 4  # hidden width of the MLP, in multiples of d_model
    init: str = TRANSFORMER_DEFAULTS["init"]  # the init of every weight, by name (transformer.init; lengthgen/models/init.py)
    init_seed: int = 0  # the seed of the model's init (training.seeded_init sets it)

    def encoding_config(self) -> EncodingConfig:
        return EncodingConfig(self.d_model, self.trained_positions, self.rope_base, self.learned_init_std,
                              self.n_heads, self.init_seed, parse_init(self.init).encoding_std)


def alibi_head_slopes(n_heads: int) -> list[float]:
    """ALiBi's slope of each of ``n_heads`` heads (Press et al., ICLR 2022): m_h = 2^(-8h/H), h = 1..H, a
    geometric sequence from 2^(-8/H) down to 2^-8. Every H here is a power of two, where this is the paper's
    rule exactly (its interpolation for other H does not arise)."""
    return [2.0 ** (-8.0 * head / n_heads) for head in range(1, n_heads + 1)]


class PerHeadBias(PositionalEncoding):
    """One logit-bias encoding per head, stacked: ``logit_bias`` is (..., H, Tq, Tk), head h's bias from
    ``heads[h]``. It has no position term and no rotation; the parameters are the heads' own."""

    def __init__(self, heads: list[PositionalEncoding]):
        super().__init__()
        self.heads = nn.ModuleList(heads)

    def logit_bias(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
        return torch.stack([head.logit_bias(query_positions, key_positions) for head in self.heads], dim=-3)


def transformer_encoding(config: TransformerConfig) -> PositionalEncoding:
    """The encoding ``config.pe`` of every layer: the registry's entry, except that one with a slope (ALiBi, fixed or
    learned) named without one gets ALiBi's slope per head (``alibi_head_slopes``), each set on the name
    (``alibi@slope=m_h``); a slope on the name is every head's. Read from the class's parameters, not its type, so
    that the transformer imports no encoding's module."""
    encoding_config = config.encoding_config()
    cls, parameters = resolve_encoding(config.pe)
    if "slope" not in encoding_parameters(cls) or "slope" in parameters:
        return build_encoding(config.pe, encoding_config)
    separator = "," if "@" in config.pe else "@"
    return PerHeadBias([build_encoding(f"{config.pe}{separator}slope={slope!r}", encoding_config)
                        for slope in alibi_head_slopes(config.n_heads)])


class AttentionTrace(NamedTuple):
    """What one attention layer computed, recorded by ``Transformer.trace``."""

    query: torch.Tensor  # (B, H, T, hd): before the encoding's rotation
    key: torch.Tensor  # (B, H, T, hd): before the encoding's rotation
    logits: torch.Tensor  # (B, H, T, T): [query position, key position], -inf where the causal mask hides the key
    weights: torch.Tensor  # (B, H, T, T): softmax of the logits


class CausalSelfAttention(nn.Module):
    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.n_heads = config.n_heads
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.projection = nn.Linear(config.d_model, config.d_model)

    def forward(self, x: torch.Tensor, encoding: PositionalEncoding, positions: torch.Tensor,
                mask: torch.Tensor | None, record: list | None = None) -> torch.Tensor:
        """``mask``: the additive (T, T) or (H, T, T) mask (logit bias, -inf above the diagonal), or
        None for plain causal attention. ``record``: a list to append this layer's ``AttentionTrace``
        to, computed the plain way; None runs the fused kernel."""
        batch, length, width = x.shape
        query, key, value = self.qkv(x).split(width, dim=-1)  # each (B, T, D)
        query, key, value = (t.view(batch, length, self.n_heads, -1).transpose(1, 2) for t in (query, key, value))
        # (B, H, T, hd). Rotations run in at least float32: complex numbers have no bfloat16.
        rotation_dtype = torch.promote_types(query.dtype, torch.float32)
        rotated_query, rotated_key = (encoding.rotate(t.to(rotation_dtype), positions).to(value.dtype)
                                      for t in (query, key))
        if record is None:
            attended = F.scaled_dot_product_attention(
                rotated_query, rotated_key, value, attn_mask=None if mask is None else mask.to(value.dtype),
                is_causal=mask is None)
        else:
            mask = causal_mask(length, value.device, value.dtype) if mask is None else mask.to(value.dtype)
            logits = rotated_query @ rotated_key.transpose(-2, -1) / math.sqrt(query.shape[-1]) + mask  # (B, H, T, T)
            weights = logits.softmax(dim=-1)
            attended = weights @ value
            record.append(AttentionTrace(query, key, logits, weights))
        return self.projection(attended.transpose(1, 2).reshape(batch, length, width))  # (B, T, D)


class MLP(nn.Module):
    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.up = nn.Linear(config.d_model, config.mlp_ratio * config.d_model)
        self.down = nn.Linear(config.mlp_ratio * config.d_model, config.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))


class Block(nn.Module):
    """Pre-norm: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.attention_norm = nn.LayerNorm(config.d_model)
        self.attention = CausalSelfAttention(config)
        self.mlp_norm = nn.LayerNorm(config.d_model)
        self.mlp = MLP(config)

    def forward(self, x, encoding, positions, mask, record=None):
        x = x + self.attention(self.attention_norm(x), encoding, positions, mask, record)
        return x + self.mlp(self.mlp_norm(x))


def causal_mask(length: int, device, dtype) -> torch.Tensor:
    """(T, T): 0 where query position t may see key position s (s <= t), -inf elsewhere."""
    hidden = torch.ones(length, length, dtype=torch.bool, device=device).triu(1)
    return torch.zeros(length, length, dtype=dtype, device=device).masked_fill(hidden, -math.inf)


class Transformer(nn.Module):
    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)
        self.encoding = transformer_encoding(config)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.final_norm = nn.LayerNorm(config.d_model)
        self.unembedding = nn.Linear(config.d_model, config.vocab_size)
        # By default nanoGPT's init (lengthgen/models/init.py): the projections into the residual
        # stream are the attention's output projection and the MLP's down projection.
        initialize([self.token_embedding, self.blocks, self.unembedding], parse_init(config.init),
                   residual=lambda name: name.endswith(("projection.weight", "down.weight")),
                   n_layers=config.n_layers)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor | None = None, position_offset: int = 0):
        """(logits (B, T, V), loss or None). ``targets`` (B, T), ``IGNORE_INDEX`` where a position has
        none; ``position_offset`` shifts every position id, for the equivariance tests."""
        logits = self._run(tokens, position_offset)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX)
        return logits, loss

    def trace(self, tokens: torch.Tensor, position_offset: int = 0) -> tuple[torch.Tensor, list[AttentionTrace]]:
        """(logits (B, T, V), one ``AttentionTrace`` per layer), through the plain attention."""
        record = []
        return self._run(tokens, position_offset, record), record

    def attention(self, tokens: torch.Tensor, position_offset: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """Every layer's and head's attention logits and weights at the (query, key) pairs the causal
        mask keeps, each (B, L * H * T (T + 1) / 2): the shift experiment's view of all the logits."""
        _, record = self.trace(tokens, position_offset)
        kept = torch.ones(tokens.shape[1], tokens.shape[1], dtype=torch.bool, device=tokens.device).tril()
        scores = torch.cat([layer.logits[..., kept].flatten(1) for layer in record], dim=1)
        weights = torch.cat([layer.weights[..., kept].flatten(1) for layer in record], dim=1)
        return scores, weights

    def _run(self, tokens: torch.Tensor, position_offset: int, record: list | None = None) -> torch.Tensor:
        length = tokens.shape[1]
        positions = torch.arange(length, device=tokens.device) + position_offset  # (T,)
        x = self.token_embedding(tokens)  # (B, T, D)
        position_terms = self.encoding.position_embedding(positions)  # (T, D) or None
        if position_terms is not None:
            x = x + position_terms.to(x.dtype)
        mask = self.attention_mask(positions)
        for block in self.blocks:
            x = block(x, self.encoding, positions, mask, record)
        return self.unembedding(self.final_norm(x))  # (B, T, V)

    def attention_mask(self, positions: torch.Tensor) -> torch.Tensor | None:
        """The additive mask of every layer at ``positions`` (T,): the encoding's logit bias plus the
        causal mask, (T, T) or (H, T, T); None without a bias, where the fused kernel's own causal mask is cheaper."""
        bias = self.encoding.logit_bias(positions, positions)  # (T, T), (H, T, T) or None
        return None if bias is None else bias + causal_mask(len(positions), positions.device, bias.dtype)


def load_transformer(path, device: str | torch.device = "cpu", expected: dict | None = None) -> Transformer:
    """The transformer saved at ``path``, checked against ``expected`` settings (``checkpoint.load_model``)."""
    return load_model(path, Transformer, TransformerConfig, device, expected)
