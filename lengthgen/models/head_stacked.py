"""The single head of every seed of a run at once: parameters stacked (S, ...), a forward pass written
for that shape.

``training.fit`` used to map ``AttentionHead.forward`` over the seeds with ``torch.func.vmap`` of
``functional_call``, restacking every parameter at every step. ``StackedHeads`` holds one leaf tensor
per parameter with a leading seed dimension and computes the same token tables (``AttentionHead.token_tables``)
with plain batched ops, the very kernels vmap dispatched to: a matrix product over (key token, position)
rows, one flat gather of every seed's logits, one flat ``index_add`` of every seed's attention mass. So the
numbers are those of the mapped head bit for bit (``tests/test_stacked_head.py`` holds the two equal,
logits, losses and gradients, for every encoding), and ``AttentionHead`` stays the definition of the head.

Encodings that draw position ids per sequence (randomized) give every seed its own ids (S, B, T):
``AttentionHead._attend_per_sequence`` written with a leading seed dimension: the products on the kernels
vmap dispatched to (one batched matrix product per (seed, sequence)), every seed's key rows read in one
flat ``index_select`` (``gather_seed_rows``: vmap's ``gather`` gives the same values, slower).

The encoding's hooks (position embedding, logit bias) are called directly where the encoding has no
parameters (rope, sinusoidal, nope, alibi), and mapped over the seeds where it has (the learned table,
t5's buckets, FIRE's MLP, ALiBi's learned slope): small tensors, a few ops per step.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from lengthgen.models.head import AttentionHead
from lengthgen.models.encodings import PositionalEncoding


class _Hook(nn.Module):
    """One method of an encoding as a module's forward, for ``functional_call`` under vmap."""

    def __init__(self, encoding: PositionalEncoding, method: str):
        super().__init__()
        self.encoding, self.method = encoding, method

    def forward(self, *args):
        return getattr(self.encoding, self.method)(*args)


def stackable(model: nn.Module) -> bool:
    """Whether ``StackedHeads`` computes this model: a single head (with or without per-sequence positions)."""
    return isinstance(model, AttentionHead)


def gather_seed_rows(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Each seed's ``model.gather_rows(table[s], index[s])``: one ``index_select`` of whole rows from the seeds'
    tables flattened to (S * N, D), whose backward is one ``index_add``. vmap computes it as a ``gather`` with
    the index broadcast over the columns, and its backward as a ``scatter_add``: the same values, and each
    gradient row summed in the same order (the tests hold the bits equal), at a third of the cost.
    (S, N, D), (S, ...) -> (S, ..., D)."""
    n_seeds, rows, columns = table.shape
    flat = index + rows * torch.arange(n_seeds, device=index.device).view(-1, *[1] * (index.dim() - 1))
    return table.reshape(n_seeds * rows, columns).index_select(0, flat.reshape(-1)).view(*index.shape, columns)


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

    def _hook(self, method: str, *args, per_seed: bool = False):
        """The encoding's ``method(*args)``: (S, ...) where it has parameters or ``per_seed`` args (each (S, ...),
        a seed's own position ids), else unbatched (None where the encoding does not define the hook)."""
        if getattr(type(self.head.encoding), method) is getattr(PositionalEncoding, method):
            return None
        if not self.encoding_parameters:  # the hooks take position ids of any leading shape
            return getattr(self.head.encoding, method)(*args)
        hook = _Hook(self.head.encoding, method)
        mapped = torch.func.vmap(lambda parameters, *seed_args: functional_call(
            hook, {f"encoding.{name}": value for name, value in parameters.items()}, seed_args),
            in_dims=(0, *[0 if per_seed else None] * len(args)))
        return mapped(self.encoding_parameters, *args)

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
        return logits, self._token_outputs(), self._position_outputs(position_terms)

    def _token_outputs(self) -> torch.Tensor:
        """(S, V, V_out): ``AttentionHead._token_outputs`` of every seed."""
        return self._linear(self.parameters["token_embedding.weight"], "value") @ (
            self.parameters["unembedding.weight"].transpose(-1, -2))

    def _position_outputs(self, position_terms: torch.Tensor | None) -> torch.Tensor | None:
        """``AttentionHead._position_outputs`` of every seed: (..., D) or (S, ..., D) -> (S, ..., V_out), or None."""
        p = self.parameters
        return None if position_terms is None else (
            position_terms @ p["value.weight"].transpose(-1, -2) @ p["unembedding.weight"].transpose(-1, -2))

    def _attend_per_sequence(self, tokens: torch.Tensor, positions: torch.Tensor):
        """``AttentionHead._attend_per_sequence`` of every seed, each on its own position ids (S, B, T):
        (weights (S, B, T), position readout (S, B, V_out) or None). Every product has the shapes it has
        under vmap: one batched matrix product per (seed, sequence) over its keys."""
        p = self.parameters
        embeddings = p["token_embedding.weight"]  # (S, V, D)
        n_seeds, batch, length = tokens.shape
        d = embeddings.shape[-1]
        encoding = self.head.encoding
        position_terms = self._hook("position_embedding", positions, per_seed=True)  # (S, B, T, D) or None
        query_in = gather_seed_rows(embeddings, tokens[..., -1])  # (S, B, D)
        if position_terms is not None:
            if type(encoding).rotate is not PositionalEncoding.rotate:
                raise NotImplementedError(f"{self.config.pe}: per-sequence ids with both a position term and a rotation")
            position_terms = position_terms.to(embeddings.dtype)
            query_in = query_in + position_terms[:, :, -1]
        query = encoding.rotate(self._linear(query_in, "query")[:, :, None], positions[..., -1:])  # (S, B, 1, D)
        keys = encoding.rotate(gather_seed_rows(self._linear(embeddings, "key"), tokens), positions)  # (S, B, T, D)
        scores = (keys @ query.transpose(-1, -2))[..., 0]  # (S, B, T)
        if position_terms is not None:  # p_t . (W_k^T q), the query of every sequence of a seed in one product
            key_query = (query.view(n_seeds, batch, d) @ p["key.weight"]).view(n_seeds, batch, 1, d)
            scores = scores + (position_terms @ key_query.transpose(-1, -2))[..., 0]
        scores = scores / math.sqrt(d)
        bias = self._hook("logit_bias", positions[..., -1:], positions, per_seed=True)  # (S, B, 1, T) or None
        if bias is not None:
            scores = scores + bias[..., 0, :]
        scores = scores * self.head.logit_factor(length)
        weights = scores.softmax(dim=-1) if self.config.attention == "softmax" else scores
        if position_terms is None:
            return weights, None
        attended_positions = (weights[..., None, :] @ position_terms)[..., 0, :]  # (S, B, D)
        return weights, self._position_outputs(attended_positions)

    def _attend(self, tokens: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        """Attention weights (S, B, T): each seed's key logits gathered in the query token's column, from one
        flat table (S, V, T, V) of all seeds."""
        n_seeds, batch, length = tokens.shape
        vocab_size = logits.shape[-1]
        key_rows = tokens * length + torch.arange(length, device=tokens.device)  # (S, B, T)
        cells = key_rows * vocab_size + tokens[..., -1:]
        cells = cells + logits[0].numel() * torch.arange(n_seeds, device=tokens.device)[:, None, None]
        scores = logits.reshape(-1).index_select(0, cells.reshape(-1)).view(n_seeds, batch, length)
        return scores.softmax(dim=-1) if self.config.attention == "softmax" else scores

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor,
                positions: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(loss (S,), logits (S, B, V_out)) for every seed's batch ``tokens`` (S, B, T) and ``targets`` (S, B),
        with each seed's per-sequence position ids ``positions`` (S, B, T) where the encoding draws them:
        what ``AttentionHead.forward`` gives each seed on its own batch."""
        n_seeds, batch, length = tokens.shape
        if positions is None:
            logits, token_outputs, position_outputs = self.token_tables(length)
            weights = self._attend(tokens, logits)
            position_readout = None if position_outputs is None else weights @ position_outputs
        else:
            weights, position_readout = self._attend_per_sequence(tokens, self.head._per_sequence(positions))
            token_outputs = self._token_outputs()
        vocab_size = token_outputs.shape[-2]
        # The attention mass on each token, every (seed, sequence) a row of one flat buffer (model.token_mass).
        slots = tokens + vocab_size * torch.arange(n_seeds * batch, device=tokens.device).view(n_seeds, batch, 1)
        mass = weights.new_zeros(n_seeds * batch * vocab_size).index_add(0, slots.reshape(-1), weights.reshape(-1))
        output = mass.view(n_seeds, batch, vocab_size) @ token_outputs + self.parameters["unembedding.bias"][:, None]
        if position_readout is not None:
            output = output + position_readout
        loss = F.cross_entropy(output.reshape(n_seeds * batch, -1), targets.reshape(-1),
                               reduction="none").view(n_seeds, batch).mean(1)
        return loss, output
