"""transformer: do the phenomenon, the equivariance and the carrier transfer to a causal decoder?

Each transformer (``lengthgen.models.transformer``) is trained on the full-sequence task (at every position
t >= K, the token at t - K) on the single head's training lengths, and checked for the three
findings of the single head:

1. **phenomenon**: accuracy per position, in windows of ``train_length_max`` positions: the last
   window of each evaluation length n (positions max(K, n - train_length_max) .. n - 1), which is the
   analogue of the single head's query at length n. rope is near perfect in range, well above chance at
   4x (the single head's rule) and at every evaluation length past the range (``rope_floor_by_length``:
   the lowest over seeds at each length), and decays gracefully: no **step** past the range, a position
   where the accuracy falls by at least ``thresholds.STEP_MIN_DROP`` between the window before and the
   window from there on (``find_steps``, ``largest_drops``); learned is near perfect in range and at
   chance past it;
2. **equivariance**: the largest change of any output logit when every position id is shifted by s
   (``experiments.shift``, the same measurement as the single head's): rounding only for rope, O(1)
   for learned;
3. **carrier**: every head of each rope model, its mean attention weight at offset K on in-range
   sequences, and its content-averaged logit kernel over the real queries and keys it sees,
   s(delta) = sum_i Re(mean(zq)_i conj(mean(zk)_i) e^{i delta theta_i}) / sqrt(hd), decomposed into
   rotary blocks by ``experiments.frequency``. A head retrieves when that attention weight reaches
   ``thresholds.MIN_RETRIEVAL_ATTENTION`` (``summaries.retrieves``); several may in one model, and
   the carrier checks judge every one of them (the worst over seeds and retrieving heads). A model
   with none splits the work over heads or layers, and the per-head attention at every offset shows
   how. The baseline: every head of the same model at its seeded initialization (the weights its
   training started from), measured the same way on the same sequences; each retrieving head's
   top-4 share must exceed that of the same (layer, head) at init;
4. **steps** (this pipeline's own hypothesis, not the paper's claim): the kernel of each model's
   strongest head (the most attention at K) predicts a step at the first unseen offset where it
   comes back within ``thresholds.STEP_KERNEL_MARGIN`` of its in-range lead of s(K)
   (``predict_step``): a far offset whose average logit ties the target's; checked against the
   first rope step past the range.

Each check's claim is its finding's name (``FINDINGS``; the paper's are ``PAPER_FINDINGS``); the section's
text is ``section.py``.
"""

import math

import numpy as np
import pandas as pd
import torch

from lengthgen.checks import seed_sums
from lengthgen.checks.check import check
from lengthgen.experiments.frequency import analysis as frequency
from lengthgen.experiments.shift import analysis as shift
from lengthgen.science.kernel import as_complex_blocks, cosine_sum
from lengthgen.experiments.frequency.thresholds import MIN_TOP_ALIGNMENT, MIN_TOP_SHARE
from lengthgen.experiments.shift.thresholds import ABSOLUTE_MIN_CHANGE, ROPE_MAX_CHANGE, SHIFT_CLAIM_DTYPE
from lengthgen.experiments.transformer.thresholds import (MIN_RETRIEVAL_ATTENTION, STEP_KERNEL_MARGIN, STEP_MIN_DROP,
                                                          STEP_PREDICTION_FACTOR)
from lengthgen.checks.shared_rules import ABOVE_CHANCE_FACTOR, CHANCE_TOLERANCE, NEAR_PERFECT
from lengthgen.training.loop import seeded_init
from lengthgen.models.transformer import AttentionTrace, Transformer
from lengthgen.experiments.transformer.summaries import (prediction_factor, retrieves, retrieving, rope_drops,
                                                        rope_floor_by_length, same_heads_at_init, strongest_heads,
                                                        window_means)

CHECKED = ("transformer_by_position", "transformer_windows", "transformer_shift_changes", "transformer_carrier",
           "transformer_untrained_carrier", "transformer_step_predictions")


def analyze(inputs: dict, settings: dict) -> dict[str, pd.DataFrame]:
    """Its tables: the evaluations' accuracy by position and its windows, and from every model its shift
    changes and (rope) every head with its carrier."""
    by_position, train_length_max = inputs["evaluations"], settings["task"]["train_length_max"]
    measured = measure_models(inputs["models"], inputs["eval_sets"], settings)
    steps = find_steps(by_position, train_length_max)
    predictions = measured.pop("predictions")
    return {"transformer_by_position": by_position,
            "transformer_windows": accuracy_windows(by_position, train_length_max),
            "transformer_steps": steps,
            "transformer_step_predictions": with_found_steps(predictions, steps, train_length_max), **measured}


def checks(tables: dict[str, pd.DataFrame], settings: dict) -> list[dict]:
    """Every check of the three findings, in order."""
    task = settings["task"]
    return (claims_phenomenon(tables["transformer_windows"], task["vocab_size"], task["train_length_max"])
            + claims_graceful(tables["transformer_by_position"], task["train_length_max"])
            + claims_equivariance(tables["transformer_shift_changes"])
            + claims_carrier(tables["transformer_carrier"], tables["transformer_untrained_carrier"])
            + claims_step_prediction(tables["transformer_step_predictions"]))


def measure_models(models, eval_sets: dict, settings: dict) -> dict[str, pd.DataFrame]:
    """Per model, on the first ``transformer.eval_samples`` sequences of its offset's evaluation sets: the
    shift changes at the lengths ``shift.lengths``, and, for rope, every head and its carrier on in-range
    sequences, trained and at the model's seeded initialization."""
    n_samples, train_length_max = settings["transformer"]["eval_samples"], settings["task"]["train_length_max"]
    changes, carriers, untrained = [], [], []
    for run, model in models:
        offset, seed = run["offset"], run["seed"]
        sets = eval_sets[offset]
        token_sets = {length: sets[length][0][:n_samples] for length in settings["shift"]["lengths"]}
        changes.append(shift.measure_shift(model, token_sets, settings["shift"]["shifts"], offset, seed))
        if run["pe"] == "rope":
            # In-range sequences: by causality, the first train_length_max tokens of the 4x set are one.
            in_range = sets[4 * train_length_max][0][:n_samples, :train_length_max]
            carriers.append(analyze_carrier(model, in_range, offset, seed, train_length_max, kernel_length=max(sets)))
            untrained.append(analyze_untrained_heads(initialization(model, seed), in_range, offset, seed,
                                                     train_length_max))
    heads, blocks, carrier, predictions = (pd.concat([found[kind] for found in carriers], ignore_index=True)
                                           for kind in ("heads", "blocks", "carrier", "prediction"))
    return {"transformer_shift_changes": pd.concat(changes, ignore_index=True), "transformer_heads": heads,
            "transformer_blocks": blocks, "transformer_carrier": carrier,
            "transformer_untrained_carrier": pd.concat(untrained, ignore_index=True), "predictions": predictions}


def initialization(model: Transformer, seed: int) -> Transformer:
    """The weights ``model``'s training started from: its config initialized from its seed, as
    ``training.loop.train_transformers`` does (``training.seeded_init``)."""
    return seeded_init(Transformer, model.config, seed).eval()


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


def find_steps(by_position: pd.DataFrame, width: int) -> pd.DataFrame:
    """Per run, on its longest evaluation length: every step, the position p where the mean accuracy over
    positions p - width .. p - 1 minus that over p .. p + width - 1 is largest within a stretch of positions
    where it is at least ``STEP_MIN_DROP``. Positions whose windows do not fit in the sequence are skipped."""
    rows = []
    for (pe, offset, seed), run in by_position.groupby(["pe", "offset", "seed"], sort=True):
        longest = run[run["length"] == run["length"].max()].sort_values("position")
        for position, before, after in run_steps(longest["position"].to_numpy(), longest["accuracy"].to_numpy(),
                                                 width):
            rows.append({"pe": pe, "offset": offset, "seed": seed, "position": position,
                         "accuracy_before": before, "accuracy_after": after})
    columns = ["pe", "offset", "seed", "position", "accuracy_before", "accuracy_after"]
    return pd.DataFrame(rows, columns=columns)


def run_steps(positions: np.ndarray, accuracy: np.ndarray, width: int) -> list[tuple[int, float, float]]:
    """(position, mean before, mean after) of each step in one run's accuracy at consecutive ``positions``."""
    index, before, after = window_means(accuracy, width)
    steep = before - after >= STEP_MIN_DROP
    if not len(index):
        return []
    # a stretch of steep positions is one step: split where a position is not steep
    stretches = np.split(np.arange(len(index)), np.flatnonzero(np.diff(steep.astype(int)) != 0) + 1)
    steps = []
    for stretch in stretches:
        if steep[stretch[0]]:
            at = stretch[np.argmax((before - after)[stretch])]
            steps.append((int(positions[index[at]]), float(before[at]), float(after[at])))
    return steps


def _extreme(values: pd.Series, how: str) -> float:
    """min or max of ``values``; NaN when there are none (an encoding missing from the run)."""
    return float(getattr(values, how)()) if len(values) else math.nan


def claims_phenomenon(windows: pd.DataFrame, vocab_size: int, train_length_max: int) -> list[dict]:
    """Per offset, over every seed: rope and learned near perfect in range (the generalization rule's
    ``NEAR_PERFECT``); rope >= ``ABOVE_CHANCE_FACTOR`` x chance in the window at 4x train_length_max (the
    single head's rule) and at every evaluation length past the range (the lowest of ``rope_floor_by_length``
    there; the 4x check is one of its lengths, kept as the single head's analogue); learned within
    ``CHANCE_TOLERANCE`` of chance in every window past the range. Each is a worst seed (``seed_sums``), resampled
    over the seeds drawn."""
    chance = 1.0 / vocab_size
    bar = ABOVE_CHANCE_FACTOR * chance
    four_x = 4 * train_length_max
    floors = rope_floor_by_length(windows)
    rows = []
    for offset, cells in windows.groupby("offset", sort=True):
        for pe in ("rope", "learned"):
            worst = seed_sums.minimum(cells[(cells["pe"] == pe) & cells["in_training_range"]], "accuracy")
            rows.append(check("phenomenon", f"{pe}: lowest accuracy over seeds and in-range windows", worst, ">=",
                              NEAR_PERFECT, offset=offset))
        far = seed_sums.minimum(cells[(cells["pe"] == "rope") & (cells["length"] == four_x)], "accuracy")
        rows.append(check("phenomenon", "rope: lowest accuracy over seeds, last window at 4x the training maximum",
                          far, ">=", bar, offset=offset,
                          rule=f">= {ABOVE_CHANCE_FACTOR:g} x chance = {bar:.3f} (n={four_x})"))
        rope_past = cells[(cells["pe"] == "rope") & (cells["length"] > train_length_max)]
        rows.append(every_length_check(floors[(floors["offset"] == offset) & (floors["length"] > train_length_max)],
                                       bar, offset, resampled=seed_sums.minimum(rope_past, "accuracy")))
        past = cells[(cells["pe"] == "learned") & cells["past_training_range"]]
        distance = seed_sums.maximum(past.assign(distance=(past["accuracy"] - chance).abs()), "distance")
        rows.append(check("phenomenon", "learned: largest distance from chance over seeds and windows past the range",
                          distance, "<=", CHANCE_TOLERANCE, offset=offset,
                          rule=f"<= {CHANCE_TOLERANCE} (chance = {chance:.4f})"))
    return rows


def every_length_check(floor: pd.DataFrame, bar: float, offset: int,
                       resampled: seed_sums.SeedSums | None = None) -> dict:
    """rope's lowest last-window accuracy over seeds and every length past the range (``floor``: one offset's
    rows of ``rope_floor_by_length`` there) against ``bar``; the rule names where it is lowest and every length
    under the bar. ``resampled``: the same lowest as seed sums, from the windows behind ``floor``."""
    lowest = _extreme(floor["accuracy"], "min")
    where = (f"lowest at n={int(floor.loc[floor['accuracy'].idxmin(), 'length'])}" if len(floor)
             else "no rope window past the range")
    under = floor.loc[floor["accuracy"] < bar, "length"]
    if len(under):
        where += "; under it at n=" + ", ".join(str(int(length)) for length in sorted(under))
    return check("phenomenon", "rope: lowest accuracy over seeds and every evaluation length past the range, last "
                 "window", lowest, ">=", bar, offset=offset,
                 rule=f">= {ABOVE_CHANCE_FACTOR:g} x chance = {bar:.3f} ({where})", resampled=resampled)


def claims_graceful(by_position: pd.DataFrame, train_length_max: int) -> list[dict]:
    """Per offset: rope decays gracefully past the range, i.e. no rope run steps down there: the largest drop
    over seeds (``largest_drops`` from position ``train_length_max`` on, windows of ``train_length_max``)
    stays under ``STEP_MIN_DROP``, the size of a step (``find_steps``). Evidence: a far offset overtaking the
    target drops the accuracy at one position, which a smooth dilution does not. The largest is a worst seed
    (``seed_sums``), resampled over the seeds drawn."""
    drops = rope_drops(by_position, train_length_max)
    rows = []
    for offset in sorted(by_position["offset"].unique()):
        runs = drops[drops["offset"] == offset]
        largest = runs.loc[runs["size"].idxmax()] if len(runs) else None
        where = ("no rope window past the range" if largest is None else
                 f"largest: seed {largest['seed']} at position {largest['position']}, "
                 f"{largest['accuracy_before']:.3f} to {largest['accuracy_after']:.3f}")
        rows.append(check("phenomenon", "rope: largest drop over seeds of the mean accuracy from the window before a "
                          "position past the range to the window from it on",
                          seed_sums.maximum(runs, "size"), "<",
                          STEP_MIN_DROP, offset=int(offset), rule=f"< {STEP_MIN_DROP:g}, a step ({where})"))
    return rows


# --- 2. the equivariance -------------------------------------------------------------------------------------

def claims_equivariance(changes: pd.DataFrame) -> list[dict]:
    """Per offset, float64 output logits: rope's largest change over seeds, lengths and shifts is
    <= ``ROPE_MAX_CHANGE``; learned's largest change over the defined shifts is >= ``ABSOLUTE_MIN_CHANGE``
    in every seed (the statistic is the minimum over seeds). Both are worst seeds (``seed_sums``), resampled over
    the seeds drawn.

    rope's is a sanity check: its rotation makes every attention logit a function of the relative offset
    alone, and nothing else in the decoder sees a position, so only a bug (or more than float64
    rounding) can move its outputs. learned's is evidence: trained weights could in principle make the
    output ignore the absolute position."""
    cells = changes[changes["dtype"] == SHIFT_CLAIM_DTYPE]
    rows = []
    for offset, at_offset in cells.groupby("offset", sort=True):
        rope = seed_sums.maximum(at_offset[at_offset["pe"] == "rope"], "output_logit_change")
        rows.append(check("equivariance", "rope: largest float64 output-logit change over seeds, lengths and shifts",
                          rope, "<=", ROPE_MAX_CHANGE, offset=offset, kind="sanity"))
        learned = at_offset[(at_offset["pe"] == "learned") & at_offset["defined"]]
        by_seed = learned.groupby("seed", as_index=False)["output_logit_change"].max()
        smallest = seed_sums.minimum(by_seed, "output_logit_change")
        rows.append(check("equivariance", "learned: smallest over seeds of the largest float64 output-logit change "
                          "over defined shifts", smallest, ">=", ABSOLUTE_MIN_CHANGE, offset=offset))
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
def trace_in_double(model: Transformer, tokens: torch.Tensor) -> tuple[list[AttentionTrace], torch.Tensor]:
    """``model`` in float64 on its device, on ``tokens`` (N, T): every layer's trace, on the CPU, and every
    head's mean attention weight at every offset, (L, H, T)."""
    model = model.double()
    _, record = model.trace(tokens.to(next(model.parameters()).device))
    record = [type(layer)(*(tensor.cpu() for tensor in layer)) for layer in record]
    return record, torch.stack([attention_by_offset(layer.weights) for layer in record])


def head_carrier(model: Transformer, trace: AttentionTrace, head: int, offset: int,
                 train_length_max: int) -> tuple[pd.DataFrame, dict]:
    """One head's carrier: its rotary spectrum (``frequency.analyze_coefficients``) and a row of its summary
    with the correlation over delta in 0..T-1 of its carrier kernel with its mean realized logit."""
    coefficients = carrier_coefficients(trace.query[:, head], trace.key[:, head])
    theta = model.encoding.theta.double().cpu()
    spectrum, summary, _ = frequency.analyze_coefficients(coefficients, theta, offset, train_length_max)
    kernel = cosine_sum(coefficients, theta, torch.arange(trace.logits.shape[-1])).numpy()
    realized = mean_logit_by_offset(trace.logits[:, head]).numpy()
    return spectrum, {"kernel_logit_correlation": float(np.corrcoef(kernel, realized)[0, 1]), **summary}


def measure_heads(model: Transformer, record: list[AttentionTrace], profiles: torch.Tensor, offset: int, seed: int,
                  train_length_max: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every (layer, head) of a traced model (``trace_in_double``): its rotary spectrum (``blocks``) and a row of
    its attention at offset K, whether it retrieves (``summaries.retrieves``) and its carrier (``head_carrier``)."""
    n_layers, n_heads, _ = profiles.shape
    spectra, rows = [], []
    for layer in range(n_layers):
        for head in range(n_heads):
            keys = {"offset": offset, "seed": seed, "layer": layer, "head": head}
            spectrum, summary = head_carrier(model, record[layer], head, offset, train_length_max)
            attention = float(profiles[layer, head, offset])
            spectra.append(spectrum.assign(**keys))
            rows.append({**keys, "attention_at_offset": attention, "retrieves": bool(retrieves(attention)),
                         **summary})
    return pd.concat(spectra, ignore_index=True), pd.DataFrame(rows)


def analyze_carrier(model: Transformer, tokens: torch.Tensor, offset: int, seed: int,
                    train_length_max: int, kernel_length: int | None = None) -> dict[str, pd.DataFrame]:
    """One rope transformer on in-range sequences ``tokens`` (N, train_length_max), in float64 on its device.

    Returns ``heads`` (every layer and head's mean attention weight at every offset), ``blocks`` and ``carrier``
    (every head's rotary spectrum, and a row of its attention at K, whether it retrieves and its carrier's
    summary, ``measure_heads``) and ``prediction`` (one row: the step the carrier kernel of the head with the most
    attention at K predicts over offsets 0 .. ``kernel_length`` - 1, ``predict_step``).
    """
    record, profiles = trace_in_double(model, tokens)
    n_layers, n_heads, length = profiles.shape
    keys = {"offset": offset, "seed": seed}
    layer_index, head_index = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    heads = pd.DataFrame({
        "layer": np.repeat(layer_index.ravel(), length), "head": np.repeat(head_index.ravel(), length),
        "delta": np.tile(np.arange(length), n_layers * n_heads), "mean_weight": profiles.flatten().numpy(),
    }).assign(**keys)
    blocks, carrier = measure_heads(model, record, profiles, offset, seed, train_length_max)
    layer, head = divmod(int(profiles[:, :, offset].flatten().argmax()), n_heads)
    coefficients = carrier_coefficients(record[layer].query[:, head], record[layer].key[:, head])
    kernel = cosine_sum(coefficients, model.encoding.theta.double().cpu(), torch.arange(kernel_length or length))
    prediction = {**keys, "layer": layer, "head": head, **predict_step(kernel.numpy(), offset, train_length_max)}
    return {"heads": heads, "blocks": blocks, "carrier": carrier, "prediction": pd.DataFrame([prediction])}


def predict_step(kernel: np.ndarray, offset: int, train_length_max: int) -> dict:
    """From a head's content-averaged kernel s(delta), delta = 0 .. n - 1: s(K), its lead over the median of the
    other in-range offsets, and the first unseen offset (>= train_length_max) whose s comes back within
    ``STEP_KERNEL_MARGIN`` x that lead of s(K) (None when none does below n), with its gap s(K) - s in leads."""
    at_offset = float(kernel[offset])
    lead = at_offset - float(np.median(np.delete(kernel[:train_length_max], offset)))
    unseen = kernel[train_length_max:]
    returns = np.flatnonzero(unseen >= at_offset - STEP_KERNEL_MARGIN * lead)
    return {"kernel_at_offset": at_offset, "kernel_lead": lead,
            "closest_unseen_gap": float((at_offset - unseen.max()) / lead) if len(unseen) else math.nan,
            "predicted_step": int(train_length_max + returns[0]) if len(returns) else None}


def with_found_steps(predictions: pd.DataFrame, steps: pd.DataFrame, train_length_max: int) -> pd.DataFrame:
    """``predictions`` (one row per rope model) with each model's first step at or past ``train_length_max``
    (``found_step``, None without one)."""
    past = steps[(steps["pe"] == "rope") & (steps["position"] >= train_length_max)]
    first = past.groupby(["offset", "seed"])["position"].min().rename("found_step").reset_index()
    merged = predictions.merge(first, on=["offset", "seed"], how="left")
    return merged.astype({"predicted_step": "Int64", "found_step": "Int64"})


def analyze_untrained_heads(model: Transformer, tokens: torch.Tensor, offset: int, seed: int,
                            train_length_max: int) -> pd.DataFrame:
    """The baseline of the carrier: every (layer, head) of an untrained transformer on ``tokens``, measured as the
    trained model's heads are (``measure_heads``). At init no head retrieves, so the ones to compare with are the
    (layer, head)s that retrieve once trained (``summaries.same_heads_at_init``)."""
    record, profiles = trace_in_double(model, tokens)
    return measure_heads(model, record, profiles, offset, seed, train_length_max)[1]


def claims_carrier(carrier: pd.DataFrame, untrained: pd.DataFrame) -> list[dict]:
    """Per offset, over every seed: the head with the most attention at K reaches ``MIN_RETRIEVAL_ATTENTION``, and
    every retrieving head's carrier is concentrated and aligned by the frequency experiment's rules (worst seed and
    retrieving head), its concentration above that of the same (layer, head)s at init (``untrained``,
    ``frequency.share_over_untrained``). Each rule text names the range of the same heads at init. Each statistic is
    of worst seeds (``seed_sums``), resampled over the seeds drawn."""
    rows = []
    for offset, heads in carrier.groupby("offset", sort=True):
        judged = retrieving(heads)
        at_init = same_heads_at_init(heads, untrained[untrained["offset"] == offset])
        strongest_at_init = untrained.merge(strongest_heads(heads)[["offset", "seed", "layer", "head"]])

        def baseline(column: str, init: pd.DataFrame = at_init) -> str:
            return f"untrained same heads: {init[column].min():.3g} to {init[column].max():.3g}"

        rows.append(check("carrier", "lowest over seeds of the largest mean attention weight of any head at offset K",
                          seed_sums.minimum(strongest_heads(heads), "attention_at_offset"), ">=",
                          MIN_RETRIEVAL_ATTENTION, offset=offset,
                          rule=f">= {MIN_RETRIEVAL_ATTENTION:g} (a head retrieves; "
                               f"{baseline('attention_at_offset', strongest_at_init)})"))
        rows.append(check("carrier", "retrieving heads: lowest top-4 energy share over seeds and retrieving heads",
                          seed_sums.minimum(judged, "top4_share"),
                          ">=", MIN_TOP_SHARE, offset=offset,
                          rule=f">= {MIN_TOP_SHARE:g} (of {int(heads['n_blocks'].iloc[0])} blocks; "
                               f"{len(judged)} retrieving heads; {baseline('top4_share')})"))
        rows.append(frequency.share_over_untrained(
            "carrier", "retrieving heads: lowest top-4 energy share over seeds and retrieving heads minus the highest "
            "of the same heads untrained", judged, at_init, "top4_share", offset))
        rows.append(check("carrier", "retrieving heads: lowest energy-weighted top-4 alignment cos(K theta + phi) over "
                          "seeds and retrieving heads", seed_sums.minimum(judged, "top4_alignment"), ">=",
                          MIN_TOP_ALIGNMENT, offset=offset,
                          rule=f">= {MIN_TOP_ALIGNMENT:g} ({baseline('top4_alignment')})"))
    return rows


def claims_step_prediction(predictions: pd.DataFrame) -> list[dict]:
    """Per offset with a rope step past the range: the carrier kernel's predicted step lies within
    ``STEP_PREDICTION_FACTOR`` of the found one in every such seed (the statistic is the largest factor). It is a
    worst seed (``seed_sums``) of the seeds with a step drawn, and made only where one is (``seed_sums.made_where``),
    as here."""
    rows = []
    stepped = predictions[predictions["found_step"].notna()]
    for offset, runs in stepped.groupby("offset", sort=True):
        factors = [prediction_factor(row.predicted_step, row.found_step) for row in runs.itertuples()]
        found = ", ".join(f"seed {row.seed}: {row.found_step} vs "
                          f"{'none' if pd.isna(row.predicted_step) else row.predicted_step}" for row in runs.itertuples())
        rows.append(check("steps", "strongest head: largest factor between its kernel's predicted step and the "
                          "found step, over seeds with a step", largest_factor(runs.assign(factor=factors)), "<=",
                          STEP_PREDICTION_FACTOR,
                          offset=offset, rule=f"<= {STEP_PREDICTION_FACTOR:g} (found vs predicted: {found})"))
    return rows


def largest_factor(runs: pd.DataFrame) -> seed_sums.SeedSums:
    """The largest ``factor`` over the seeds of ``runs`` (those with a step) drawn: the step check's statistic, made
    only on a resample that draws one of them."""
    return seed_sums.made_where(seed_sums.maximum(runs, "factor"),
                                seed_sums.total(runs.assign(stepped=1.0), "stepped"))
