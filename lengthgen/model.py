"""The single attention head that reads from the query (last) position.

token embedding -> positional encoding -> biased q/k/v projections -> attention over
all keys (softmax, or the raw logits for the linear-attention control) -> unembedding
of the attended value.
"""

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from lengthgen.encodings import EncodingConfig, build_encoding
from lengthgen.tables import atomic_torch_save

ATTENTION_KINDS = ("softmax", "linear")


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

    def attention(self, tokens: torch.Tensor, position_offset: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """The query's attention logits and weights over every key, each (B, T).

        ``position_offset`` shifts every position id, for the equivariance tests.
        """
        scores, weights, _ = self._attend(tokens, position_offset)
        return scores, weights

    def predict(self, tokens: torch.Tensor, position_offset: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """(output logits (B, V), attention weights (B, T)) from one pass."""
        _, weights, values = self._attend(tokens, position_offset)
        attended = torch.einsum("bt,btd->bd", weights, values)  # (B, D)
        return self.unembedding(attended), weights

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor | None = None, position_offset: int = 0):
        """(logits (B, V), loss or None) for the token at the last position's target."""
        logits, _ = self.predict(tokens, position_offset)
        loss = None if targets is None else F.cross_entropy(logits, targets)
        return logits, loss

    def _attend(self, tokens: torch.Tensor, position_offset: int):
        _, length = tokens.shape
        positions = torch.arange(length, device=tokens.device) + position_offset  # (T,)
        x = self.encoding.embed(self.token_embedding(tokens), positions)  # (B, T, D)
        query = self.encoding.rotate(self.query(x[:, -1:]), positions[-1:])  # (B, 1, D)
        keys = self.encoding.rotate(self.key(x), positions)  # (B, T, D)
        scores = torch.einsum("bqd,btd->bt", query, keys) / math.sqrt(self.config.d_model)  # (B, T)
        bias = self.encoding.logit_bias(positions[-1:], positions)
        if bias is not None:
            scores = scores + bias[0]
        weights = scores.softmax(dim=-1) if self.config.attention == "softmax" else scores
        return scores, weights, self.value(x)


def save_head(model: AttentionHead, path) -> None:
    """Weights and config together, so a later analysis rebuilds the head without config."""
    state = {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()}
    atomic_torch_save({"config": asdict(model.config), "state_dict": state}, path)


def load_head(path, device: str | torch.device = "cpu") -> AttentionHead:
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = AttentionHead(HeadConfig(**checkpoint["config"]))
    model.load_state_dict(checkpoint["state_dict"])
    return model.to(device).eval()
