"""Shift equivariance (the ``shift_K<offset>`` sections: one job per offset of ``shift.offsets``).

Shift every position id of a sequence by s and measure the largest absolute change of
any attention logit (and of any output logit) against the unshifted head, in float32
and in float64. RoPE logits depend on relative offset alone, so the change is rounding
only; an absolute encoding (learned table, sinusoidal) sees different vectors and its
logits move.

For the learned table a shift that pushes a position id past the table's last row is
not defined: that cell is reported as missing (NaN, ``defined`` False), not an error.
"""

import copy
import math

import numpy as np
import pandas as pd
import torch

from lengthgen.checks import seed_sums
from lengthgen.checks.check import check
from lengthgen.models.head import AttentionHead, HeadConfig
from lengthgen.experiments.shift.thresholds import (ABSOLUTE_MIN_CHANGE, ROPE_MAX_CHANGE, SHIFT_ABSOLUTE_ENCODINGS,
                                                    SHIFT_CLAIM_DTYPE)
from lengthgen.training.loop import init_head

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def untrained_head(pe: str, vocab_size: int, d_model: int, trained_positions: int, seed: int,
                   **options) -> AttentionHead:
    """A head at its seeded initialization (e.g. the sinusoidal reference when none was trained), under the
    sweep's ``options`` (rope_base, learned_init_std, init: ``HeadConfig``'s defaults, the schema's, where left out)."""
    return init_head(HeadConfig(vocab_size, d_model, pe, trained_positions, **options), seed).eval()


@torch.no_grad()
def logits_at_shift(model: AttentionHead, tokens: torch.Tensor, shift: int):
    """(attention logits (B, T), output logits (B, V)), or None where the shift is not defined."""
    try:
        scores, _ = model.attention(tokens, position_offset=shift)
        outputs, _ = model(tokens, position_offset=shift)
    except IndexError:
        # Raised by an encoding with a finite table (randomized_learned) for position ids past its rows.
        return None
    return scores, outputs


def max_abs_change(shifted: torch.Tensor, reference: torch.Tensor) -> float:
    return (shifted - reference).abs().max().item()


def shift_changes(model: AttentionHead, tokens: torch.Tensor, shifts: list[int],
                  dtypes: tuple[str, ...] = ("float32", "float64")) -> pd.DataFrame:
    """Per (dtype, shift): largest |change| of attention and output logits vs shift 0.

    ``tokens`` is (B, T). The float64 measurement runs on a ``.double()`` copy, so the
    caller's model is left as it is.
    """
    device = next(model.parameters()).device
    tokens = tokens.to(device)
    rows = []
    for dtype in dtypes:
        head = copy.deepcopy(model).to(DTYPES[dtype]).eval()
        reference_scores, reference_outputs = logits_at_shift(head, tokens, 0)
        scale = reference_scores.abs().max().item()
        for shift in shifts:
            shifted = logits_at_shift(head, tokens, int(shift))
            defined = shifted is not None
            rows.append({
                "length": tokens.shape[1], "dtype": dtype, "shift": int(shift), "defined": defined,
                "attention_logit_change": max_abs_change(shifted[0], reference_scores) if defined else math.nan,
                "output_logit_change": max_abs_change(shifted[1], reference_outputs) if defined else math.nan,
                "attention_logit_scale": scale,
            })
    return pd.DataFrame(rows)


def measure_shift(model: AttentionHead, token_sets: dict, shifts: list[int], offset: int, seed: int,
                  trained: bool = True, dtypes: tuple[str, ...] = ("float32", "float64")) -> pd.DataFrame:
    """The ``shift_changes`` table of one head over {length: tokens or (tokens, targets)}."""
    frames = []
    for length, value in sorted(token_sets.items()):
        tokens = value[0] if isinstance(value, (tuple, list)) else value  # (B, length)
        frames.append(shift_changes(model, tokens, shifts, dtypes))
    frame = pd.concat(frames, ignore_index=True)
    return frame.assign(pe=model.config.pe, offset=offset, seed=seed, trained=trained)


CHECKED = ("shift_changes",)


def untrained_encodings(settings: dict) -> list[str]:
    """The encodings of ``shift.pe_at_init`` the sweep does not train: measured at their seeded initialization."""
    return [pe for pe in settings["shift"]["pe_at_init"] if pe not in settings["sweep"]["pe"]]


def analyze(inputs: dict, settings: dict) -> dict[str, pd.DataFrame]:
    """The ``shift_changes`` table of one offset: the sweep's heads of that offset as trained, and every
    untrained encoding at its initialization under each sweep seed."""
    offset, config = settings["offset"], settings["shift"]
    eval_sets = inputs["eval_sets"][offset]
    token_sets = {length: eval_sets[length] for length in config["lengths"]}
    models = inputs["models"]
    changes = [measure_shift(model, token_sets, config["shifts"], offset, run["seed"]) for run, model in models]
    changes += [measure_shift(untrained_head(pe, seed=seed, **models.expected), token_sets, config["shifts"], offset,
                              seed, trained=False)
                for pe in untrained_encodings(settings) for seed in settings["sweep"]["seed"]]
    return {"shift_changes": pd.concat(changes, ignore_index=True)}


def checks(tables: dict[str, pd.DataFrame], settings: dict) -> list[dict]:
    return shift_checks(tables["shift_changes"], settings["offset"])


def shift_checks(changes: pd.DataFrame, offset: int) -> list[dict]:
    """rope invariant in float64, learned and sinusoidal not, at ``offset``.

    rope: the largest float64 attention-logit change over every seed, length and shift is
    <= ``ROPE_MAX_CHANGE``; a sanity check, since rope's logit is a function of q, k and the
    offset alone by construction, so only a bug (or float64 rounding far above its size) fails it.
    learned, sinusoidal, trained: for every seed, the largest float64 change over the defined shifts is
    >= ``ABSOLUTE_MIN_CHANGE`` (the statistic is the minimum over seeds). Evidence: that the logits move at all
    follows from the encoding being absolute, but by how much depends on what the head learned (a trained head
    could read its position rows weakly).
    The same encodings measured at their seeded init (``shift.pe_at_init``): sanity. Random weights reading an
    absolute encoding move its logits by the scale of the init, whatever the offset (sinusoidal: 1.70 at K = 1,
    2 and 3 in the committed run), so only a bug (positions that never reach the logit) keeps them within
    rounding; the check asks them to move by more than rope's rounding bound, ``ROPE_MAX_CHANGE`` (a learned
    table at a small init std need not reach the O(1) of a trained head: that is a setting, not a bug).
    An encoding missing from the table gives a check that does not hold. Each value is the largest or smallest
    over the seeds a resample draws (``seed_sums``), so the seed bootstrap resamples it as numbers.
    """
    cells = changes[(changes["offset"] == offset) & (changes["dtype"] == SHIFT_CLAIM_DTYPE)]
    rope = cells[cells["pe"] == "rope"]
    rows = [check("rope attention logits depend on relative offset alone",
                  "max over seeds, lengths and shifts of the float64 max abs attention logit change",
                  seed_sums.maximum(rope, "attention_logit_change"), "<=", ROPE_MAX_CHANGE,
                  offset=offset, kind="sanity", rule=f"<= {ROPE_MAX_CHANGE:g}{logit_size(rope)}")]
    for pe in SHIFT_ABSOLUTE_ENCODINGS:
        runs = cells[(cells["pe"] == pe) & cells["defined"]]
        largest_by_seed = runs.groupby("seed")["attention_logit_change"].max().reset_index()
        smallest = seed_sums.minimum(largest_by_seed, "attention_logit_change")
        claim = f"{pe} attention logits change under a position shift"
        statistic = ("min over seeds of the max over defined shifts and lengths of the float64 "
                     "max abs attention logit change")
        if len(runs) and not runs["trained"].any():
            rows.append(check(claim, statistic, smallest, ">", ROPE_MAX_CHANGE, offset=offset, kind="sanity",
                              rule=f"> {ROPE_MAX_CHANGE:g}, more than rounding (heads at their seeded init)"))
        else:
            rows.append(check(claim, statistic, smallest, ">=", trained_bar(runs), offset=offset,
                              rule=f">= {ABSOLUTE_MIN_CHANGE:g}{logit_size(runs)}"))
    return rows


def trained_bar(runs: pd.DataFrame) -> float | seed_sums.SeedSums:
    """The threshold of an encoding's evidence check (``runs``: its defined cells), ``ABSOLUTE_MIN_CHANGE``. Where
    only some of its seeds are trained (never in a run: ``analyze`` measures an encoding trained in every seed or at
    init in every seed), a resample that draws only untrained ones makes the check of heads at init, >
    ``ROPE_MAX_CHANGE``: as a threshold of seed sums beside the comparison >=, the next float above it."""
    if runs["trained"].all():
        return ABSOLUTE_MIN_CHANGE
    at_init_bar = np.nextafter(ROPE_MAX_CHANGE, np.inf)
    return seed_sums.combine(lambda trained: np.where(trained > 0, ABSOLUTE_MIN_CHANGE, at_init_bar),
                             seed_sums.total(runs, "trained"))


def logit_size(cells: pd.DataFrame) -> str:
    """`` (logits up to 12.3)``: the largest |attention logit| of the heads measured, the scale beside a change;
    nothing where none was measured."""
    return f" (logits up to {cells['attention_logit_scale'].max():.3g})" if len(cells) else ""
