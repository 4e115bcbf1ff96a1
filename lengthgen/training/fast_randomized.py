"""The training step of the randomized single heads (position ids drawn per sequence) written for their shape: the
forward and backward of ``AttentionHead._attend_per_sequence`` by hand, on ``FastHeads``' flat parameters, output
layer and Adam step.

With ids drawn per sequence no logit table of a length exists; what stays small is a table per token:

- randomized rope: the logit of query token a at id p against key token b at id p' is Re sum_f q_af conj(k_bf)
  e^{i (p - p') theta_f}, a function of the token pair and the id gap. The pair products q_a conj(k_b) are one
  (V, V, D) table per seed; each key reads its pair's row and the row of its gap's phasors (data: no gradient), and
  its logit is their dot product. The backward scatters each key's gradient times its phasors into the pair table's
  rows, and the pair table's gradient is two small complex products away from those of the queries and keys;
- randomized learned: with x = E_b + P_p, the logit is q . k_b + (W_k^T q) . P_p', q the sequence's query (its
  token's and its last id's): the token part one product with the keys' table, the position part a dot product
  of r with each key's row of the position table, whose gradient is scattered back into the table rows.

Neither has a table of a length, so each key costs a D-vector read and product (S x B x T x D, against V x T x D for
rope), each a dot product read in place (``sampled_dots``); and randomized learned's Adam updates its whole
table of noise_max_length rows (4096 x D per seed) every step. What they cost: docs/performance.md.
"""

import warnings

import numpy as np
import torch
import torch.nn.functional as F

from lengthgen.models.head import AttentionHead
from lengthgen.training.fast_heads import Attention, FastHeads, int32_keys_first, linear_backward, scatter_sum


# Keys below this sort by numpy's radix sort of uint16, about three times faster than torch's stable sort
RADIX_SORTED_KEYS = 2 ** 16


def grouping_order(keys: torch.Tensor, size: int) -> torch.Tensor:
    """The stable order of integer ``keys`` (N,) in [0, size): each key's entries in their order, key by key."""
    if size > RADIX_SORTED_KEYS or keys.device.type != "cpu":
        return torch.argsort(keys, stable=True)
    return torch.from_numpy(keys.numpy().astype(np.uint16).argsort(kind="stable"))


def sampled_dots(left: torch.Tensor, row_ends: torch.Tensor, right_rows: torch.Tensor,
                 right: torch.Tensor) -> torch.Tensor:
    """(N,): entry n the dot product of its run's row of ``left`` (M, D) with row ``right_rows[n]`` of ``right``
    (., D), the entries in runs, one per row of ``left``: run m the entries ``row_ends[m]`` to ``row_ends[m + 1]``
    (M + 1,). One pass of ``torch.sparse.sampled_addmm`` over a pattern of those entries, which reads each row where
    it is used, nothing gathered first (a gather, a product and a sum of every entry's rows take about ten times as
    long), each entry's dot product over its own two rows alone."""
    with warnings.catch_warnings():  # a CSR pattern is "beta" in torch; sampled_addmm on one is what this needs
        warnings.simplefilter("ignore", UserWarning)
        pattern = torch.sparse_csr_tensor(row_ends, right_rows, left.new_zeros(len(right_rows)),
                                          size=(left.shape[0], right.shape[0]), check_invariants=False)
    return torch.sparse.sampled_addmm(pattern, left, right.mT, beta=0.0).values()


def weighted_row_sums(table: torch.Tensor, rows: torch.Tensor, weights: torch.Tensor, run_ends: torch.Tensor
                      ) -> torch.Tensor:
    """(M, D): for each run of entries of ``rows`` (N,), run m the entries ``run_ends[m]`` to ``run_ends[m + 1]``
    (M + 1,), the sum of those rows of ``table`` (., D) times their ``weights`` (N,), in order, without gathering
    the rows first (an embedding_bag)."""
    return F.embedding_bag(rows, table, run_ends, mode="sum", per_sample_weights=weights, include_last_offset=True)


class FastRandomizedRopeHeads(FastHeads):
    """Randomized rope: the logit of each key is its token pair's row of q_a conj(k_b) (real view, the query scaled)
    dotted with the real view of e^{-i d theta}, d the id gap to the query (the real part of their complex product)."""

    def __init__(self, models: list[AttentionHead]):
        super().__init__(models)
        encoding = self.head.encoding
        gaps = torch.arange(encoding.noise_max_length, device=self.flat.data.device)
        # (noise_max_length, D): the real view of e^{-i d theta} at every gap d, from the encoding's phasors
        self.gap_phasors = torch.view_as_real(encoding.phasors(gaps, torch.complex64).conj().resolve_conj()).flatten(1)

    def attend(self, tokens: torch.Tensor, positions: torch.Tensor) -> Attention:
        n_seeds, length, batch = tokens.shape
        self.queries, self.keys = self.token_projections(length)  # (S, V, D)
        vocab_size, d = self.keys.shape[1:]
        self.complex_queries = torch.view_as_complex(self.queries.view(n_seeds, vocab_size, 1, d // 2, 2))
        self.complex_keys = torch.view_as_complex(self.keys.view(n_seeds, 1, vocab_size, d // 2, 2))
        # (S * V * V, D): [seed, query token, key token] the real view of q_a conj(k_b)
        pairs = torch.view_as_real(self.complex_queries * self.complex_keys.conj()).view(-1, d)
        positions = int32_keys_first(positions)  # (S, T, B)
        gaps = (positions[:, -1:] - positions).view(-1)
        seed_base = torch.arange(n_seeds, dtype=torch.int32, device=tokens.device)[:, None, None] * vocab_size ** 2
        rows = (tokens[:, -1:] * vocab_size + tokens).add_(seed_base).view(-1)  # each key's row of the pair table
        # The keys grouped by pair table row, in their order within each row: each row's logits are its dot products
        # with its keys' phasors, and the backward sums each row's keys.
        self.grouped_keys = grouping_order(rows, pairs.shape[0])
        self.grouped_gaps = gaps.index_select(0, self.grouped_keys)
        group_ends = torch.bincount(rows, minlength=pairs.shape[0]).cumsum(0)
        self.row_ends = torch.cat([group_ends.new_zeros(1), group_ends]).to(torch.int32)
        grouped_scores = sampled_dots(pairs, self.row_ends, self.grouped_gaps, self.gap_phasors)
        scores = torch.empty_like(grouped_scores).index_copy_(0, self.grouped_keys, grouped_scores)
        return self.attention(tokens, scores.view(n_seeds, length, batch), rows, pairs.shape[0])

    def scores_backward(self, attention: Attention, d_scores: torch.Tensor, length: int) -> None:
        n_seeds, vocab_size, d = self.keys.shape
        # Each pair row's gradient: its keys' phasors weighted by their logits' gradients, summed in key order (one
        # embedding_bag over the keys grouped by row; index_add of (N, D) rows takes thirty times as long).
        d_pairs = F.embedding_bag(self.grouped_gaps, self.gap_phasors, self.row_ends, mode="sum",
                                  include_last_offset=True,
                                  per_sample_weights=d_scores.view(-1).index_select(0, self.grouped_keys))
        d_pairs = torch.view_as_complex(d_pairs.view(n_seeds, vocab_size, vocab_size, d // 2, 2))
        # q conj(k) by the real and imaginary parts of each factor: its gradient times k for q, conjugated times q for k
        d_queries = torch.view_as_real((d_pairs * self.complex_keys).sum(2)).view(n_seeds, vocab_size, d)
        d_keys = torch.view_as_real((d_pairs.conj() * self.complex_queries).sum(1)).view(n_seeds, vocab_size, d)
        self.token_projections_backward(d_queries, d_keys, length)


class FastRandomizedLearnedHeads(FastHeads):
    """Randomized learned positions: the query of a sequence is W_q (E_a + P_p) + b_q (p its last id), the logit of a
    key holding token b at id p' is q . k_b + r . P_p' with r = W_k^T q, and the output adds the attended rows of
    the position table through the values and the unembedding, (sum_t w_t P_t) W_v^T W_u^T.

    No key's row of the position table is gathered whole (13 MB a step at the default run's shapes, read four times):
    each is read where it is used, keys sequence by sequence (S * B * T), its logit r . P_p' and its weight's gradient
    dot products in one pass over the keys each (``sampled_dots``), the attended rows and r's gradient sums of rows
    weighted per key (``weighted_row_sums``). The table's gradient, from the keys (logit and value paths) and the
    queries, is one embedding_bag of per-sequence vectors over the entries grouped by table row."""

    def attend(self, tokens: torch.Tensor, positions: torch.Tensor) -> Attention:
        p = self.p
        n_seeds, length, batch = tokens.shape
        embeddings, table = p["token_embedding.weight"], p["encoding.table"]  # (S, V, D), (S, M, D)
        vocab_size, d = embeddings.shape[1:]
        rows = table.shape[1]
        # every key's row of the seeds' flat tables, sequence by sequence: (S * B * T), int32 (sorted twice as fast)
        seed_base = torch.arange(n_seeds, dtype=torch.int32, device=positions.device)[:, None, None] * rows
        self.table_rows = (positions.to(torch.int32) + seed_base).view(-1)
        self.flat_table = table.reshape(-1, d)
        self.sequence_ends = self.key_runs(n_seeds * batch, length, positions.device)
        self.query_tokens = tokens[:, -1]  # (S, B)
        query_embeddings = embeddings.gather(1, self.query_tokens.long()[..., None].expand(-1, -1, d))  # (S, B, D)
        query_rows = self.flat_table.index_select(0, self.table_rows.view(-1, length)[:, -1]).view(n_seeds, batch, d)
        self.query_in = query_rows + query_embeddings  # token and id at the query
        self.queries = torch.baddbmm(p["query.bias"][:, None], self.query_in, p["query.weight"].mT)
        self.queries.mul_(self.scale(length))
        self.keys = self.token_keys()  # (S, V, D)
        self.key_queries = torch.bmm(self.queries, p["key.weight"])  # (S, B, D): W_k^T q
        # token logits: each sequence's query against every token's key, read at the key's token
        self.token_cells = (tokens + self.token_bases(n_seeds, batch, vocab_size, tokens.device)).view(-1)
        token_scores = torch.bmm(self.queries, self.keys.mT).view(-1).index_select(0, self.token_cells)
        position_scores = sampled_dots(self.key_queries.view(-1, d), self.sequence_ends, self.table_rows,
                                       self.flat_table)
        position_scores = position_scores.view(n_seeds, batch, length).transpose(1, 2)
        scores = token_scores.view(n_seeds, length, batch) + position_scores
        attention = self.attention(tokens, scores, self.token_cells, n_seeds * batch * vocab_size)
        self.key_weights = attention.weights.transpose(1, 2).reshape(-1)  # sequence by sequence
        self.attended_rows = weighted_row_sums(self.flat_table, self.table_rows, self.key_weights, self.sequence_ends)
        self.attended_rows = self.attended_rows.view(n_seeds, batch, d)  # (S, B, D)
        return attention

    def key_runs(self, n_sequences: int, length: int, device) -> torch.Tensor:
        """(S * B + 1,) int32: where each sequence's keys start, keys sequence by sequence, and where the last ends;
        kept per shape."""
        key = ("key_runs", n_sequences, length)
        if key not in self._index_bases:
            self._index_bases[key] = torch.arange(0, n_sequences * length + 1, length, dtype=torch.int32,
                                                  device=device)
        return self._index_bases[key]

    def token_bases(self, n_seeds: int, batch: int, vocab_size: int, device) -> torch.Tensor:
        """(S, 1, B) int32: where each sequence's token logits (S, B, V) start in their flat buffer."""
        sequences = torch.arange(n_seeds * batch, dtype=torch.int32, device=device).view(n_seeds, 1, batch)
        return sequences * vocab_size

    def read_out(self, attention: Attention, token_outputs: torch.Tensor, position_outputs: None) -> torch.Tensor:
        return super().read_out(attention, token_outputs, None).baddbmm_(self.readout, self.attended_rows.mT)

    def attention_backward(self, attention: Attention, d_output: torch.Tensor, token_outputs: torch.Tensor,
                           position_outputs: None) -> tuple[torch.Tensor, torch.Tensor]:
        """(gradient of the attention logits (S, T, B), of the attended rows (S, B, D))."""
        n_seeds, length, batch = attention.weights.shape
        d_weights = self.token_weights_gradient(attention, d_output, token_outputs)
        self.d_attended_readout = torch.bmm(d_output, self.attended_rows)  # (S, V_out, D)
        d_attended_rows = torch.bmm(d_output.mT, self.readout)  # (S, B, D)
        d_row_weights = sampled_dots(d_attended_rows.view(n_seeds * batch, -1), self.sequence_ends, self.table_rows,
                                     self.flat_table)  # (S * B * T): each key's row against its sequence's gradient
        d_weights += d_row_weights.view(n_seeds, batch, length).transpose(1, 2)
        return self.softmax_backward(attention.weights, d_weights), d_attended_rows

    def scores_backward(self, attention: Attention, d_scores: torch.Tensor, length: int) -> None:
        p, g = self.p, self.g
        embeddings = p["token_embedding.weight"]
        n_seeds, vocab_size, d = embeddings.shape
        batch = d_scores.shape[2]
        d_token_scores = scatter_sum(self.token_cells, d_scores, attention.table_size)
        d_token_scores = d_token_scores.view(n_seeds, batch, vocab_size)
        self.d_key_scores = d_scores.transpose(1, 2).reshape(-1)  # sequence by sequence
        d_key_queries = weighted_row_sums(self.flat_table, self.table_rows, self.d_key_scores, self.sequence_ends)
        d_key_queries = d_key_queries.view(n_seeds, batch, d)  # (S, B, D)
        d_queries = torch.baddbmm(torch.bmm(d_token_scores, self.keys), d_key_queries, p["key.weight"].mT)
        d_queries.mul_(self.scale(length))  # of the unscaled queries
        d_keys = torch.bmm(d_token_scores.mT, self.queries)  # (S, V, D)
        linear_backward(g, "query", d_queries, self.query_in)
        torch.bmm(d_keys.mT, embeddings, out=g["key.weight"]).baddbmm_(self.queries.mT, d_key_queries)
        torch.sum(d_keys, 1, out=g["key.bias"])
        self.d_query_in = torch.bmm(d_queries, p["query.weight"])  # (S, B, D)
        query_tokens = torch.zeros(n_seeds, vocab_size, batch, dtype=d_scores.dtype, device=d_scores.device)
        query_tokens.scatter_(1, self.query_tokens.long()[:, None], 1.0)  # (S, V, B): each sequence's query token
        torch.bmm(query_tokens, self.d_query_in, out=g["token_embedding.weight"]).baddbmm_(d_keys, p["key.weight"])

    def outputs_backward(self, d_token_outputs: torch.Tensor, d_attended_rows: torch.Tensor, d_positions: None) -> None:
        p, g = self.p, self.g
        super().outputs_backward(d_token_outputs, None, None)
        g["unembedding.weight"].baddbmm_(self.d_attended_readout, p["value.weight"].mT)
        g["value.weight"].baddbmm_(p["unembedding.weight"].mT, self.d_attended_readout)
        self.write_table_gradient(d_attended_rows)

    def write_table_gradient(self, d_attended_rows: torch.Tensor) -> None:
        """The position table's gradient: every key's row gets its logit's gradient times r and its weight times the
        attended rows' gradient, every query's row its input's gradient; one embedding_bag of those per-sequence
        vectors (S * B each), the entries grouped by table row in their order."""
        n_seeds, batch, d = d_attended_rows.shape
        table = self.p["encoding.table"]
        length = self.table_rows.numel() // (n_seeds * batch)
        sequences = torch.arange(n_seeds * batch, device=table.device)
        vectors = torch.cat([self.key_queries.reshape(-1, d), d_attended_rows.reshape(-1, d),
                             self.d_query_in.reshape(-1, d)])  # (3 * S * B, D)
        keys = sequences.repeat_interleave(length)
        entries = torch.cat([keys, keys + n_seeds * batch, sequences + 2 * n_seeds * batch])
        entry_rows = torch.cat([self.table_rows, self.table_rows, self.table_rows.view(-1, length)[:, -1]])
        weights = torch.cat([self.d_key_scores.view(-1), self.key_weights.view(-1),
                             torch.ones_like(sequences, dtype=table.dtype)])
        grouped = grouping_order(entry_rows, table.shape[0] * table.shape[1])
        ends = torch.bincount(entry_rows, minlength=table.shape[0] * table.shape[1]).cumsum(0)
        gradient = F.embedding_bag(entries.index_select(0, grouped), vectors, torch.cat([ends.new_zeros(1), ends]),
                                   mode="sum", per_sample_weights=weights.index_select(0, grouped),
                                   include_last_offset=True)
        self.g["encoding.table"].copy_(gradient.view(table.shape))
