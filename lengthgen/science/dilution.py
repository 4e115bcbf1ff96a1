"""The attention-dilution law and its rival, ranking: a rotary head's target attention and accuracy at
every length, predicted from its parameters alone. prop1 sets these predictions against the
measurements; cures, errors and rope_bases use them too.

RoPE makes the logit a function of the relative offset delta = 0..n-1 and the two tokens
(``lengthgen.science.kernel``), so a longer sequence only adds keys: the target's weight
exp(s(K)) / sum_{delta<n} exp(s(delta)) is diluted by the new terms. Nothing is fitted
to long-length measurements; the predictors differ only in how they average over content.

Predictors (each gives a weight profile w[a, t, delta] for query token a and target token t):

- ``mean_logit``: the softmax of the content-averaged logit s(delta); the same profile for all a, t.
- ``mean_field``: for each query token a, average exp(logit) over the key token at each delta,
  m_a(delta) = E_b exp s_ab(delta) (delta = 0 is the query itself, b = a), take
  w_a(delta) = m_a(delta) / sum m_a, then average the target weight over a.
- ``mean_field_target``: as ``mean_field``, but the target's own term uses the actual target token,
  exp s_at(K), and only the distractors are averaged; then average over a and t.
- ``exact``: no approximation: E[x / (x + z + Y)] over the distractors' content, where x, z are
  the target's and the query's own exp-logits and Y the sum over distractors, from the identity
  x / (x + z + Y) = int_0^inf x exp(-u (x + z + Y)) du and the independence of the distractor tokens:
  E_Y exp(-u Y) = prod_delta E_b exp(-u exp s_ab(delta)). A one-dimensional integral per (a, t),
  done by the trapezoid rule on a grid in log u. It tells how much of the mean-field forms' error
  is their averaging rather than the dilution account itself.

Accuracy from parameters: for each predictor, sequences of uniform random tokens (a seeded
generator per (seed, offset, length), the same draws for every predictor) are passed through
the head's exact value and unembedding weights with the attention fixed to the predictor's
profile w[a, t, .]: the output is argmax of U (sum_delta w(delta) v(token at delta)) + bias.
So the only approximation is the one the predictor makes about the attention weights. For
``exact`` the weights are the softmax of the kernel over each sampled sequence: the head itself
run on fresh sequences, a consistency check rather than a prediction.

Ranking (an accuracy predictor, beside the dilution forms): the answer is wrong when a key holding
another token outranks the target, whatever the softmax does with the rest. ``ranking`` takes, per
query token a and target token t, the probability that no key does, from the kernel over token pairs
with the distractors' tokens drawn uniformly and independently (exact under that draw):
P_rank(a, t) = 1[s_aa(0) <= s_at(K) or a = t] prod_{delta != 0, K} P_b(b = t or s_ab(delta) <= s_at(K)),
and the readout of the winning key: the softmax readout when the target's token holds all the weight,
argmax(U v_t + bias) = t. Accuracy = mean over uniform (a, t) of P_rank(a, t) 1[t reads out as t],
exact, with no sampled sequences. It ignores dilution (the weight the other keys keep when the target
wins); ``mean_field`` ignores ranking. It makes no prediction of the target attention: its rows repeat
``mean_field``'s there, which ``prediction_errors`` leaves out. (Multiplying P_rank by the
``mean_field`` readout's correctness instead counts one failure twice: the keys that outrank the
target also take its weight. On 9 default heads, 3 seeds x K = 1, 2, 3, that form's accuracy MAE
past the range was 0.057 against 0.023 for this one and 0.066 for ``mean_field``.)
"""

import math

import pandas as pd
import torch

from lengthgen.science.kernel import log_mean_exp_over_keys, logit_kernel, realized_mean_logit, self_logits
from lengthgen.models.head import AttentionHead
from lengthgen.science.prediction_errors import BORROWED_ATTENTION, PREDICTORS
from lengthgen.runtime.seeding import generator

# Trapezoid grid in r = log u for the exact expectation; see ``exact_target_attention``.
LOG_U_STEP = 0.25  # the integrand is analytic in a strip, so the trapezoid rule converges like exp(-pi^2 / step)
LOG_U_MIN = -25.0  # a target's integral starts at u (x + z) = exp(LOG_U_MIN): it drops at most exp(LOG_U_MIN) x / (x + z)
TAIL = 40.0  # and stops where exp(-u (x + z)) < exp(-TAIL)
LOG_FLOAT64_MAX = 709.0  # exp overflows a float64 past about 709.78


def attention_profiles(kernel: torch.Tensor, offset: int, length: int) -> dict[str, torch.Tensor]:
    """Each predictor's weight on every delta < length, as w[a, t, delta]. Each (V, V, length).

    ``kernel`` is S[a, b, delta] from ``logit_kernel`` with at least ``length`` offsets.
    """
    if not 0 < offset < length <= kernel.shape[2]:
        raise ValueError(f"need 0 < offset < length <= kernel offsets, got {offset}, {length}, {kernel.shape[2]}")
    kernel = kernel[:, :, :length]
    vocab_size = kernel.shape[0]
    shape = (vocab_size, vocab_size, length)
    log_mean = log_mean_exp_over_keys(kernel)  # (V, length)
    log_target = log_mean[:, None, :].expand(shape).clone()  # (V, V, length)
    log_target[:, :, offset] = kernel[:, :, offset]  # the actual target token's logit
    return {
        "mean_logit": realized_mean_logit(kernel).softmax(-1).expand(shape),
        "mean_field": log_mean.softmax(-1)[:, None, :].expand(shape),
        "mean_field_target": log_target.softmax(-1),
    }


def exact_target_attention(kernel: torch.Tensor, offset: int, lengths: list[int]) -> torch.Tensor:
    """E[softmax weight on the target | query token a, target token t] at each length. (len(lengths), V, V).

    With x = exp s_at(K), z = exp s_aa(0) and Y the distractors' sum,
    E[x / (x + z + Y)] = int_0^inf x exp(-u (x + z)) prod_delta phi_a,delta(u) du,
    phi_a,delta(u) = E_b exp(-u exp s_ab(delta)). Logits are shifted per query token so that every
    exp is <= 1 (the weight is shift-invariant); the integral runs over r = log u, on the grid
    LOG_U_MIN + k LOG_U_STEP, through each target's window (``integration_windows``); the product is
    computed once per query token, at every point of any target's window.
    """
    if not (0 < offset < min(lengths) and max(lengths) <= kernel.shape[2]):
        raise ValueError(f"need 0 < offset < every length <= kernel offsets, got {offset}, {lengths}")
    vocab_size, n_max = kernel.shape[0], max(lengths)
    distractor = torch.ones(n_max, dtype=torch.bool)
    distractor[[0, offset]] = False
    result = torch.empty(len(lengths), vocab_size, vocab_size, dtype=torch.float64)
    for query_token in range(vocab_size):
        logits = kernel[query_token, :, :n_max]  # (V_b, n_max)
        logits = logits - logits.max()
        log_self, log_target = logits[query_token, 0], logits[:, offset]  # (), (V_t,)
        log_x_plus_z = torch.logaddexp(log_self, log_target)  # (V_t,)
        first, last = integration_windows(log_x_plus_z, logits[:, :min(lengths)], distractor[:min(lengths)])
        points = torch.cat([torch.arange(start, end + 1) for start, end in zip(first.tolist(), last.tolist())
                            if start <= end] + [torch.zeros(0, dtype=torch.long)]).unique()  # (G,), sorted
        log_u = LOG_U_MIN + points.double() * LOG_U_STEP  # (G,)
        log_phi = torch.zeros(n_max, len(log_u), dtype=torch.float64)  # (n_max, G): log E_b exp(-u e^s)
        for start in range(0, n_max, 64):  # chunks of delta keep the (V_b, chunk, G) tensor small
            terms = times_u(logits[:, start:start + 64, None], log_u).neg_().exp_()  # (V_b, c, G): exp(-u e^s)
            # log of 0 (every term underflowed) is -inf: the product, and the integrand, is then 0.
            log_phi[start:start + 64] = terms.mean(0).log()
        log_phi[~distractor] = 0.0
        log_product = log_phi.cumsum(0)[[length - 1 for length in lengths]]  # (L, G)
        log_integrand = ((log_u + log_target[:, None] - times_u(log_x_plus_z[:, None], log_u))[None]
                         + log_product[:, None, :])  # (L, V_t, G)
        result[:, query_token, :] = (log_integrand.exp() * trapezoid_weights(points, first, last)).sum(-1)  # (L, V_t)
    return result


def integration_windows(log_x_plus_z: torch.Tensor, logits: torch.Tensor,
                        distractor: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per target token, the first and last grid index k (r = LOG_U_MIN + k LOG_U_STEP) of its integral; none
    (first > last) where it is negligible. ``logits`` (V_b, n): one query token's, shifted to a maximum of 0,
    over the shortest length's offsets, of which ``distractor`` marks the distractors. (V_t,), (V_t,)

    With v = u (x + z), the integrand is at most x / (x + z) exp(-v) dv: below v = exp(LOG_U_MIN) it holds at most
    exp(LOG_U_MIN) x / (x + z), and past v = TAIL at most exp(-TAIL). Past u = TAIL / exp(m), m the largest over
    distractor offsets of the smallest logit over key tokens, that offset's E_b exp(-u e^s) < exp(-TAIL) caps the
    integrand too (it drops at most exp(-TAIL), at every length at least the shortest).
    """
    bound = log_x_plus_z.clamp(min=logits[:, distractor].amin(0).max()) if distractor.any() else log_x_plus_z
    first = torch.floor(-log_x_plus_z / LOG_U_STEP).long()
    last = torch.ceil((math.log(TAIL) - bound - LOG_U_MIN) / LOG_U_STEP).long()
    return first, last


def trapezoid_weights(points: torch.Tensor, first: torch.Tensor, last: torch.Tensor) -> torch.Tensor:
    """The trapezoid rule's weight of each grid index of ``points`` (G,) in each window first..last (V_t,):
    LOG_U_STEP inside, half of it at the window's two ends, 0 outside. (V_t, G)"""
    inside = (points >= first[:, None]) & (points <= last[:, None])
    ends = (points == first[:, None]).double() + (points == last[:, None]).double()
    return inside * (1.0 - 0.5 * ends) * LOG_U_STEP


def times_u(log_values: torch.Tensor, log_u: torch.Tensor) -> torch.Tensor:
    """exp(log_values) * u for the grid r = log u on the last dim: a product where u is a float64 number,
    exp(r + log_values) where it overflows (logits that spread over more than about 700 reach there)."""
    product = log_values.exp() * log_u.exp()
    overflows = log_u >= LOG_FLOAT64_MAX
    if overflows.any():  # rarely so: a masked write of nothing costs more than the product
        product[..., overflows] = (log_values + log_u[overflows]).exp()
    return product


@torch.no_grad()
def token_outputs(model: AttentionHead) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(values (V, D), unembedding weight (V_out, D), unembedding bias (V_out,)) in float64.

    Rotary heads leave values unrotated, so a token's value does not depend on its position.
    """
    embeddings = model.token_embedding.weight.detach().double().cpu()  # (V, D)
    value = model.value
    values = embeddings @ value.weight.detach().double().cpu().T + value.bias.detach().double().cpu()
    return values, model.unembedding.weight.detach().double().cpu(), model.unembedding.bias.detach().double().cpu()


def readout_accuracy(weights: torch.Tensor, tokens: torch.Tensor, values: torch.Tensor, unembedding: torch.Tensor,
                     unembedding_bias: torch.Tensor, offset: int) -> float:
    """Accuracy of the head's value/unembedding readout under the given attention weights.

    ``tokens`` (N, n) are indexed by delta (column 0 is the query token, column ``offset`` the
    target); ``weights`` (N, n) the attention on each.
    """
    # Attention mass per vocabulary token, so values are summed without a (N, n, D) tensor.
    mass = torch.zeros(len(tokens), values.shape[0], dtype=weights.dtype).scatter_add_(1, tokens, weights)  # (N, V)
    logits = mass @ values @ unembedding.T + unembedding_bias  # (N, V_out)
    return (logits.argmax(-1) == tokens[:, offset]).double().mean().item()


def ranking_probability(kernel: torch.Tensor, offset: int, length: int) -> torch.Tensor:
    """P_rank[a, t]: the probability that no key holding a token other than t has a higher logit than the
    target, over uniform independent distractor tokens (module doc). (V, V) float64.

    A distractor holding the target's own token cannot make the readout wrong, so it never counts
    against the target; a tie counts for the target. Over the query's own key (delta = 0, token a)
    nothing is random.
    """
    if not 0 < offset < length <= kernel.shape[2]:
        raise ValueError(f"need 0 < offset < length <= kernel offsets, got {offset}, {length}, {kernel.shape[2]}")
    vocab_size = kernel.shape[0]
    distractor = torch.ones(length, dtype=torch.bool)
    distractor[[0, offset]] = False
    other_token = ~torch.eye(vocab_size, dtype=torch.bool)  # (V_t, V_b): b != t
    self_logit = self_logits(kernel)  # (V,)
    result = torch.empty(vocab_size, vocab_size, dtype=torch.float64)
    for query_token in range(vocab_size):  # one query token at a time keeps the (V_t, V_b, n) tensor small
        target = kernel[query_token, :, offset]  # (V_t,)
        beaten = (kernel[query_token, :, :length][None] > target[:, None, None]) & other_token[:, :, None]
        beaten &= distractor  # (V_t, V_b, n): the query's own key and the target are no distractors
        log_no_beater = torch.log1p(-beaten.double().mean(1)).sum(-1)  # (V_t,)
        self_beats = (self_logit[query_token] > target) & other_token[:, query_token]  # (V_t,)
        result[query_token] = log_no_beater.exp() * ~self_beats
    return result


def profile_weights(profile: torch.Tensor, tokens: torch.Tensor, offset: int) -> torch.Tensor:
    """A predictor's weights w[a, t, .] on each sequence's query and target tokens. (N, n)."""
    return profile[tokens[:, 0], tokens[:, offset]]


def kernel_softmax_weights(kernel: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """The head's own softmax weights on sequences indexed by delta, from the kernel. (N, n).

    One ``gather`` of the rows S[a, b, :] by a * V + b: two thirds of the CPU of indexing by three (N, n) tensors."""
    vocab_size, n_kernel = kernel.shape[1], kernel.shape[2]
    pairs = tokens[:, :1] * vocab_size + tokens  # (N, n): the row of (query token, key token)
    return kernel.reshape(-1, n_kernel).gather(0, pairs).softmax(-1)  # columns past n unread


def predict_dilution(model: AttentionHead, offset: int, seed: int, lengths: list[int],
                     n_samples: int, with_exact: bool = True) -> pd.DataFrame:
    """Every predictor's target attention and accuracy at each length, from the parameters
    (and the head's length scales, if it has any: ``kernel.logit_kernel``).

    Columns: offset, seed, length, predictor, predicted_attention, predicted_accuracy.
    ``n_samples`` random sequences per length (the same for every predictor) give the accuracy.
    Without ``with_exact`` the costliest predictor, the consistency check ``exact``, is left out.
    """
    if model.config.attention != "softmax":
        raise ValueError("the dilution law is about softmax attention; got a linear-attention head")
    values, unembedding, unembedding_bias = token_outputs(model)
    # Whether all the weight on a key of token t reads out as t, per t: the winning key's readout. (V_t,)
    own_readout_correct = ((values @ unembedding.T + unembedding_bias).argmax(-1) == torch.arange(len(values))).double()
    rows = []
    for length in sorted(lengths):
        kernel = logit_kernel(model, length)  # (V, V, length): per length, as a head's length scales may change it
        tokens = torch.randint(values.shape[0], (n_samples, length), generator=generator("prop1", seed, offset, length))
        profiles = attention_profiles(kernel, offset, length)
        attention = {name: profile[:, :, offset].mean().item() for name, profile in profiles.items()}
        weights = {name: profile_weights(profile, tokens, offset) for name, profile in profiles.items()}
        if with_exact:
            attention["exact"] = exact_target_attention(kernel, offset, [length])[0].mean().item()
            weights["exact"] = kernel_softmax_weights(kernel, tokens)
        accuracy = {name: readout_accuracy(chosen, tokens, values, unembedding, unembedding_bias, offset)
                    for name, chosen in weights.items()}
        attention["ranking"] = attention[BORROWED_ATTENTION["ranking"]]
        accuracy["ranking"] = (ranking_probability(kernel, offset, length) * own_readout_correct).mean().item()
        for predictor in (name for name in PREDICTORS if name in accuracy):
            rows.append({"offset": offset, "seed": seed, "length": length, "predictor": predictor,
                         "predicted_attention": attention[predictor], "predicted_accuracy": accuracy[predictor]})
    return pd.DataFrame(rows)

