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
  token's and its last id's): the token part one product with the keys' table, the position part one batched
  product with the key rows of the position table, whose gradient is scattered back into the table rows.
"""

import torch
import torch.nn.functional as F

from lengthgen.models.head import AttentionHead
from lengthgen.training.fast_heads import Attention, FastHeads, linear_backward


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
        p = self.p
        n_seeds, length, batch = tokens.shape
        embeddings = p["token_embedding.weight"]  # (S, V, D)
        vocab_size, d = embeddings.shape[1:]
        self.queries = torch.baddbmm(p["query.bias"][:, None], embeddings, p["query.weight"].mT).mul_(self.scale(length))
        self.keys = torch.baddbmm(p["key.bias"][:, None], embeddings, p["key.weight"].mT)  # (S, V, D)
        self.complex_queries = torch.view_as_complex(self.queries.view(n_seeds, vocab_size, 1, d // 2, 2))
        self.complex_keys = torch.view_as_complex(self.keys.view(n_seeds, 1, vocab_size, d // 2, 2))
        # (S * V * V, D): [seed, query token, key token] the real view of q_a conj(k_b)
        pairs = torch.view_as_real(self.complex_queries * self.complex_keys.conj()).view(-1, d)
        positions = positions.to(torch.int32).transpose(1, 2).contiguous()  # (S, T, B)
        gaps = (positions[:, -1:] - positions).view(-1)
        seed_base = torch.arange(n_seeds, dtype=torch.int32, device=tokens.device)[:, None, None] * vocab_size ** 2
        rows = (tokens[:, -1:] * vocab_size + tokens).add_(seed_base).view(-1)  # each key's row of the pair table
        scores = pairs.index_select(0, rows).mul_(self.gap_phasors.index_select(0, gaps)).sum(1)
        # The keys grouped by pair table row, in their order within each row: the backward sums each row's keys.
        self.grouped_keys = torch.argsort(rows, stable=True)
        self.grouped_gaps = gaps.index_select(0, self.grouped_keys)
        self.group_ends = torch.bincount(rows, minlength=pairs.shape[0]).cumsum(0)
        return self.attention(tokens, scores.view(n_seeds, length, batch), rows, pairs.shape[0])

    def scores_backward(self, attention: Attention, d_scores: torch.Tensor, length: int) -> tuple[torch.Tensor, None]:
        p = self.p
        embeddings = p["token_embedding.weight"]
        n_seeds, vocab_size, d = embeddings.shape
        # Each pair row's gradient: its keys' phasors weighted by their logits' gradients, summed in key order (one
        # embedding_bag over the keys grouped by row; index_add of (N, D) rows takes thirty times as long).
        d_pairs = F.embedding_bag(self.grouped_gaps, self.gap_phasors, torch.cat([self.group_ends.new_zeros(1), self.group_ends]),
                                  mode="sum", per_sample_weights=d_scores.view(-1).index_select(0, self.grouped_keys),
                                  include_last_offset=True)
        d_pairs = torch.view_as_complex(d_pairs.view(n_seeds, vocab_size, vocab_size, d // 2, 2))
        # q conj(k) by the real and imaginary parts of each factor: its gradient times k for q, conjugated times q for k
        d_queries = torch.view_as_real((d_pairs * self.complex_keys).sum(2)).view(n_seeds, vocab_size, d)
        d_keys = torch.view_as_real((d_pairs.conj() * self.complex_queries).sum(1)).view(n_seeds, vocab_size, d)
        d_queries.mul_(self.scale(length))
        linear_backward(self.g, "query", d_queries, embeddings)
        linear_backward(self.g, "key", d_keys, embeddings)
        return torch.baddbmm(d_queries @ p["query.weight"], d_keys, p["key.weight"]), None
