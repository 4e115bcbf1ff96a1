"""The training steps of the single heads whose encoding adds at most a bias to the logits and rotates nothing,
written for their shape, on ``FastHeads``' flat parameters, output layer and Adam step: NoPE (no bias), ALiBi
(``alibi``, ``alibi_learned``), T5's bucketed bias and FIRE (``fire``, ``fire_fixed``).

The bias b_t of key position t depends on the positions alone, so the logit table of a length is a token-token table
(V, V) plus that bias row (T,), scaled by the logit scale's factor: one small product and one broadcast sum, and its
backward two sums. Each encoding gives its bias row of every seed, (S, T), and the gradient of its parameters from
that of the row.
"""

import copy

import torch

from lengthgen.models.head import AttentionHead
from lengthgen.training.fast_heads import FastHeads


class FastBiasHeads(FastHeads):
    """The logit of query token a against key token b at key position t is factor x (q_a . k_b / sqrt(D) + b_t); NoPE
    (this class) adds no bias. ``learns_bias``: whether the bias has parameters (``bias_backward`` writes their
    gradient)."""

    learns_bias = False

    def table(self, length: int) -> torch.Tensor:
        self.queries, self.keys = self.token_projections(length)
        n_seeds, vocab_size, _ = self.queries.shape
        token_logits = torch.bmm(self.queries, self.keys.mT)[:, :, None]  # (S, V, 1, V)
        bias = self.bias(length)
        if bias is None:
            return token_logits.expand(-1, -1, length, -1).reshape(n_seeds, vocab_size * length, vocab_size)
        bias = bias * self.head.logit_factor(length)  # (S, T)
        return (token_logits + bias[:, None, :, None]).view(n_seeds, vocab_size * length, vocab_size)

    def bias(self, length: int) -> torch.Tensor | None:
        """(S, T): every seed's bias at key positions 0..T-1 for the query at T - 1 (``logit_bias``), or None."""
        return None

    def bias_backward(self, d_bias: torch.Tensor, length: int) -> None:
        """Write the gradient of the bias's parameters from that of the bias row (S, T)."""
        raise NotImplementedError

    def table_backward(self, d_table: torch.Tensor, length: int) -> None:
        n_seeds, vocab_size, _ = self.keys.shape
        d_table = d_table.view(n_seeds, vocab_size, length, vocab_size)
        d_token_logits = d_table.sum(2)  # (S, V, V)
        if self.learns_bias:
            self.bias_backward(d_table.sum((1, 3)).mul_(self.head.logit_factor(length)), length)
        d_queries, d_keys = torch.bmm(d_token_logits, self.keys), torch.bmm(d_token_logits.mT, self.queries)
        self.token_projections_backward(d_queries, d_keys, length)


def offsets(length: int, like: torch.Tensor) -> torch.Tensor:
    """(T,): each key position's offset from the query at T - 1, T - 1 - t, in ``like``'s dtype."""
    return torch.arange(length - 1, -1, -1, dtype=like.dtype, device=like.device)


class FastAlibiHeads(FastBiasHeads):
    """ALiBi: b_t = -m (T - 1 - t), the slope m fixed (``alibi``) or learned (``alibi_learned``)."""

    def __init__(self, models: list[AttentionHead]):
        super().__init__(models)
        self.learns_bias = "encoding.slope" in self.p
        self.fixed_slope = None if self.learns_bias else float(self.head.encoding.slope)

    def slopes(self) -> torch.Tensor:
        """(S, 1): every seed's slope."""
        if self.learns_bias:
            return self.p["encoding.slope"][:, None]
        return self.flat.data.new_full((len(self.models), 1), self.fixed_slope)

    def bias(self, length: int) -> torch.Tensor:
        self.offsets = offsets(length, self.flat.data)
        return -self.slopes() * self.offsets

    def bias_backward(self, d_bias: torch.Tensor, length: int) -> None:
        torch.sum(d_bias * self.offsets, 1, out=self.g["encoding.slope"]).neg_()


class FastT5Heads(FastBiasHeads):
    """T5: b_t is the learned bias of the bucket of the offset T - 1 - t; its gradient sums into the buckets."""

    learns_bias = True

    def __init__(self, models: list[AttentionHead]):
        super().__init__(models)
        # the encoding with every bucket's bias set to its number: its bias is the bucket of each offset, so that the
        # bucketing keeps one home (t5.causal_offset_bucket)
        self.bucket_numbers = copy.deepcopy(self.head.encoding).requires_grad_(False)
        self.bucket_numbers.bucket_bias.copy_(torch.arange(len(self.bucket_numbers.bucket_bias)))
        self._buckets = {}

    def buckets(self, length: int) -> torch.Tensor:
        """(T,): the bucket of each key position's offset from the query at T - 1; kept per length."""
        if length not in self._buckets:
            positions = torch.arange(length, device=self.flat.data.device)
            self._buckets[length] = self.bucket_numbers.logit_bias(positions[-1:], positions)[0].long()
        return self._buckets[length]

    def bias(self, length: int) -> torch.Tensor:
        return self.p["encoding.bucket_bias"].index_select(1, self.buckets(length))

    def bias_backward(self, d_bias: torch.Tensor, length: int) -> None:
        self.g["encoding.bucket_bias"].zero_().index_add_(1, self.buckets(length), d_bias)


class FastFireHeads(FastBiasHeads):
    """FIRE: b_t = f(psi(T - 1 - t) / (psi(max(T - 1, L)) + 1e-6)), psi(x) = log(|c x| + 1), f a ReLU MLP 1 -> 32 -> 1
    (``FIRE.logit_bias``): (T, 32) numbers per seed, whose forward and backward are written out here, batched over
    seeds."""

    learns_bias = True

    def __init__(self, models: list[AttentionHead]):
        super().__init__(models)
        encoding = self.head.encoding
        self.initial_threshold = float(encoding.initial_threshold)
        # fire_fixed keeps L as a buffer: no gradient, its value the encoding's (the same in every seed's head)
        self.learned_threshold = "encoding.threshold_scale" in self.p
        self.fixed_threshold_scale = None if self.learned_threshold else float(encoding.threshold_scale)

    def threshold_scale(self) -> torch.Tensor:
        """(S, 1): each seed's threshold multiplier s (L = |s| x the initial threshold)."""
        if self.learned_threshold:
            return self.p["encoding.threshold_scale"][:, None]
        return self.p["encoding.c"].new_full((self.p["encoding.c"].shape[0], 1), self.fixed_threshold_scale)

    def bias(self, length: int) -> torch.Tensor:
        """(S, T): every seed's FIRE bias at key positions 0..T-1 for the query at T - 1, keeping what its backward
        reads."""
        p = self.p
        c = p["encoding.c"][:, None]  # (S, 1)
        self.offsets = offsets(length, c)  # (T,)
        self.threshold = (self.threshold_scale() * self.initial_threshold).abs()  # (S, 1)
        self.normalizer = self.threshold.clamp(min=float(length - 1))  # max(T - 1, L)
        self.scaled_offsets, self.scaled_normalizer = c * self.offsets, c * self.normalizer
        self.psi_offsets = self.scaled_offsets.abs().add_(1).log_()  # (S, T)
        self.denominator = self.scaled_normalizer.abs().add_(1).log_().add_(1e-6)  # (S, 1)
        self.fraction = self.psi_offsets / self.denominator  # (S, T)
        self.pre = torch.baddbmm(p["encoding.mlp.0.bias"][:, None], self.fraction[:, :, None],
                                 p["encoding.mlp.0.weight"].mT)  # (S, T, 32)
        self.hidden = self.pre.relu()
        return torch.baddbmm(p["encoding.mlp.2.bias"][:, None], self.hidden, p["encoding.mlp.2.weight"].mT)[..., 0]

    def bias_backward(self, d_bias: torch.Tensor, length: int) -> None:
        """Write the gradients of FIRE's MLP, c and (where learned) the threshold multiplier from that of the bias
        (S, T)."""
        p, g = self.p, self.g
        g["encoding.mlp.2.bias"].copy_(d_bias.sum(1, keepdim=True))
        g["encoding.mlp.2.weight"].copy_(torch.bmm(d_bias[:, None], self.hidden))
        d_pre = (d_bias[:, :, None] * p["encoding.mlp.2.weight"]).mul_(self.pre > 0)  # (S, T, 32): through the ReLU
        g["encoding.mlp.0.bias"].copy_(d_pre.sum(1))
        g["encoding.mlp.0.weight"].copy_(torch.bmm(d_pre.mT, self.fraction[:, :, None]))
        d_fraction = torch.bmm(d_pre, p["encoding.mlp.0.weight"])[..., 0]  # (S, T)
        d_psi_offsets = d_fraction / self.denominator
        d_denominator = -(d_fraction * self.fraction).sum(1, keepdim=True) / self.denominator  # (S, 1)
        # psi(x) = log(|c x| + 1): its derivative in c x is sgn(c x) / (|c x| + 1)
        d_scaled_offsets = d_psi_offsets * self.scaled_offsets.sign() / (self.scaled_offsets.abs() + 1)
        d_scaled_normalizer = d_denominator * self.scaled_normalizer.sign() / (self.scaled_normalizer.abs() + 1)
        c = p["encoding.c"][:, None]
        d_c = (d_scaled_offsets * self.offsets).sum(1, keepdim=True) + d_scaled_normalizer * self.normalizer
        g["encoding.c"].copy_(d_c[:, 0])
        if self.learned_threshold:
            # max(T - 1, L): the gradient goes to L where L is larger, half of it where they tie (torch.maximum's)
            query_position = float(length - 1)
            share = (self.threshold > query_position).to(c.dtype) + (self.threshold == query_position).to(c.dtype) / 2
            d_threshold = d_scaled_normalizer * c * share
            d_scale = d_threshold * (self.threshold_scale() * self.initial_threshold).sign() * self.initial_threshold
            g["encoding.threshold_scale"].copy_(d_scale[:, 0])
