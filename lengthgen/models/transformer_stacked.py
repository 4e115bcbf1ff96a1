"""The transformer of every seed of a run at once: parameters stacked (S, ...), a forward pass written
for that shape.

``training.fit`` maps ``Transformer.forward`` over the seeds with ``torch.func.vmap`` of ``functional_call``
otherwise, restacking every parameter at every step, and vmap has no batching rule for the CPU's fused
attention kernel: it loops over the seeds. ``StackedTransformers`` keeps ``StackedHeads``' stacked leaves
(and its seed views for the optimizer) and runs the transformer with the kernels vmap dispatched to: one
flat embedding gather of every seed's table, LayerNorm without its affine then each seed's weight and
bias, every linear layer one batched matrix product (S, B*T, D) @ (S, D, D_out), and attention one fused
call on the seeds folded into the batch, (S*B, H, T, hd), which computes each (sequence, head) as the
per-seed calls did. So the numbers are those of the mapped transformer bit for bit
(``tests/test_stacked_transformer.py``: logits, losses and gradients), and ``Transformer`` stays the
definition.

The encoding's position term and rotation are called directly, or mapped over the seeds where the
encoding has parameters (the learned table; ``StackedHeads._hook``). A logit bias with parameters (t5,
FIRE, ALiBi's learned slope) and position ids drawn per sequence (randomized) keep the mapped path.
"""

import torch
import torch.nn.functional as F
from torch import nn

from lengthgen.models.encodings import PositionalEncoding
from lengthgen.models.head_stacked import StackedHeads
from lengthgen.task import IGNORE_INDEX


def stackable_transformer(model: nn.Module) -> bool:
    """Whether ``StackedTransformers`` computes this transformer: its encoding draws no position ids, and
    if it has parameters, it acts through the position embedding alone (a learned logit bias would enter
    the fused kernel as a mask, which takes no gradient; rotations are called unmapped)."""
    encoding = type(model.encoding)
    acts_elsewhere = any(getattr(encoding, hook) is not getattr(PositionalEncoding, hook)
                         for hook in ("rotate", "logit_bias"))
    learned = any(True for _ in model.encoding.parameters())
    return encoding.sample_positions is PositionalEncoding.sample_positions and not (learned and acts_elsewhere)


def stack_transformers(models: list[nn.Module]) -> "StackedTransformers | None":
    """The transformers ``models`` stacked, or None where ``StackedTransformers`` does not compute them."""
    return StackedTransformers(models) if all(stackable_transformer(model) for model in models) else None


class StackedTransformers(StackedHeads):
    """The transformers ``models`` (one per seed, same config) as stacked parameters ``parameters[name]``
    (S, ...), with ``StackedHeads``' seed views, ``zero_grad`` and ``write_back``."""

    def _norm(self, x: torch.Tensor, name: str) -> torch.Tensor:
        """LayerNorm ``name`` of every seed, (S, B, T, D): normalized, then each seed's weight and bias."""
        normalized = F.layer_norm(x, x.shape[-1:], eps=self.head.final_norm.eps)  # every norm's eps: nn.LayerNorm's
        return normalized * self.parameters[f"{name}.weight"][:, None, None] + self.parameters[f"{name}.bias"][:, None, None]

    def _dense(self, x: torch.Tensor, name: str) -> torch.Tensor:
        """Linear layer ``name`` of every seed on (S, B, T, D): one batched product over the B*T rows."""
        n_seeds, batch, length, width = x.shape
        return self._linear(x.reshape(n_seeds, batch * length, width), name).view(n_seeds, batch, length, -1)

    def _attention(self, x: torch.Tensor, name: str, positions: torch.Tensor, mask: torch.Tensor | None):
        """``CausalSelfAttention.forward`` of every seed, the seeds folded into the batch of one fused call."""
        n_seeds, batch, length, width = x.shape
        n_heads = self.config.n_heads
        query, key, value = self._dense(x, f"{name}.qkv").split(width, dim=-1)  # each (S, B, T, D)
        query, key, value = (t.view(n_seeds, batch, length, n_heads, -1).transpose(2, 3)
                             for t in (query, key, value))  # (S, B, H, T, hd)
        rotation_dtype = torch.promote_types(query.dtype, torch.float32)
        query, key = (self.head.encoding.rotate(t.to(rotation_dtype), positions).to(value.dtype) for t in (query, key))
        attended = F.scaled_dot_product_attention(
            query.flatten(0, 1), key.flatten(0, 1), value.flatten(0, 1),
            attn_mask=None if mask is None else mask.to(value.dtype), is_causal=mask is None)  # (S*B, H, T, hd)
        attended = attended.view(n_seeds, batch, n_heads, length, -1).transpose(2, 3).reshape(n_seeds, batch, length, width)
        return self._dense(attended, f"{name}.projection")

    def logits(self, tokens: torch.Tensor) -> torch.Tensor:
        """``Transformer._run`` of every seed on its batch ``tokens`` (S, B, T): logits (S, B, T, V)."""
        embeddings = self.parameters["token_embedding.weight"]  # (S, V, D)
        n_seeds, vocab_size, width = embeddings.shape
        positions = torch.arange(tokens.shape[-1], device=tokens.device)  # (T,)
        # Every seed's rows of one flat table, as vmap gathers them.
        rows = tokens + vocab_size * torch.arange(n_seeds, device=tokens.device)[:, None, None]
        x = F.embedding(rows, embeddings.reshape(n_seeds * vocab_size, width))  # (S, B, T, D)
        position_terms = self._hook("position_embedding", positions)  # (S, T, D), (T, D) or None
        if position_terms is not None:
            x = x + (position_terms[:, None] if position_terms.dim() == 3 else position_terms).to(x.dtype)
        mask = self.head.attention_mask(positions)  # no parameters (stackable_transformer): one for every seed
        for index in range(self.config.n_layers):
            block = f"blocks.{index}"
            x = x + self._attention(self._norm(x, f"{block}.attention_norm"), f"{block}.attention", positions, mask)
            hidden = F.gelu(self._dense(self._norm(x, f"{block}.mlp_norm"), f"{block}.mlp.up"))
            x = x + self._dense(hidden, f"{block}.mlp.down")
        return self._dense(self._norm(x, "final_norm"), "unembedding")

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor,
                positions: None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(loss (S,), logits (S, B, T, V)) for every seed's batch ``tokens`` and ``targets`` (S, B, T): what
        ``Transformer.forward`` gives each seed, the mean loss over the positions with a target. ``positions``
        is always None: a stacked transformer's encoding draws none (``stackable_transformer``)."""
        logits = self.logits(tokens)
        n_seeds = logits.shape[0]
        losses = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE_INDEX,
                                 reduction="none").view(n_seeds, -1)
        counted = (targets != IGNORE_INDEX).view(n_seeds, -1).sum(1)
        return losses.sum(1) / counted.to(losses.dtype), logits
