"""The minimal stacked rope head: the yardstick the pipeline's training step is measured against.

The same computation as the pipeline's rope head (``lengthgen.models.head_stacked``) on the same kernels, written
in as few ops as it takes and nothing else: parameters with a leading seed dimension (S, ...), the V x T x V
logit table of the last position's query against every (key token, position), softmax over the gathered
logits, the value readout by attention mass per token, cross-entropy, and Adam's fused step. No encoding
registry, no hooks, no length scales, no progress checks: what ``bench/benchmark.py --speed`` divides by.
"""

import math

import torch
import torch.nn.functional as F

from lengthgen.models.encodings.randomized import sorted_random_subsets
from lengthgen.training.adam import FusedAdam


class MinimalRopeHeads:
    def __init__(self, n_seeds: int, vocab_size: int, d_model: int, rope_base: float, generator: torch.Generator):
        def draw(*shape):
            return (torch.randn(n_seeds, *shape, generator=generator) / math.sqrt(shape[-1])).requires_grad_()

        self.embedding = draw(vocab_size, d_model)
        self.query, self.key, self.value = (draw(d_model, d_model) for _ in range(3))
        self.query_bias, self.key_bias, self.value_bias = (draw(1, d_model) for _ in range(3))
        self.unembedding, self.unembedding_bias = draw(vocab_size, d_model), draw(1, vocab_size)
        self.parameters = [self.embedding, self.query, self.query_bias, self.key, self.key_bias, self.value,
                           self.value_bias, self.unembedding, self.unembedding_bias]
        self.theta = rope_base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (D/2,)

    def rotate(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """x (..., T, D) rotated by position: block i as a complex number times e^{i p theta_i}."""
        phasors = torch.polar(torch.ones(len(positions), len(self.theta), dtype=torch.float64),
                              positions.double()[:, None] * self.theta).to(torch.complex64)
        return torch.view_as_real(torch.view_as_complex(x.unflatten(-1, (-1, 2))) * phasors).flatten(-2)

    def loss(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The summed per-seed mean cross-entropy of batches ``tokens`` (S, B, T), targets (S, B)."""
        n_seeds, batch, length = tokens.shape
        vocab_size, d = self.embedding.shape[1:]
        positions = torch.arange(length)
        queries = self.embedding @ self.query.mT + self.query_bias
        queries = self.rotate(queries[:, :, None], positions[-1:])[:, :, 0]  # (S, V, D)
        keys = self.rotate((self.embedding @ self.key.mT + self.key_bias)[:, :, None], positions)  # (S, V, T, D)
        table = (keys.reshape(n_seeds, vocab_size * length, d) @ queries.mT / math.sqrt(d))  # (S, V*T, V)
        cells = (tokens * length + positions) * vocab_size + tokens[..., -1:]
        cells = cells + table[0].numel() * torch.arange(n_seeds)[:, None, None]
        weights = table.reshape(-1)[cells.reshape(-1)].view(n_seeds, batch, length).softmax(-1)
        return self.read_out(tokens, weights, targets)

    def read_out(self, tokens: torch.Tensor, weights: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The summed per-seed mean cross-entropy of the value readout by attention mass per token, from the attention
        ``weights`` (S, B, T) over ``tokens`` (S, B, T)."""
        n_seeds, batch, _ = tokens.shape
        vocab_size = self.embedding.shape[1]
        slots = tokens + vocab_size * torch.arange(n_seeds * batch).view(n_seeds, batch, 1)
        mass = weights.new_zeros(n_seeds * batch * vocab_size).index_add(0, slots.reshape(-1), weights.reshape(-1))
        readout = (self.embedding @ self.value.mT + self.value_bias) @ self.unembedding.mT  # (S, V, V)
        output = mass.view(n_seeds, batch, vocab_size) @ readout + self.unembedding_bias
        return F.cross_entropy(output.reshape(n_seeds * batch, -1), targets.reshape(-1)) * n_seeds


def train_minimal(n_seeds: int, vocab_size: int, d_model: int, rope_base: float, steps: int, batch_size: int,
                  lengths: tuple[int, int], offset: int, lr: float) -> None:
    """``steps`` Adam steps of ``n_seeds`` minimal heads on random batches of the retrieval task."""
    generator = torch.Generator().manual_seed(0)
    heads = MinimalRopeHeads(n_seeds, vocab_size, d_model, rope_base, generator)
    adam_steps(heads, generator, steps, batch_size, lengths, offset, lr)


def adam_steps(heads, generator: torch.Generator, steps: int, batch_size: int, lengths: tuple[int, int], offset: int,
               lr: float, rows: int | None = None) -> None:
    """``steps`` Adam steps of ``heads`` on random batches of the retrieval task drawn from ``generator``; with
    ``rows``, each sequence's ids drawn from [0, rows) as the randomized encodings draw them."""
    adam = FusedAdam(heads.parameters)
    for _ in range(steps):
        length = int(torch.randint(lengths[0], lengths[1] + 1, (), generator=generator))
        tokens = torch.randint(heads.embedding.shape[1], (heads.embedding.shape[0], batch_size, length),
                               generator=generator)
        ids = () if rows is None else (sorted_random_subsets(tokens.shape[0] * batch_size, length, rows, generator)
                                       .view(tokens.shape),)
        for parameter in heads.parameters:
            parameter.grad = None
        heads.loss(tokens, tokens[..., -1 - offset], *ids).backward()
        adam.step(lr)


class MinimalRandomizedLearnedHeads(MinimalRopeHeads):
    """The minimal stacked randomized-learned head: the default randomized_learned head's computation (a learned table
    of ``rows`` position rows, read at ids drawn per sequence) in as few ops as it takes, with autograd. Each key is
    the sum of its token's and its id's rows, so its logit is one dot product with r = W_k^T q (its query through the
    key layer) and the attended value one weighted sum of the keys' rows: no key is projected on its own."""

    def __init__(self, n_seeds: int, vocab_size: int, d_model: int, rows: int, generator: torch.Generator):
        super().__init__(n_seeds, vocab_size, d_model, 1.0, generator)
        self.table = (torch.randn(n_seeds * rows, d_model, generator=generator) / math.sqrt(d_model)).requires_grad_()
        self.parameters.append(self.table)
        self.rows = rows

    def loss(self, tokens: torch.Tensor, targets: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """The summed per-seed mean cross-entropy of batches ``tokens`` (S, B, T) at ids ``positions`` (S, B, T)."""
        n_seeds, batch, length = tokens.shape
        d = self.embedding.shape[-1]
        seeds = torch.arange(n_seeds)[:, None, None]
        inputs = self.embedding[seeds, tokens] + F.embedding(positions + self.rows * seeds, self.table)  # (S, B, T, D)
        queries = (inputs[:, :, -1] @ self.query.mT + self.query_bias) / math.sqrt(d)  # (S, B, D)
        logits = (inputs @ (queries @ self.key)[..., None])[..., 0] + (queries * self.key_bias).sum(-1, keepdim=True)
        attended = (logits.softmax(-1)[:, :, None] @ inputs)[:, :, 0]  # (S, B, D)
        output = (attended @ self.value.mT + self.value_bias) @ self.unembedding.mT + self.unembedding_bias
        return F.cross_entropy(output.reshape(n_seeds * batch, -1), targets.reshape(-1)) * n_seeds


class MinimalRandomizedRopeHeads(MinimalRopeHeads):
    """The minimal stacked randomized-rope head: the default randomized_rope head's computation (rope at ids drawn per
    sequence from [0, ``rows``)) in as few ops as it takes, with autograd: every token's query and key projected once,
    each key's rotated by its id's phasors (a table of every id's, made once), the query by its own."""

    def __init__(self, n_seeds: int, vocab_size: int, d_model: int, rope_base: float, rows: int,
                 generator: torch.Generator):
        super().__init__(n_seeds, vocab_size, d_model, rope_base, generator)
        self.phasors = torch.polar(torch.ones(rows, len(self.theta), dtype=torch.float64),
                                   torch.arange(rows).double()[:, None] * self.theta).to(torch.complex64)

    def rotated(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """x (..., D) rotated by its id in ``positions`` (...): block i times e^{i p theta_i}."""
        return torch.view_as_real(torch.view_as_complex(x.unflatten(-1, (-1, 2))) * self.phasors[positions]).flatten(-2)

    def loss(self, tokens: torch.Tensor, targets: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """The summed per-seed mean cross-entropy of batches ``tokens`` (S, B, T) at ids ``positions`` (S, B, T)."""
        n_seeds, d = tokens.shape[0], self.embedding.shape[-1]
        seeds = torch.arange(n_seeds)[:, None, None]
        queries = (self.embedding @ self.query.mT + self.query_bias)[seeds[..., 0], tokens[..., -1]]  # (S, B, D)
        keys = (self.embedding @ self.key.mT + self.key_bias)[seeds, tokens]  # (S, B, T, D)
        queries, keys = self.rotated(queries, positions[..., -1]), self.rotated(keys, positions)
        weights = ((keys @ queries[..., None])[..., 0] / math.sqrt(d)).softmax(-1)  # (S, B, T)
        return self.read_out(tokens, weights, targets)


def train_minimal_randomized(pe: str, n_seeds: int, vocab_size: int, d_model: int, rope_base: float, rows: int,
                             steps: int, batch_size: int, lengths: tuple[int, int], offset: int, lr: float) -> None:
    """``steps`` Adam steps of ``n_seeds`` minimal randomized heads (``pe`` randomized_rope or randomized_learned) on
    random batches of the retrieval task, each sequence's ids drawn as the encoding draws them
    (``sorted_random_subsets``)."""
    generator = torch.Generator().manual_seed(0)
    if pe == "randomized_rope":
        heads = MinimalRandomizedRopeHeads(n_seeds, vocab_size, d_model, rope_base, rows, generator)
    else:
        heads = MinimalRandomizedLearnedHeads(n_seeds, vocab_size, d_model, rows, generator)
    adam_steps(heads, generator, steps, batch_size, lengths, offset, lr, rows)
