"""transformer: do the phenomenon, the equivariance and the carrier transfer to a causal decoder?

Each transformer (``lengthgen.transformer``) is trained on the full-sequence task (at every position
t >= K, the token at t - K) on the single head's training lengths, and checked for the three
findings of the single head:

1. **phenomenon**: accuracy per position, in windows of ``train_length_max`` positions: the last
   window of each evaluation length n (positions max(K, n - train_length_max) .. n - 1), which is the
   analogue of the single head's query at length n. rope is near perfect in range and well above
   chance at 4x; learned is near perfect in range and at chance past it;
2. **equivariance**: the largest change of any output logit when every position id is shifted by s
   (``experiments.shift``, the same measurement as the single head's): rounding only for rope, O(1)
   for learned;
3. **carrier**: the retrieval head, the (layer, head) whose mean attention weight at offset K is
   largest on in-range sequences; its content-averaged logit kernel over the real queries and keys
   it sees, s(delta) = sum_i Re(mean(zq)_i conj(mean(zk)_i) e^{i delta theta_i}) / sqrt(hd), decomposed
   into rotary blocks by ``experiments.frequency``. A single head retrieves when that attention weight
   reaches ``rules.MIN_RETRIEVAL_ATTENTION``; when none does, the work is split over heads or layers and
   the per-head attention at every offset shows how.
"""

import math

import numpy as np
import pandas as pd
import torch

from lengthgen.claims import check, checks_markdown, verdict
from lengthgen.experiments import frequency
from lengthgen.experiments.shift import summary_by_shift
from lengthgen.kernel import as_complex_blocks, cosine_sum
from lengthgen.rules import (ABOVE_CHANCE_FACTOR, ABSOLUTE_MIN_CHANGE, CHANCE_TOLERANCE, MIN_RETRIEVAL_ATTENTION,
                             MIN_TOP4_ALIGNMENT, MIN_TOP4_SHARE, NEAR_PERFECT, ROPE_MAX_CHANGE, SHIFT_CLAIM_DTYPE)
from lengthgen.transformer import Transformer

EXPERIMENT = "transformer"
FINDINGS = ("phenomenon", "equivariance", "carrier")


# --- 1. the phenomenon ---------------------------------------------------------------------------------------

def accuracy_windows(by_position: pd.DataFrame, train_length_max: int) -> pd.DataFrame:
    """Per (pe, offset, seed, length): accuracy over the last ``train_length_max`` positions with a target.

    ``in_training_range``: the whole window lies in [0, train_length_max); ``past_training_range``:
    it lies at or past train_length_max (a window across the boundary is neither).
    """
    start = np.maximum(by_position["offset"], by_position["length"] - train_length_max)
    window = by_position[by_position["position"] >= start]
    frame = (window.groupby(["pe", "offset", "seed", "length"], as_index=False)
             .agg(window_start=("position", "min"), accuracy=("accuracy", "mean")))
    return frame.assign(in_training_range=frame["length"] <= train_length_max,
                        past_training_range=frame["window_start"] >= train_length_max)


def _extreme(values: pd.Series, how: str) -> float:
    """min or max of ``values``; NaN when there are none (an encoding missing from the run)."""
    return float(getattr(values, how)()) if len(values) else math.nan


def claims_phenomenon(windows: pd.DataFrame, vocab_size: int, train_length_max: int) -> list[dict]:
    """Per offset, over every seed: rope and learned near perfect in range (the base rule's
    ``NEAR_PERFECT``); rope >= ``ABOVE_CHANCE_FACTOR`` x chance in the window at 4x train_length_max;
    learned within ``CHANCE_TOLERANCE`` of chance in every window past the range."""
    chance = 1.0 / vocab_size
    four_x = 4 * train_length_max
    rows = []
    for offset, cells in windows.groupby("offset", sort=True):
        claim = f"phenomenon, K={offset}"
        for pe in ("rope", "learned"):
            worst = _extreme(cells.loc[(cells["pe"] == pe) & cells["in_training_range"], "accuracy"], "min")
            rows.append(check(EXPERIMENT, claim, f"{pe}: lowest accuracy over seeds and in-range windows", worst,
                              f">= {NEAR_PERFECT}", worst >= NEAR_PERFECT))
        far = _extreme(cells.loc[(cells["pe"] == "rope") & (cells["length"] == four_x), "accuracy"], "min")
        rows.append(check(EXPERIMENT, claim, f"rope: lowest accuracy over seeds, last window at n={four_x}", far,
                          f">= {ABOVE_CHANCE_FACTOR:g} x chance = {ABOVE_CHANCE_FACTOR * chance:.3f}",
                          far >= ABOVE_CHANCE_FACTOR * chance))
        past = cells.loc[(cells["pe"] == "learned") & cells["past_training_range"], "accuracy"]
        distance = _extreme((past - chance).abs(), "max")
        rows.append(check(EXPERIMENT, claim, "learned: largest distance from chance over seeds and windows past "
                          "the range", distance, f"<= {CHANCE_TOLERANCE} (chance = {chance:.4f})",
                          distance <= CHANCE_TOLERANCE))
    return rows


# --- 2. the equivariance -------------------------------------------------------------------------------------

def claims_equivariance(changes: pd.DataFrame) -> list[dict]:
    """Per offset, float64 output logits: rope's largest change over seeds, lengths and shifts is
    <= ``ROPE_MAX_CHANGE``; learned's largest change over the defined shifts is >= ``ABSOLUTE_MIN_CHANGE``
    in every seed (the statistic is the minimum over seeds)."""
    cells = changes[changes["dtype"] == SHIFT_CLAIM_DTYPE]
    rows = []
    for offset, at_offset in cells.groupby("offset", sort=True):
        claim = f"equivariance, K={offset}"
        rope = _extreme(at_offset.loc[at_offset["pe"] == "rope", "output_logit_change"], "max")
        statistic = "rope: largest float64 output-logit change over seeds, lengths and shifts"
        rows.append(check(EXPERIMENT, claim, statistic, rope, f"<= {ROPE_MAX_CHANGE:g}", rope <= ROPE_MAX_CHANGE))
        learned = at_offset[(at_offset["pe"] == "learned") & at_offset["defined"]]
        smallest = _extreme(learned.groupby("seed")["output_logit_change"].max(), "min")
        statistic = "learned: smallest over seeds of the largest float64 output-logit change over defined shifts"
        rows.append(check(EXPERIMENT, claim, statistic, smallest, f">= {ABSOLUTE_MIN_CHANGE:g}",
                          smallest >= ABSOLUTE_MIN_CHANGE))
    return rows


# --- 3. the carrier ------------------------------------------------------------------------------------------

def attention_by_offset(weights: torch.Tensor) -> torch.Tensor:
    """Mean attention weight at each offset delta = query position - key position, over sequences
    and the query positions t >= delta. (B, H, T, T) -> (H, T)."""
    length = weights.shape[-1]
    return torch.stack([weights.diagonal(-delta, dim1=-2, dim2=-1).mean(dim=(0, 2)) for delta in range(length)],
                       dim=-1)


def mean_logit_by_offset(logits: torch.Tensor) -> torch.Tensor:
    """Mean attention logit at each offset delta over sequences and query positions t >= delta. (B, T, T) -> (T,)."""
    return torch.stack([logits.diagonal(-delta, dim1=-2, dim2=-1).mean() for delta in range(logits.shape[-1])])


def carrier_coefficients(query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    """mean(zq)_i conj(mean(zk)_i) / sqrt(hd) over every query and key state, the unrotated (B, T, hd)
    of one head: the content average of its logit kernel, as ``kernel.mean_block_coefficients``. (hd/2,) complex."""
    head_dim = query.shape[-1]
    mean_query = as_complex_blocks(query.reshape(-1, head_dim).double()).mean(0)
    mean_key = as_complex_blocks(key.reshape(-1, head_dim).double()).mean(0)
    return mean_query * mean_key.conj() / math.sqrt(head_dim)


@torch.no_grad()
def analyze_carrier(model: Transformer, tokens: torch.Tensor, offset: int, seed: int,
                    train_length_max: int) -> dict[str, pd.DataFrame]:
    """One rope transformer on in-range sequences ``tokens`` (N, train_length_max), in float64 on its device.

    Returns ``heads`` (every layer and head's mean attention weight at every offset), ``blocks`` (the
    retrieval head's rotary spectrum, from ``frequency.analyze_coefficients``) and ``carrier`` (one row:
    which head retrieves, how much, its carrier's summary, and the correlation over delta in
    0..train_length_max-1 of its carrier kernel with its mean realized logit).
    """
    model = model.double()
    _, record = model.trace(tokens.to(next(model.parameters()).device))
    record = [type(layer)(*(tensor.cpu() for tensor in layer)) for layer in record]
    profiles = torch.stack([attention_by_offset(layer.weights) for layer in record])  # (L, H, T)
    n_layers, n_heads, length = profiles.shape
    keys = {"offset": offset, "seed": seed}
    layer_index, head_index = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    heads = pd.DataFrame({
        "layer": np.repeat(layer_index.ravel(), length), "head": np.repeat(head_index.ravel(), length),
        "delta": np.tile(np.arange(length), n_layers * n_heads), "mean_weight": profiles.flatten().numpy(),
    }).assign(**keys)
    at_offset = profiles[:, :, offset].flatten()  # (L * H,)
    ranked = at_offset.sort(descending=True).values
    layer, head = divmod(int(at_offset.argmax()), n_heads)
    trace = record[layer]
    coefficients = carrier_coefficients(trace.query[:, head], trace.key[:, head])
    theta = model.encoding.theta.double().cpu()
    spectrum, summary, _ = frequency.analyze_coefficients(coefficients, theta, offset, train_length_max)
    kernel = cosine_sum(coefficients, theta, torch.arange(length)).numpy()
    realized = mean_logit_by_offset(trace.logits[:, head]).numpy()
    head_keys = {**keys, "layer": layer, "head": head}
    carrier = {**head_keys, "attention_at_offset": float(ranked[0]),
               "runner_up_attention_at_offset": float(ranked[1]) if len(ranked) > 1 else math.nan,
               "single_head_retrieves": bool(ranked[0] >= MIN_RETRIEVAL_ATTENTION),
               "kernel_logit_correlation": float(np.corrcoef(kernel, realized)[0, 1]), **summary}
    return {"heads": heads, "blocks": spectrum.assign(**head_keys), "carrier": pd.DataFrame([carrier])}


def claims_carrier(carrier: pd.DataFrame) -> list[dict]:
    """Per offset, over every seed: the retrieval head's attention at K reaches ``MIN_RETRIEVAL_ATTENTION``,
    and its carrier is concentrated and aligned by the frequency experiment's rules (worst seed)."""
    rows = []
    for offset, heads in carrier.groupby("offset", sort=True):
        claim = f"carrier, K={offset}"
        worst = heads["attention_at_offset"].min()
        rows.append(check(EXPERIMENT, claim, "lowest over seeds of the largest mean attention weight of any head "
                          "at offset K", worst, f">= {MIN_RETRIEVAL_ATTENTION:g} (one head retrieves)",
                          worst >= MIN_RETRIEVAL_ATTENTION))
        n_blocks = int(heads["n_blocks"].iloc[0])
        worst = heads["top4_share"].min()
        rows.append(check(EXPERIMENT, claim, f"retrieval head: lowest top-4 energy share (of {n_blocks} blocks) "
                          "over seeds", worst, f">= {MIN_TOP4_SHARE:g}", worst >= MIN_TOP4_SHARE))
        worst = heads["top4_alignment"].min()
        rows.append(check(EXPERIMENT, claim, "retrieval head: lowest energy-weighted top-4 alignment "
                          "cos(K theta + phi) over seeds", worst, f">= {MIN_TOP4_ALIGNMENT:g}",
                          worst >= MIN_TOP4_ALIGNMENT))
    return rows


def claims_transformer(windows: pd.DataFrame, changes: pd.DataFrame, carrier: pd.DataFrame, vocab_size: int,
                       train_length_max: int) -> pd.DataFrame:
    """Every check of the three findings, in order; each claim names its finding and offset."""
    return pd.DataFrame(claims_phenomenon(windows, vocab_size, train_length_max) + claims_equivariance(changes)
                        + claims_carrier(carrier))


# --- RESULTS.md ----------------------------------------------------------------------------------------------

def _spread(values: pd.Series, digits: str = ".3f") -> str:
    return f"{values.mean():{digits}} [{values.min():{digits}}, {values.max():{digits}}]"


def windows_markdown(windows: pd.DataFrame, train_length_max: int) -> str:
    """Per (encoding, K) row and length column: mean [min, max] over seeds of the last-window accuracy."""
    cells = windows.groupby(["pe", "offset", "length"])["accuracy"].agg(_spread).unstack("length")
    header = ["encoding", "K"] + [f"n={n}{'*' if n <= train_length_max else ''}" for n in cells.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for (pe, offset), row in cells.iterrows():
        lines.append("| " + " | ".join([pe, str(offset)] + list(row.fillna("-"))) + " |")
    return "\n".join(lines)


def shift_markdown(changes: pd.DataFrame) -> str:
    """Per (encoding, dtype, K): the largest output-logit change over seeds and lengths at each shift."""
    tables = {offset: summary_by_shift(changes, offset, "output_logit_change")
              for offset in sorted(changes["offset"].unique())}
    shifts = list(next(iter(tables.values())).columns)
    lines = ["| encoding | dtype | K | " + " | ".join(f"s={s}" for s in shifts) + " |",
             "|---|---|---|" + "---|" * len(shifts)]
    for offset, table in tables.items():
        for (pe, dtype), values in table.iterrows():
            shown = ("undefined" if np.isnan(value) else f"{value:.2e}" for value in values)
            lines.append(f"| {pe} | {dtype} | {offset} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def carrier_markdown(carrier: pd.DataFrame, heads: pd.DataFrame) -> str:
    """One row per rope model: its retrieval head, the attention at K, each head's peak offset, the carrier."""
    peaks = (heads.loc[heads.groupby(["offset", "seed", "layer", "head"])["mean_weight"].idxmax()]
             .assign(cell=lambda f: "L" + f["layer"].astype(str) + "H" + f["head"].astype(str) + ": "
                     + f["delta"].astype(str) + " (" + f["mean_weight"].map("{:.2f}".format) + ")")
             .groupby(["offset", "seed"])["cell"].agg(", ".join))
    lines = ["| K | seed | retrieval head | its attention at K | next head's | each head's peak offset (weight) "
             "| top-4 share | top-4 alignment | peak delta | carrier vs realized logit (corr.) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in carrier.sort_values(["offset", "seed"]).itertuples():
        lines.append(f"| {row.offset} | {row.seed} | layer {row.layer}, head {row.head} | "
                     f"{row.attention_at_offset:.3f} | {row.runner_up_attention_at_offset:.3f} | "
                     f"{peaks.loc[(row.offset, row.seed)]} | {row.top4_share:.3f} | {row.top4_alignment:.3f} | "
                     f"{row.peak_delta} | {row.kernel_logit_correlation:.3f} |")
    return "\n".join(lines)


def carrier_finding(carrier: pd.DataFrame) -> str:
    """Which models retrieve with one head, and which split the work (said, not only checked)."""
    split = carrier[~carrier["single_head_retrieves"]]
    if split.empty:
        return (f"In every rope model one head puts at least {MIN_RETRIEVAL_ATTENTION:g} of its attention on "
                "offset K: a single head retrieves.")
    runs = ", ".join(f"K={row.offset} seed {row.seed} (largest: {row.attention_at_offset:.2f})"
                     for row in split.sort_values(["offset", "seed"]).itertuples())
    return (f"No single head retrieves in {len(split)} of {len(carrier)} rope models: no head puts "
            f"{MIN_RETRIEVAL_ATTENTION:g} of its attention on offset K ({runs}); the work is split over heads or "
            "layers, as each head's peak offset shows. Their 'retrieval head' is only the head with the most "
            "attention at K, and its carrier is reported as measured.")


def findings_markdown(claims: pd.DataFrame) -> str:
    lines = ["| finding | checks holding | verdict |", "|---|---|---|"]
    for finding in FINDINGS:
        checks = claims[claims["claim"].str.startswith(finding)]
        lines.append(f"| {finding} | {int(checks['holds'].sum())}/{len(checks)} | {verdict(checks)} |")
    return "\n".join(lines)


def section_markdown(windows: pd.DataFrame, changes: pd.DataFrame, heads: pd.DataFrame, carrier: pd.DataFrame,
                     claims: pd.DataFrame, settings: dict) -> str:
    """The transformer section of RESULTS.md, every number read from the tables. ``settings``: the model and
    training settings (n_layers, n_heads, d_model, steps, batch_size, lr, precision, eval_samples) and
    train_length_min, train_length_max, vocab_size."""
    s = settings
    seeds = ", ".join(map(str, sorted(windows["seed"].unique())))
    head_dim = s["d_model"] // s["n_heads"]
    return "\n\n".join([
        f"## {EXPERIMENT}: do the phenomenon, the equivariance and the carrier transfer?",
        f"A causal decoder of {s['n_layers']} pre-norm layers, {s['n_heads']} heads of width {head_dim} "
        f"(d_model {s['d_model']}), trained on the full-sequence task (at every position t >= K, the token at "
        f"t - K) on lengths {s['train_length_min']}..{s['train_length_max']}: Adam, lr {s['lr']:g}, batch "
        f"{s['batch_size']}, {s['steps']} steps, {s['precision']}; seeds {seeds}. Its positional encoding is the "
        "single head's registry entry, applied in every layer. Evaluated on the first "
        f"{s['eval_samples']} sequences of each evaluation length, at every position.",
        "**Phenomenon.** Accuracy over the last window of each length: the last "
        f"{s['train_length_max']} positions with a target (the analogue of the single head's query at that "
        "length); mean [min, max] over seeds; * in the training range. Chance is "
        f"{1 / s['vocab_size']:.4f}.",
        windows_markdown(windows, s["train_length_max"]),
        "**Equivariance.** Every position id shifted by s, on sequences of length "
        f"{', '.join(map(str, sorted(changes['length'].unique())))}; the largest change of any output logit "
        "against the unshifted model, max over seeds and lengths (undefined: position ids past the learned "
        "table's rows).",
        shift_markdown(changes),
        "**Carrier.** In each rope model, the mean attention weight of every head at each offset delta on "
        f"in-range sequences (length {s['train_length_max']}); the retrieval head is the one with the most at "
        "delta = K. Its content-averaged logit kernel over the real query and key states it sees is decomposed "
        f"into its {head_dim // 2} rotary blocks as in the frequency experiment (top-4 share, energy-weighted top-4 "
        "alignment cos(K theta + phi), peak delta of the kernel); the last column correlates that kernel with the "
        "head's mean realized logit at each delta.",
        carrier_markdown(carrier, heads),
        carrier_finding(carrier),
        "![shift equivariance of the transformer](figures/transformer_shift.png)",
        "![accuracy by position and the retrieval heads](figures/transformer.png)",
        "**Claim**: the phenomenon, the equivariance and the carrier transfer to a multi-layer, multi-head "
        "transformer. Verdict per finding:",
        findings_markdown(claims),
        checks_markdown(claims),
    ])
