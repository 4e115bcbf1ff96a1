"""Shift equivariance (the ``shift_K<offset>`` experiments).

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

from lengthgen.claims import check
from lengthgen.model import AttentionHead, HeadConfig
from lengthgen.rules import ABSOLUTE_MIN_CHANGE, ROPE_MAX_CHANGE, SHIFT_ABSOLUTE_ENCODINGS, SHIFT_CLAIM_DTYPE
from lengthgen.training import init_head

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def experiment_name(offset: int) -> str:
    return f"shift_K{offset}"


def untrained_head(pe: str, vocab_size: int, d_model: int, trained_positions: int, seed: int,
                   rope_base: float = 1e4, learned_init_std: float = 0.02) -> AttentionHead:
    """A head at its seeded initialization (e.g. the sinusoidal reference when none was trained)."""
    return init_head(HeadConfig(vocab_size, d_model, pe, trained_positions, rope_base, learned_init_std), seed).eval()


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


def claims_shift(changes: pd.DataFrame, offset: int) -> pd.DataFrame:
    """Claim rows of ``shift_K<offset>``: rope invariant in float64, learned and sinusoidal not.

    rope: the largest float64 attention-logit change over every seed, length and shift is
    <= ``ROPE_MAX_CHANGE``. learned, sinusoidal: for every seed, the largest float64
    change over the defined shifts is >= ``ABSOLUTE_MIN_CHANGE`` (the statistic is the
    minimum over seeds). An encoding missing from the table gives a row that does not hold.
    """
    cells = changes[(changes["offset"] == offset) & (changes["dtype"] == SHIFT_CLAIM_DTYPE)]
    experiment = experiment_name(offset)
    rope = cells[cells["pe"] == "rope"]
    value = rope["attention_logit_change"].max() if len(rope) else math.nan
    statistic = "max over seeds, lengths and shifts of the float64 max abs attention logit change"
    rows = [check(experiment, f"K={offset}: rope attention logits depend on relative offset alone", statistic,
                  value, f"{statistic} <= {ROPE_MAX_CHANGE:g}", value <= ROPE_MAX_CHANGE)]
    statistic = ("min over seeds of the max over defined shifts and lengths of the float64 "
                 "max abs attention logit change")
    for pe in SHIFT_ABSOLUTE_ENCODINGS:
        runs = cells[(cells["pe"] == pe) & cells["defined"]]
        value = runs.groupby("seed")["attention_logit_change"].max().min() if len(runs) else math.nan
        rows.append(check(experiment, f"K={offset}: {pe} attention logits change under a position shift", statistic,
                          value, f"{statistic} >= {ABSOLUTE_MIN_CHANGE:g}", value >= ABSOLUTE_MIN_CHANGE))
    return pd.DataFrame(rows)


def _format(value: float, measured: bool) -> str:
    if not measured:
        return "-"  # this shift was not run for this encoding
    return "missing" if np.isnan(value) else f"{value:.2e}"


def summary_by_shift(changes: pd.DataFrame, offset: int, column: str = "attention_logit_change") -> pd.DataFrame:
    """Max over seeds and lengths of ``column`` (a logit change), per (pe, dtype) row and shift column.

    NaN where the shift is undefined for every seed and length (max() skips NaN), or not run.
    """
    cells = changes[changes["offset"] == offset]
    return cells.groupby(["pe", "dtype", "shift"])[column].max().unstack("shift")


def section_markdown(changes: pd.DataFrame, claims: pd.DataFrame, offset: int, figure: str | None = None) -> str:
    """The ``shift_K<offset>`` section of RESULTS.md, every number read from the tables."""
    figure = figure or f"shift_equivariance_K{offset}.png"
    cells = changes[changes["offset"] == offset]
    summary = summary_by_shift(changes, offset)
    measured = cells.groupby(["pe", "dtype", "shift"]).size().unstack("shift").reindex_like(summary).notna()
    shifts = list(summary.columns)
    states = cells.groupby("pe")["trained"].agg(lambda t: "trained" if t.all() else "at init" if not t.any() else "mixed")
    undefined = cells[~cells["defined"]]
    lines = [
        f"## {experiment_name(offset)}",
        "",
        "Every position id shifted by s; the largest absolute change of any attention logit against the "
        f"unshifted head (max over seeds {', '.join(map(str, sorted(cells['seed'].unique())))} and lengths "
        f"{', '.join(map(str, sorted(cells['length'].unique())))}), K={offset}. Heads: "
        + ", ".join(f"{pe} ({state})" for pe, state in states.items()) + ".",
        "",
        "| encoding | dtype | " + " | ".join(f"s={s}" for s in shifts) + " |",
        "|---|---|" + "---|" * len(shifts),
    ]
    for (pe, dtype), values in summary.iterrows():
        shown = (_format(value, ran) for value, ran in zip(values, measured.loc[(pe, dtype)]))
        lines.append(f"| {pe} | {dtype} | " + " | ".join(shown) + " |")
    if len(undefined):
        missing = undefined.groupby(["pe", "length"])["shift"].min()
        lines += ["", "missing: not defined, position ids past the table's rows: " + "; ".join(
            f"{pe} at length {length} for s >= {s}" for (pe, length), s in missing.items()) + "."]
    lines += ["", "| claim | rule | value | holds |", "|---|---|---|---|"]
    for row in claims.itertuples():
        rule = row.rule.replace("|", "\\|")  # a pipe would end the markdown cell
        lines.append(f"| {row.claim} | {rule} | {row.value:.3g} | {'yes' if row.holds else 'no'} |")
    lines += ["", f"![Logit change under a position shift, K={offset}](figures/{figure})", ""]
    return "\n".join(lines)
