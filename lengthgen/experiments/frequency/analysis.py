"""frequency: decompose a rotary head's content-averaged logit kernel into its frequency blocks.

Averaged over uniform query and key tokens, the kernel is exactly a sum over the D/2 rotary blocks

    s(delta) = sum_i A_i cos(delta theta_i + phi_i),   A_i exp(i phi_i) = mean(zq)_i conj(mean(zk)_i) / sqrt(D)

(``lengthgen.science.kernel``). Per block: energy A_i^2 and its share of the total; alignment
cos(K theta_i + phi_i), which is 1 when the block peaks at delta = K. Per head: the share
held by the top 1/2/4 blocks and by the top ``top_block_count`` (max(1, D/16)), the blocks its checks
judge; two effective ranks of the energy shares p_i, the participation ratio 1 / sum p_i^2 and the
entropy rank exp(-sum p_i log p_i); the energy-weighted alignment of the top blocks; and the singular
values of the position
kernel matrix M[m, n] = s(m - n) for query and key positions m, n in 0..L-1 (L the longest
training length; entries with m < n use the same cosine sum), whose rank is at most twice
the number of blocks with nonzero energy.
"""

import numpy as np
import pandas as pd
import torch

from lengthgen.checks import seed_sums
from lengthgen.checks.check import check
from lengthgen.science.kernel import cosine_sum, mean_block_coefficients, rotary_blocks
from lengthgen.models.head import AttentionHead
from lengthgen.experiments.frequency.thresholds import (DIMENSIONS_PER_TOP_BLOCK, MIN_SHARE_MARGIN_OVER_UNTRAINED,
                                                        MIN_TOP_ALIGNMENT, MIN_TOP_SHARE)
from lengthgen.training.loop import init_head

# Fixed counts of most energetic blocks whose shares the summary reports at every width (the transformer's carrier
# checks read its top 4); the checks here judge the top ``top_block_count`` blocks, a count that grows with the width.
TOP_BLOCKS = (1, 2, 4)
SINGULAR_SHARE = 0.9  # singular_rank90: how many singular values hold this share of ||M||_F^2


def block_spectrum(coefficients: torch.Tensor, theta: torch.Tensor, offset: int) -> pd.DataFrame:
    """Per block: theta, amplitude, phase, energy, energy_share, energy_rank (0 = largest), alignment.

    ``coefficients`` (D/2,) complex are A_i exp(i phi_i); ``theta`` (D/2,) the block frequencies.
    """
    amplitude = coefficients.abs().numpy()
    phase = coefficients.angle().numpy()
    energy = amplitude**2
    total = energy.sum()
    order = np.argsort(-energy, kind="stable")
    rank = np.empty(len(energy), dtype=int)
    rank[order] = np.arange(len(energy))
    return pd.DataFrame({
        "block": np.arange(len(energy)), "theta": theta.numpy(), "amplitude": amplitude, "phase": phase,
        "energy": energy, "energy_share": energy / total if total > 0 else np.full(len(energy), np.nan),
        "energy_rank": rank, "alignment": np.cos(offset * theta.numpy() + phase),
    })


def top_block_count(n_blocks: int) -> int:
    """How many of a head's ``n_blocks`` = D/2 rotary blocks its checks judge: max(1, D / DIMENSIONS_PER_TOP_BLOCK)."""
    return max(1, 2 * n_blocks // DIMENSIONS_PER_TOP_BLOCK)


def top_share(spectrum: pd.DataFrame, n_top: int) -> float:
    """Share of the energy held by the ``n_top`` most energetic blocks."""
    return float(spectrum.loc[spectrum["energy_rank"] < n_top, "energy_share"].sum())


def participation_ratio(shares) -> float:
    """1 / sum p_i^2: the number of equally energetic blocks with the same concentration."""
    shares = np.asarray(shares, dtype=float)
    return float(1.0 / np.sum(shares**2))


def entropy_rank(shares) -> float:
    """exp(-sum p_i log p_i), with 0 log 0 = 0."""
    shares = np.asarray(shares, dtype=float)
    positive = shares[shares > 0]
    return float(np.exp(-np.sum(positive * np.log(positive))))


def top_alignment(spectrum: pd.DataFrame, n_top: int) -> float:
    """Energy-weighted mean alignment cos(K theta_i + phi_i) of the ``n_top`` most energetic blocks."""
    top = spectrum[spectrum["energy_rank"] < n_top]
    return float((top["energy"] * top["alignment"]).sum() / top["energy"].sum())


def amplitude_alignment(spectrum: pd.DataFrame) -> float:
    """s(K) / sum A_i: how close the kernel at K is to its largest possible value (1 = all blocks peak at K)."""
    return float((spectrum["amplitude"] * spectrum["alignment"]).sum() / spectrum["amplitude"].sum())


def position_kernel_matrix(coefficients: torch.Tensor, theta: torch.Tensor, length: int) -> torch.Tensor:
    """M[m, n] = s(m - n) for positions m, n in 0..length-1. (length, length) float64."""
    deltas = torch.arange(-(length - 1), length)  # (2L - 1,)
    kernel = cosine_sum(coefficients, theta, deltas)  # (2L - 1,)
    positions = torch.arange(length)
    return kernel[positions[:, None] - positions[None, :] + length - 1]


def singular_values(matrix: torch.Tensor) -> pd.DataFrame:
    """index, singular_value, energy_share (sigma_j^2 / sum sigma^2), largest first."""
    sigma = torch.linalg.svdvals(matrix).numpy()
    squared = sigma**2
    return pd.DataFrame({"index": np.arange(len(sigma)), "singular_value": sigma,
                         "energy_share": squared / squared.sum() if squared.sum() > 0 else np.nan})


def rank_for_share(shares, share: float) -> int:
    """The fewest leading entries of ``shares`` (sorted, largest first) whose sum reaches ``share``."""
    cumulative = np.cumsum(np.asarray(shares, dtype=float))
    return int(np.searchsorted(cumulative, share - 1e-12) + 1)


def analyze_coefficients(coefficients: torch.Tensor, theta: torch.Tensor, offset: int,
                         train_length_max: int) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    """(blocks table, summary row, singular values) of one content-averaged kernel."""
    spectrum = block_spectrum(coefficients, theta, offset)
    training_kernel = cosine_sum(coefficients, theta, torch.arange(train_length_max))  # (L,)
    singular = singular_values(position_kernel_matrix(coefficients, theta, train_length_max))
    n_top = top_block_count(len(spectrum))
    summary = {
        "n_blocks": len(spectrum),
        **{f"top{n}_share": top_share(spectrum, n) for n in TOP_BLOCKS},
        "top_blocks": n_top,
        "top_share": top_share(spectrum, n_top),
        "top_alignment": top_alignment(spectrum, n_top),
        "participation_ratio": participation_ratio(spectrum["energy_share"]),
        "entropy_rank": entropy_rank(spectrum["energy_share"]),
        "top1_alignment": top_alignment(spectrum, 1),
        "top4_alignment": top_alignment(spectrum, 4),
        "amplitude_alignment": amplitude_alignment(spectrum),
        "peak_delta": int(training_kernel.argmax()),
        "singular_rank90": rank_for_share(singular["energy_share"], SINGULAR_SHARE),
    }
    return spectrum, summary, singular


def analyze_head(model: AttentionHead, offset: int, seed: int,
                 train_length_max: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One trained rotary head's rows of frequency_blocks, frequency_summary, frequency_singular_values."""
    blocks = rotary_blocks(model)
    spectrum, summary, singular = analyze_coefficients(mean_block_coefficients(blocks), blocks.theta, offset,
                                                       train_length_max)
    keys = {"offset": offset, "seed": seed}
    return spectrum.assign(**keys), pd.DataFrame([{**keys, **summary}]), singular.assign(**keys)


def analyze(inputs: dict, settings: dict) -> dict[str, pd.DataFrame]:
    """Every trained rope head of the sweep, and the same head at its seeded initialization (the baseline)."""
    train_length_max = settings["task"]["train_length_max"]
    per_head, at_init = [], []
    for run, model in inputs["models"]:
        per_head.append(analyze_head(model, run["offset"], run["seed"], train_length_max))
        at_init.append(analyze_head(init_head(model.config, run["seed"]), run["offset"], run["seed"],
                                    train_length_max)[1])
    blocks, summary, singular = (pd.concat(parts, ignore_index=True) for parts in zip(*per_head))
    return {"frequency_blocks": blocks, "frequency_summary": summary,
            "frequency_untrained_summary": pd.concat(at_init, ignore_index=True),
            "frequency_singular_values": singular}


CHECKED = ("frequency_summary", "frequency_untrained_summary")


def checks(tables: dict[str, pd.DataFrame], settings: dict) -> list[dict]:
    return frequency_checks(tables["frequency_summary"], tables["frequency_untrained_summary"])


CLAIM = "the learned rule concentrates its energy in a few frequency blocks, aligned with K"
TOP_SHARE = "lowest energy share of the top D/16 rotary blocks over seeds"


def frequency_checks(summary: pd.DataFrame, untrained: pd.DataFrame) -> list[dict]:
    """Per offset, over every seed: the top ``top_blocks`` blocks (max(1, D/16)) hold >= ``MIN_TOP_SHARE`` of the
    energy, and more of it than in any of the same heads untrained (``untrained``: their summaries at init, the
    same width; ``share_over_untrained``); their energy-weighted alignment with K is >= ``MIN_TOP_ALIGNMENT`` (the
    worst seed is the value). Each rule text names how many blocks of how many and the range the same heads had
    untrained."""
    rows = []
    for offset, heads in summary.groupby("offset", sort=True):
        at_init = untrained[untrained["offset"] == offset]
        blocks = f"top {int(heads['top_blocks'].iloc[0])} of {int(heads['n_blocks'].iloc[0])} blocks"

        def rule(threshold: float, column: str) -> str:
            return (f">= {threshold:g} ({blocks}; untrained: {at_init[column].min():.3g} to "
                    f"{at_init[column].max():.3g}; {len(heads)} seeds)")

        rows += [
            check(CLAIM, TOP_SHARE, seed_sums.minimum(heads, "top_share"), ">=", MIN_TOP_SHARE, offset=offset,
                  rule=rule(MIN_TOP_SHARE, "top_share")),
            share_over_untrained(CLAIM, f"{TOP_SHARE} minus the highest of the same heads untrained", heads, at_init,
                                 "top_share", offset),
            check(CLAIM, "lowest energy-weighted alignment cos(K theta + phi) of the top D/16 blocks over seeds",
                  seed_sums.minimum(heads, "top_alignment"), ">=", MIN_TOP_ALIGNMENT, offset=offset,
                  rule=rule(MIN_TOP_ALIGNMENT, "top_alignment")),
        ]
    return rows


def share_over_untrained(claim: str, statistic: str, trained: pd.DataFrame, untrained: pd.DataFrame, column: str,
                         offset: int) -> dict:
    """The check that training raised a statistic (``column``, a top-blocks share): its lowest trained value over the
    seeds minus its highest value in the same heads at init exceeds ``MIN_SHARE_MARGIN_OVER_UNTRAINED``, so every
    trained head is above every untrained one (by chance at most 2^-n over n seeds; thresholds.py). It sets one
    seed's trained head against another's init, which one seed alone cannot: not counted per seed. Both extremes
    are over the seeds a resample draws (``trained`` and ``untrained``: rows with their seeds)."""
    # Seeds, not rows: a transformer seed can have several retrieving heads.
    n_seeds, values, at_init = trained["seed"].nunique(), trained[column], untrained[column]
    return check(claim, statistic, seed_sums.minimum(trained, column) - seed_sums.maximum(untrained, column), ">",
                 MIN_SHARE_MARGIN_OVER_UNTRAINED, offset=offset, per_seed=False,
                 rule=f"> {MIN_SHARE_MARGIN_OVER_UNTRAINED:g} (trained: {values.min():.3g} to {values.max():.3g}; "
                      f"untrained: {at_init.min():.3g} to {at_init.max():.3g}; {n_seeds} seeds, "
                      f"by chance <= 2^-{n_seeds} = {2.0 ** -n_seeds:.2g})")
