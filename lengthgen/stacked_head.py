"""The single head of every seed of a run at once: parameters stacked (S, ...), a forward pass written
for that shape.

``training.fit`` used to map ``AttentionHead.forward`` over the seeds with ``torch.func.vmap`` of
``functional_call``, restacking every parameter at every step. ``StackedHeads`` holds one leaf tensor
per parameter with a leading seed dimension and computes the same token tables (``AttentionHead.token_tables``)
with plain batched ops, the very kernels vmap dispatched to: a matrix product over (key token, position)
rows, one flat gather of every seed's logits, one flat ``index_add`` of every seed's attention mass. So the
numbers are those of the mapped head bit for bit (``tests/test_stacked_head.py`` holds the two equal,
logits, losses and gradients, for every encoding without per-sequence positions), and ``AttentionHead``
stays the definition of the head.

The encoding's hooks (position embedding, logit bias) are called directly where the encoding has no
parameters (rope, sinusoidal, nope, alibi), and mapped over the seeds where it has (the learned table,
t5's buckets, FIRE's MLP, ALiBi's learned slope): small tensors, a few ops per step.
Encodings that draw position ids per sequence (randomized) keep the mapped path in ``training.fit``.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from lengthgen.model import AttentionHead
from lengthgen.encodings import PositionalEncoding


class _Hook(nn.Module):
    """One method of an encoding as a module's forward, for ``functional_call`` under vmap."""

    def __init__(self, encoding: PositionalEncoding, method: str):
        super().__init__()
        self.encoding, self.method = encoding, method

    def forward(self, *args):
        return getattr(self.encoding, self.method)(*args)


def stackable(model: nn.Module) -> bool:
    """Whether ``StackedHeads`` computes this model: a single head whose encoding draws no position ids."""
    return (isinstance(model, AttentionHead)
            and type(model.encoding).sample_positions is PositionalEncoding.sample_positions)


class StackedHeads:
    """The heads ``models`` (one per seed, same config) as stacked parameters ``parameters[name]`` (S, ...).

    ``seed_parameters()`` gives each seed's parameters as views of the stacked leaves, whose gradients
    are views of the stacked gradients: an optimizer over them treats each seed's tensors as it would
    the seed's own (what keeps a seed's bits the same alone and beside others; ``training.fit``).
    ``write_back()`` copies the trained values into the models.
    """

    def __init__(self, models: list[AttentionHead]):
        self.models = models
        self.head = models[0]
        self.config = self.head.config
        names = [name for name, _ in self.head.named_parameters()]
        self.parameters = {name: torch.stack([dict(model.named_parameters())[name].detach() for model in models])
                           .requires_grad_() for name in names}
        self.encoding_parameters = {name[len("encoding."):]: value for name, value in self.parameters.items()
                                    if name.startswith("encoding.")}
        for leaf in self.parameters.values():
            leaf.grad = torch.zeros_like(leaf)

    def seed_parameters(self) -> list[torch.Tensor]:
        """Every seed's parameters, seed by seed, as views of the stacked leaves (values and gradients)."""
        views = []
        for index in range(len(self.models)):
            for leaf in self.parameters.values():
                view = leaf.detach()[index]
                view.grad = leaf.grad[index]
                views.append(view)
        return views

    def zero_grad(self) -> None:
        for leaf in self.parameters.values():
            leaf.grad.zero_()

    @torch.no_grad()
    def write_back(self) -> None:
        for index, model in enumerate(self.models):
            for name, parameter in model.named_parameters():
                parameter.copy_(self.parameters[name][index])

    def _hook(self, method: str, *args):
        """The encoding's ``method(*args)``: (S, ...) where it has parameters, else unbatched (None where
        the encoding does not define the hook)."""
        if getattr(type(self.head.encoding), method) is getattr(PositionalEncoding, method):
            return None
        if not self.encoding_parameters:
            return getattr(self.head.encoding, method)(*args)
        hook = _Hook(self.head.encoding, method)
        mapped = torch.func.vmap(lambda parameters: functional_call(hook, {f"encoding.{name}": value for name, value
                                                                           in parameters.items()}, args))
        return mapped(self.encoding_parameters)

    def _linear(self, x: torch.Tensor, name: str) -> torch.Tensor:
        """Linear layer ``name`` of every seed: (S, N, D) or (N, D) -> (S, N, D_out)."""
        return x @ self.parameters[f"{name}.weight"].transpose(-1, -2) + self.parameters[f"{name}.bias"][:, None]

    def token_tables(self, length: int):
        """``AttentionHead.token_tables`` of every seed: logits (S, V, T, V), token outputs (S, V, V_out),
        position outputs (S or 1, T, V_out) or None."""
        p = self.parameters
        embeddings = p["token_embedding.weight"]  # (S, V, D)
        n_seeds, vocab_size, d = embeddings.shape
        positions = self.head.positions(length, 0, embeddings.device)  # (T,)
        position_terms = self._hook("position_embedding", positions)  # (S, T, D), (T, D) or None
        if position_terms is not None:
            position_terms = position_terms.to(embeddings.dtype)
        last = embeddings if position_terms is None else embeddings + position_terms[..., -1:, :]  # (S, V, D)
        query = self.head.encoding.rotate(self._linear(last, "query")[:, :, None], positions[-1:])[:, :, 0]  # (S, V, D)
        keys = self._linear(embeddings, "key")[:, :, None]  # (S, V, 1, D)
        if position_terms is not None:
            keys = keys + (position_terms @ p["key.weight"].transpose(-1, -2))[:, None]  # (S, V, T, D)
        keys = self.head.encoding.rotate(keys, positions).expand(-1, -1, length, -1)  # (S, V, T, D)
        scaled_query = query.transpose(-1, -2) / math.sqrt(d)  # (S, D, V)
        if keys.stride(2) == 0:  # keys that do not depend on the position (no rotation, no position term)
            logits = keys @ scaled_query[:, None]  # (S, V, T, V): the broadcast product, as vmap computes it
        else:  # one matrix product per seed over every (key token, position) row, as vmap computes it
            logits = (keys.reshape(n_seeds, vocab_size * length, d) @ scaled_query).view(n_seeds, vocab_size, length, -1)
        bias = self._hook("logit_bias", positions[-1:], positions)  # (S, 1, T), (1, T) or None
        if bias is not None:
            logits = logits + bias[..., 0, :][..., None, :, None]
        logits = logits * self.head.logit_factor(length)
        token_outputs = self._linear(embeddings, "value") @ p["unembedding.weight"].transpose(-1, -2)  # (S, V, V_out)
        position_outputs = None if position_terms is None else (
            position_terms @ p["value.weight"].transpose(-1, -2) @ p["unembedding.weight"].transpose(-1, -2))
        return logits, token_outputs, position_outputs

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(loss (S,), logits (S, B, V_out)) for every seed's batch ``tokens`` (S, B, T) and ``targets`` (S, B):
        what ``AttentionHead.forward`` gives each seed on its own batch."""
        n_seeds, batch, length = tokens.shape
        logits, token_outputs, position_outputs = self.token_tables(length)
        vocab_size = logits.shape[-1]
        # Each seed's key logits gathered in the query token's column, from one flat table of all seeds.
        key_rows = tokens * length + torch.arange(length, device=tokens.device)  # (S, B, T)
        cells = key_rows * vocab_size + tokens[..., -1:]
        cells = cells + logits[0].numel() * torch.arange(n_seeds, device=tokens.device)[:, None, None]
        scores = logits.reshape(-1).index_select(0, cells.reshape(-1)).view(n_seeds, batch, length)
        weights = scores.softmax(dim=-1) if self.config.attention == "softmax" else scores
        # The attention mass on each token, every (seed, sequence) a row of one flat buffer (model.token_mass).
        slots = tokens + vocab_size * torch.arange(n_seeds * batch, device=tokens.device).view(n_seeds, batch, 1)
        mass = weights.new_zeros(n_seeds * batch * vocab_size).index_add(0, slots.reshape(-1), weights.reshape(-1))
        output = mass.view(n_seeds, batch, vocab_size) @ token_outputs + self.parameters["unembedding.bias"][:, None]
        if position_outputs is not None:
            output = output + weights @ position_outputs
        loss = F.cross_entropy(output.reshape(n_seeds * batch, -1), targets.reshape(-1),
                               reduction="none").view(n_seeds, batch).mean(1)
        return loss, output
