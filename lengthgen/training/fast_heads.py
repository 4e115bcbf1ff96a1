"""The training step of the single rope, learned and sinusoidal heads written for their shape: forward and backward
by hand, every seed's parameters in one flat buffer, one fused Adam call per step.

``AttentionHead`` stays the definition of the head (``tests/test_fast_heads.py`` holds each step equal to
it: loss to float32 rounding, gradients, one Adam step); this computes the same function in fewer,
larger ops (what it costs against the minimal stacked head, and what holds it there: docs/performance.md):

- the attention logits of a length are one table (S, V x T, V) [query token, key position, key token].
  Rope's logit depends on the positions through their offset only, so the query- and key-token vectors
  are rotated once per offset (no key is projected per position) and the table is one batched product;
  the learned head's logit is a token-token part plus a query-token-position part, two small products;
- a batch reads the table with one ``index_select`` (int32 indices), attends, reads out by attention mass
  per token, and its backward scatters into the table with one ``bincount``: no autograd graph, and no
  autograd dispatch (inference mode);
- every seed's parameters are one flat buffer, parameter by parameter, each seed's entries padded to whole
  vector registers, so that one fused Adam call updates them all, a seed's entries sit at the same place of
  the vectorized loops alone and beside other seeds (the same bits: ``tests/test_fast_heads.py``), and the
  batched products write the gradients in place.

It applies to heads whose encoding is exactly ``rope`` (any base), ``learned`` or ``sinusoidal``, softmax or linear
attention, any logit scale, position ids 0..T-1 (no position scale), in float32 on the CPU; the randomized
heads and those whose encoding only adds a bias (NoPE, ALiBi, T5, FIRE) have theirs (``fast_randomized.py``,
``fast_bias.py``), and ``fast_select.py`` chooses.
"""

import math
from typing import NamedTuple

import torch

from lengthgen.models.head import AttentionHead
from lengthgen.training.adam import FusedAdam

# Each seed's entries of a parameter padded to a multiple of this many floats: a multiple of every CPU vector width
# (16 floats for AVX-512), so that each seed's entries sit at the same place of Adam's vector loop alone and beside
# other seeds.
SEED_ALIGNMENT = 64


class FlatParameters:
    """The parameters of every seed's head in one flat buffer, with a gradient buffer of the same layout: parameter
    by parameter, each a block (S, P) of every seed's entries padded to ``SEED_ALIGNMENT`` floats.

    ``view[name]`` is parameter ``name`` of every seed, (S, *shape), a view of the buffer; ``grad[name]`` the same
    view of the gradient buffer. A parameter of a whole number of alignments is contiguous, so that a batched
    product writes its gradient in place (into a strided view it would run seed by seed)."""

    def __init__(self, models: list[AttentionHead]):
        shapes = [(name, parameter.shape) for name, parameter in models[0].named_parameters()]
        n_seeds = len(models)
        widths = [-(-shape.numel() // SEED_ALIGNMENT) * SEED_ALIGNMENT for _, shape in shapes]
        reference = next(models[0].parameters())
        self.data = torch.zeros(n_seeds * sum(widths), dtype=reference.dtype, device=reference.device)
        self.data.grad = torch.zeros_like(self.data)
        self.view, self.grad, start = {}, {}, 0
        for (name, shape), width in zip(shapes, widths):
            for buffer, views in ((self.data, self.view), (self.data.grad, self.grad)):
                views[name] = buffer[start:start + n_seeds * width].view(n_seeds, width)[:, :shape.numel()].view(
                    n_seeds, *shape)
            start += n_seeds * width
        with torch.no_grad():
            for name, _ in shapes:
                self.view[name].copy_(torch.stack([dict(model.named_parameters())[name] for model in models]))

    @torch.no_grad()
    def write_back(self, models: list[AttentionHead]) -> None:
        for index, model in enumerate(models):
            for name, parameter in model.named_parameters():
                parameter.copy_(self.view[name][index])


class Attention(NamedTuple):
    """A batch's attention (``FastHeads.attend``): what its backward reads again."""

    cells: torch.Tensor  # (S * T * B,) int32: each key's logit in the flat table
    slots: torch.Tensor  # (S * T * B,) int32: each key's token in the flat attention mass
    weights: torch.Tensor  # (S, T, B)
    mass: torch.Tensor  # (S, V, B): the summed weight of the keys holding each token
    table_size: int


class FastHeads:
    """Training steps of the heads ``models`` (one per seed, same config): ``step`` computes every seed's
    loss and gradient and takes one Adam step. Subclasses give the logit table of a length and its backward."""

    def __init__(self, models: list[AttentionHead]):
        self.models = models
        self.head = models[0]
        self.flat = FlatParameters(models)
        self.adam = FusedAdam([self.flat.data])
        self.p, self.g = self.flat.view, self.flat.grad
        self.softmax = self.head.config.attention == "softmax"
        self._index_bases = {}

    def write_back(self) -> None:
        self.flat.write_back(self.models)

    def scale(self, length: int) -> float:
        """What every attention logit is multiplied by at this length: 1/sqrt(D) times the logit scale's factor."""
        return self.head.logit_factor(length) / math.sqrt(self.head.config.d_model)

    @torch.inference_mode()  # no autograd dispatch: a tenth of the step's CPU goes to it otherwise
    def step(self, tokens: torch.Tensor, targets: torch.Tensor, lr: float,
             positions: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """One training step on every seed's batch ``tokens`` (S, B, T), ``targets`` (S, B), with each sequence's
        position ids ``positions`` (S, B, T) where the encoding draws them: (loss (S,), accuracy (S,)), as
        ``AttentionHead.forward`` and ``loop.seed_accuracies`` give each seed; then each seed's gradient of its loss
        and one Adam step at ``lr``.

        Tokens are laid out (S, T, B) and outputs (S, V_out, B): softmax and log-softmax reduce over a short
        middle dimension with the batch contiguous, several times faster than over a short last one."""
        length = tokens.shape[2]
        tokens = int32_keys_first(tokens)  # (S, T, B)
        targets = targets[:, None]  # (S, 1, B)
        attention = self.attend(tokens, positions)
        token_outputs, position_outputs = self.outputs(length)  # (S, V, V_out), (S, T, V_out) or None
        output = self.read_out(attention, token_outputs, position_outputs)  # (S, V_out, B)
        loss, accuracy, d_output = cross_entropy(output, targets)
        torch.sum(d_output, 2, out=self.g["unembedding.bias"])
        d_scores, d_position_outputs = self.attention_backward(attention, d_output, token_outputs, position_outputs)
        d_positions = self.scores_backward(attention, d_scores, length)
        self.outputs_backward(torch.bmm(attention.mass, d_output.mT), d_position_outputs, d_positions)
        self.adam.step(lr)
        return loss, accuracy

    def attend(self, tokens: torch.Tensor, positions: torch.Tensor | None) -> Attention:
        """Every sequence's attention over its keys (S, T, B), read from the length's logit table, and the mass on
        each token."""
        n_seeds, length, batch = tokens.shape
        table = self.table(length)  # (S, V * T, V): [query token, key position, key token]
        vocab_size = table.shape[-1]
        cell_base, _ = self.index_bases(n_seeds, length, vocab_size, batch, tokens.device)
        # (S * T * B): each key's logit in the flat table, [seed, query token, key position, key token]
        cells = torch.add(tokens, tokens[:, -1:], alpha=length * vocab_size).add_(cell_base).view(-1)
        scores = table.view(-1).index_select(0, cells).view(n_seeds, length, batch)
        return self.attention(tokens, scores, cells, table.numel())

    def attention(self, tokens: torch.Tensor, scores: torch.Tensor, cells: torch.Tensor, table_size: int) -> Attention:
        """The attention of keys ``tokens`` (S, T, B) with logits ``scores`` (S, T, B), read at ``cells`` of a flat
        table of ``table_size`` entries, and the mass on each token."""
        n_seeds, length, batch = tokens.shape
        vocab_size = self.head.config.vocab_size
        weights = scores.softmax(1) if self.softmax else scores
        _, slot_base = self.index_bases(n_seeds, length, vocab_size, batch, tokens.device)
        # each key's token in the flat attention mass (S, V, B)
        slots = torch.add(slot_base, tokens, alpha=batch).view(-1)
        mass = scatter_sum(slots, weights, n_seeds * vocab_size * batch)
        return Attention(cells, slots, weights, mass.view(n_seeds, vocab_size, batch), table_size)

    def read_out(self, attention: Attention, token_outputs: torch.Tensor,
                 position_outputs: torch.Tensor | None) -> torch.Tensor:
        """The output logits (S, V_out, B): the attention mass on each token times its output, plus the position
        outputs weighted by the attention, plus the unembedding bias."""
        output = torch.baddbmm(self.p["unembedding.bias"][:, :, None], token_outputs.mT, attention.mass)
        if position_outputs is not None:
            output.baddbmm_(position_outputs.mT, attention.weights)
        return output

    def attention_backward(self, attention: Attention, d_output: torch.Tensor, token_outputs: torch.Tensor,
                           position_outputs: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(gradient of the attention logits (S, T, B), of the position outputs (S, T, V_out) or None) from that of
        the output (S, V_out, B)."""
        weights = attention.weights
        d_weights = self.token_weights_gradient(attention, d_output, token_outputs)
        d_position_outputs = None
        if position_outputs is not None:
            d_weights.baddbmm_(position_outputs, d_output)
            d_position_outputs = torch.bmm(weights, d_output.mT)  # (S, T, V_out)
        return self.softmax_backward(weights, d_weights), d_position_outputs

    def token_weights_gradient(self, attention: Attention, d_output: torch.Tensor,
                               token_outputs: torch.Tensor) -> torch.Tensor:
        """(S, T, B): the gradient of the attention weights through the token outputs (each key's token's output
        against the output's gradient)."""
        d_token_mass = torch.bmm(token_outputs, d_output).view(-1)  # (S, V, B)
        return d_token_mass.index_select(0, attention.slots).view(attention.weights.shape)

    def softmax_backward(self, weights: torch.Tensor, d_weights: torch.Tensor) -> torch.Tensor:
        """The gradient of the attention logits from that of the weights (S, T, B)."""
        if self.softmax:
            return torch._softmax_backward_data(d_weights, weights, 1, weights.dtype)  # one pass, not four
        return d_weights

    def scores_backward(self, attention: Attention, d_scores: torch.Tensor, length: int) -> torch.Tensor | None:
        """Write the gradients of the query and key layers, and the embeddings' through them, from that of the
        attention logits (S, T, B); return that of the position terms (S, T, D) through the logits, or None."""
        d_table = scatter_sum(attention.cells, d_scores, attention.table_size)
        return self.table_backward(d_table.view(d_scores.shape[0], -1, self.head.config.vocab_size), length)

    def index_bases(self, n_seeds: int, length: int, vocab_size: int, batch: int, device) -> tuple[torch.Tensor, ...]:
        """int32 offsets of each (seed, key position) in the flat logit table, (S, T, 1), and of each (seed, sequence)
        in the flat attention mass, (S, 1, B), kept per shape."""
        key = (n_seeds, length, vocab_size, batch)
        if key not in self._index_bases:
            seeds = torch.arange(n_seeds, dtype=torch.int32, device=device)[:, None, None]
            positions = torch.arange(length, dtype=torch.int32, device=device)[:, None]
            sequences = torch.arange(batch, dtype=torch.int32, device=device)
            self._index_bases[key] = (seeds * (vocab_size * length * vocab_size) + positions * vocab_size,
                                      seeds * (vocab_size * batch) + sequences)
        return self._index_bases[key]

    def token_projections(self, length: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(queries, keys) of every token (S, V, D), the queries times ``scale(length)``: the heads whose positions
        do not enter their queries and keys."""
        p = self.p
        embeddings = p["token_embedding.weight"]
        queries = torch.baddbmm(p["query.bias"][:, None], embeddings, p["query.weight"].mT).mul_(self.scale(length))
        return queries, self.token_keys()

    def token_keys(self) -> torch.Tensor:
        """(S, V, D): the key of every token, without a position term."""
        p = self.p
        return torch.baddbmm(p["key.bias"][:, None], p["token_embedding.weight"], p["key.weight"].mT)

    def token_projections_backward(self, d_queries: torch.Tensor, d_keys: torch.Tensor, length: int) -> None:
        """Write the gradients of the query and key layers, and the embeddings' through them, from those of
        ``token_projections`` (S, V, D); ``d_queries`` is scaled in place."""
        embeddings = self.p["token_embedding.weight"]
        d_queries.mul_(self.scale(length))
        linear_backward(self.g, "query", d_queries, embeddings)
        linear_backward(self.g, "key", d_keys, embeddings)
        embedding_backward(self.g, d_queries, self.p["query.weight"], d_keys, self.p["key.weight"])

    def position_rows(self, length: int) -> torch.Tensor | None:
        """(S, T, D): the position terms added to the embeddings at positions 0..T-1, or None."""
        return None

    def outputs(self, length: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(token outputs (S, V, V_out), position outputs (S, T, V_out) or None): ``AttentionHead._token_outputs``
        and ``_position_outputs`` of every seed. The value and unembedding layers act as one map, the readout
        W_u W_v (S, V_out, D), and the value bias as one vector W_u b_v: one small product, where projecting every
        token's and position's value would take one per row."""
        p = self.p
        self.readout = torch.bmm(p["unembedding.weight"], p["value.weight"])
        value_bias = torch.bmm(p["value.bias"][:, None], p["unembedding.weight"].mT)  # (S, 1, V_out)
        token_outputs = torch.baddbmm(value_bias, p["token_embedding.weight"], self.readout.mT)
        self.positions = self.position_rows(length)
        if self.positions is None:
            return token_outputs, None
        return token_outputs, torch.bmm(self.positions, self.readout.mT)  # no value bias (it is in the tokens')

    def outputs_backward(self, d_token_outputs: torch.Tensor, d_position_outputs: torch.Tensor | None,
                         d_positions: torch.Tensor | None) -> None:
        """Write the gradients of the value and unembedding layers from those of the outputs, and of the
        embeddings and position terms, adding their readout paths to the embeddings' gradient (written by
        ``table_backward``) and to ``d_positions`` (returned by it)."""
        p, g = self.p, self.g
        d_readout = torch.bmm(d_token_outputs.mT, p["token_embedding.weight"])  # (S, V_out, D)
        g["token_embedding.weight"].baddbmm_(d_token_outputs, self.readout)
        if d_positions is not None:
            d_readout.baddbmm_(d_position_outputs.mT, self.positions)
            d_positions.baddbmm_(d_position_outputs, self.readout)
            self.write_position_gradient(d_positions)
        d_value_bias = d_token_outputs.sum(1, keepdim=True)  # (S, 1, V_out): of W_u b_v
        torch.bmm(d_readout, p["value.weight"].mT, out=g["unembedding.weight"])
        g["unembedding.weight"].baddbmm_(d_value_bias.mT, p["value.bias"][:, None])
        torch.bmm(p["unembedding.weight"].mT, d_readout, out=g["value.weight"])
        torch.bmm(d_value_bias, p["unembedding.weight"], out=g["value.bias"][:, None])

    def table(self, length: int) -> torch.Tensor:
        """(S, V * T, V): every seed's attention logit of [query token, key position, key token] at this length."""
        raise NotImplementedError

    def table_backward(self, d_table: torch.Tensor, length: int) -> torch.Tensor | None:
        """Write the gradients of the query and key layers, and the embeddings' through them, from that of the
        table (S, V * T, V); return that of the position terms (S, T, D) through the table, or None."""
        raise NotImplementedError

    def write_position_gradient(self, d_positions: torch.Tensor) -> None:
        """Write the gradient of the encoding's parameters from that of the position terms (S, T, D)."""
        raise NotImplementedError


def cross_entropy(output: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(each seed's mean cross-entropy (S,), its accuracy (S,), the loss's gradient with respect to the output logits
    (S, V_out, B): the softmax less the one-hot target, over B) for output logits (S, V_out, B) and targets (S, 1, B).

    One softmax: its targets' entries, logged, are the loss (the log of a probability rounded to float32 is as near
    the exact log-probability, 6e-8, as log_softmax's), and they give the accuracy (``argmax_accuracies``). Where a
    target's probability underflows to 0 (a confidently wrong head), its log would be -inf: the loss of such a
    batch is read from log_softmax instead, finite."""
    batch = output.shape[-1]
    probabilities = output.softmax(1)
    picked = probabilities.gather(1, targets)  # (S, 1, B)
    accuracy = argmax_accuracies(probabilities, picked, output, targets)
    # a probability in (0, 1] has a finite log; the smallest one compared on the host costs a tenth of isfinite().all()
    if float(picked.min()) > 0:
        log_picked = picked.log()
    else:  # a target's probability underflowed to 0 (or is NaN)
        log_picked = output.log_softmax(1).gather(1, targets)
    loss = log_picked.mean((1, 2)).neg_()
    # scatter_add_ of -1s: the same sums as scatter_'s reduce="add" in half the time
    d_output = probabilities.scatter_add_(1, targets, torch.full_like(picked, -1.0)).div_(batch)
    return loss, accuracy, d_output


def argmax_accuracies(probabilities: torch.Tensor, picked: torch.Tensor, output: torch.Tensor,
                      targets: torch.Tensor) -> torch.Tensor:
    """Per seed, the fraction of sequences whose output logits (S, V, B) have their first largest entry at the target
    (S, 1, B), as ``loop.seed_accuracies`` counts them, from their softmax ``probabilities`` and its target entries
    ``picked``: the target's probability equal to its column's largest, unless some column's largest is tied (then
    ``argmax`` of the logits, which takes the first; over the middle dimension it costs several times the
    comparisons). The softmax keeps the logits' order, so a column without a tie in probability has one largest
    logit, where its largest probability is."""
    largest = probabilities.amax(1, keepdim=True)
    # the count of largest entries, compared into floats (exact below 2^24): several times faster than into bools
    if int(torch.eq(probabilities, largest, out=torch.empty_like(probabilities)).sum()) != largest.numel():
        return (output.argmax(1, keepdim=True) == targets).sum((1, 2)) / targets.shape[-1]
    return (picked == largest).sum((1, 2)) / targets.shape[-1]


def int32_keys_first(indices: torch.Tensor) -> torch.Tensor:
    """(S, B, T) integers as (S, T, B) int32 in one copy: int32 index arithmetic is several times faster than int64's,
    and the (S, T, B) layout puts each position's batch in contiguous memory."""
    laid_out = torch.empty(indices.shape[0], indices.shape[2], indices.shape[1], dtype=torch.int32,
                           device=indices.device)
    return laid_out.copy_(indices.transpose(1, 2))


def scatter_sum(index: torch.Tensor, values: torch.Tensor, size: int) -> torch.Tensor:
    """(size,): at each entry the sum of ``values`` whose ``index`` (flat, int32) points there, added in the values'
    order (so a seed's sums do not depend on the seeds beside it). ``bincount`` with weights: about 1.5x faster on
    the CPU than ``index_add_`` into zeros, the same float32 sums."""
    return torch.bincount(index, values.reshape(-1), minlength=size)


def linear_backward(g: dict, name: str, d_out: torch.Tensor, inputs: torch.Tensor) -> None:
    """Write the gradients of linear layer ``name`` (weight (S, D_out, D_in), bias (S, D_out)) from those of its
    outputs (S, N, D_out) on ``inputs`` (S, N, D_in)."""
    torch.bmm(d_out.mT, inputs, out=g[f"{name}.weight"])
    torch.sum(d_out, 1, out=g[f"{name}.bias"])


def embedding_backward(g: dict, d_queries: torch.Tensor, query_weight: torch.Tensor, d_keys: torch.Tensor,
                       key_weight: torch.Tensor) -> None:
    """Write the embeddings' gradient through the query and key layers, from those of every token's query and key
    (S, V, D): the value path adds to it after (``FastHeads.outputs_backward``)."""
    torch.bmm(d_queries, query_weight, out=g["token_embedding.weight"]).baddbmm_(d_keys, key_weight)


class FastRopeHeads(FastHeads):
    """Rope: the logit of query token a against key token b at key position t is (R_d q_a) . k_b = q_a . (R_d^T k_b),
    with q_a, k_b the unrotated query and key of the tokens and R_d the rotation by offset d = T - 1 - t. Each
    query-token vector is rotated once per offset (``rotated_queries``) and each key-token vector back
    (``rotated_keys``): the table is one product of the queries with the rotated keys, and its backward two
    products, of the table's gradient with the rotated keys and with the rotated queries."""

    def __init__(self, models: list[AttentionHead]):
        super().__init__(models)
        longest = max(model.config.trained_positions for model in models)
        # e^{i d theta} for offsets d = longest-1, ..., 0, as Rotary.rotate forms them: a length T reads the last T
        # rows (key positions 0..T-1); with its conjugate, R_d^T, for the keys.
        offsets = torch.arange(longest - 1, -1, -1, device=self.flat.data.device)
        self.phasors = self.head.encoding.phasors(offsets, torch.complex64)  # (T_max, D/2)
        self.conjugates = self.phasors.conj().resolve_conj()

    def table(self, length: int) -> torch.Tensor:
        self.queries, self.keys = self.token_projections(length)  # (S, V, D)
        n_seeds, vocab_size, d = self.queries.shape
        query_blocks = torch.view_as_complex(self.queries.view(n_seeds, vocab_size, 1, d // 2, 2))
        key_blocks = torch.view_as_complex(self.keys.view(n_seeds, 1, vocab_size, d // 2, 2))
        # [query token, key position]: R_d q_a; [key position, key token]: R_d^T k_b.
        self.rotated_queries = torch.view_as_real(query_blocks * self.phasors[-length:]).view(n_seeds, -1, d)
        self.rotated_keys = torch.view_as_real(key_blocks * self.conjugates[-length:, None]).view(n_seeds, -1, d)
        # (R_d q_a) . k_b: the product of contiguous operands (the rotated keys transposed take half as long again)
        return torch.bmm(self.rotated_queries, self.keys.mT.contiguous())

    def table_backward(self, d_table: torch.Tensor, length: int) -> None:
        n_seeds, vocab_size, _ = self.keys.shape
        d_queries = torch.bmm(d_table.view(n_seeds, vocab_size, length * vocab_size), self.rotated_keys)
        self.token_projections_backward(d_queries, torch.bmm(d_table.mT, self.rotated_queries), length)


class FastLearnedHeads(FastHeads):
    """Learned absolute positions: with x = E_b + P_t, the logit of query token a (at position T - 1) against key
    token b at position t is r_a . E_b + q_a . b_k + r_a . P_t, with r_a = W_k^T q_a: a token-token table (V, V) plus
    a query-token-position table (V, T), each one small product; the outputs split the same way
    (``AttentionHead.token_tables``)."""

    def position_rows(self, length: int) -> torch.Tensor:
        return self.p["encoding.table"][:, :length]

    def table(self, length: int) -> torch.Tensor:
        p = self.p
        embeddings = p["token_embedding.weight"]  # (S, V, D)
        n_seeds, vocab_size, _ = embeddings.shape
        positions = self.position_rows(length)  # (S, T, D)
        self.last = embeddings + positions[:, -1:]  # (S, V, D): every token at the query position
        self.queries = torch.baddbmm(p["query.bias"][:, None], self.last, p["query.weight"].mT).mul_(self.scale(length))
        # q . (W_k x + b_k) = (W_k^T q) . x + q . b_k: each query through the key layer once, against the raw token
        # and position rows (no key is projected)
        self.key_queries = torch.bmm(self.queries, p["key.weight"])  # (S, V, D)
        key_bias_logits = torch.bmm(self.queries, p["key.bias"][..., None])  # (S, V, 1)
        token_logits = torch.baddbmm(key_bias_logits, self.key_queries, embeddings.mT)  # (S, V, V)
        position_logits = torch.bmm(self.key_queries, positions.mT)  # (S, V, T)
        return (position_logits[..., None] + token_logits[:, :, None]).view(n_seeds, vocab_size * length, vocab_size)

    def table_backward(self, d_table: torch.Tensor, length: int) -> torch.Tensor:
        p, g = self.p, self.g
        embeddings = p["token_embedding.weight"]
        n_seeds, vocab_size, _ = embeddings.shape
        positions = self.position_rows(length)
        d_table = d_table.view(n_seeds, vocab_size, length, vocab_size)
        d_token_logits, d_position_logits = d_table.sum(2), d_table.sum(3)  # (S, V, V), (S, V, T)
        d_key_queries = torch.baddbmm(torch.bmm(d_token_logits, embeddings), d_position_logits, positions)
        d_key_bias_logits = d_token_logits.sum(2, keepdim=True)  # (S, V, 1)
        d_queries = torch.baddbmm(torch.bmm(d_key_bias_logits, p["key.bias"][:, None]), d_key_queries,
                                  p["key.weight"].mT)
        torch.bmm(self.queries.mT, d_key_queries, out=g["key.weight"])
        torch.bmm(d_key_bias_logits.mT, self.queries, out=g["key.bias"][:, None])
        d_queries.mul_(self.scale(length))  # of the unscaled queries
        linear_backward(g, "query", d_queries, self.last)
        d_last = torch.bmm(d_queries, p["query.weight"])  # (S, V, D)
        torch.baddbmm(d_last, d_token_logits.mT, self.key_queries, out=g["token_embedding.weight"])
        d_positions = torch.bmm(d_position_logits.mT, self.key_queries)  # (S, T, D)
        d_positions[:, -1] += d_last.sum(1)
        return d_positions

    def write_position_gradient(self, d_positions: torch.Tensor) -> None:
        gradient = self.g["encoding.table"]
        gradient[:, d_positions.shape[1]:].zero_()
        gradient[:, :d_positions.shape[1]].copy_(d_positions)


class FastSinusoidalHeads(FastLearnedHeads):
    """Sinusoidal positions: the learned head's step with fixed rows, the encoding's sin/cos terms (no gradient)."""

    def __init__(self, models: list[AttentionHead]):
        super().__init__(models)
        self._rows = {}

    def position_rows(self, length: int) -> torch.Tensor:
        if length not in self._rows:
            positions = torch.arange(length, device=self.flat.data.device)
            rows = self.head.encoding.position_embedding(positions).to(self.flat.data.dtype)  # as the head casts them
            self._rows[length] = rows.expand(len(self.models), -1, -1).contiguous()
        return self._rows[length]

    def write_position_gradient(self, d_positions: torch.Tensor) -> None:
        pass  # the rows are not parameters
