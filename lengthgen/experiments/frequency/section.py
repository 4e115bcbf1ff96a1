"""The frequency page: each rope head's kernel by rotary block, trained and at init; the claim, its checks."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.frequency.thresholds import MIN_TOP_ALIGNMENT, MIN_TOP_SHARE
from lengthgen.experiments.sections import listed, markdown, spread


def top_blocks(summary: pd.DataFrame) -> int:
    """How many blocks the checks judge: one count per run, as its heads have one width."""
    counts = summary["top_blocks"].unique()
    if len(counts) != 1:
        raise ValueError(f"frequency_summary: heads of one run judge different numbers of top blocks: {sorted(counts)}")
    return int(counts[0])


def summary_markdown(summary: pd.DataFrame, untrained: pd.DataFrame) -> str:
    """Per K and head state (trained, untrained): mean [min, max] over seeds of the block statistics."""
    n_top = top_blocks(summary)
    columns = {"top1_share": "top-1 share", "top2_share": "top-2 share", "top_share": f"top-{n_top} share (D/16)",
               "participation_ratio": "participation ratio", "entropy_rank": "entropy rank",
               "top_alignment": f"top-{n_top} alignment", "amplitude_alignment": "s(K) / sum A",
               "singular_rank90": "singular values for 90% of M"}
    states = pd.concat([summary.assign(head="trained"), untrained.assign(head="untrained")], ignore_index=True)
    return markdown(pd.DataFrame([{"K": offset, "head": head, "seeds": len(heads),
                                   **{label: spread(heads[column]) for column, label in columns.items()}}
                                  for (offset, head), heads in states.groupby(["offset", "head"], sort=True)]))


def peaks_markdown(summary: pd.DataFrame) -> str:
    """Each trained seed's peak offset per K, and the seeds whose kernel peaks elsewhere than at K."""
    parts = []
    for offset, heads in summary.sort_values("seed").groupby("offset", sort=True):
        elsewhere = heads[heads["peak_delta"] != offset]
        named = ", ".join(f"seed {row.seed} at {row.peak_delta}" for row in elsewhere.itertuples()) or "none"
        parts.append(f"K={offset}: {listed(heads['peak_delta'])} (peaking elsewhere than K: {named})")
    return "**Where each trained kernel peaks**, per seed in seed order: " + "; ".join(parts) + "."


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    summary, untrained = tables["frequency_summary"], tables["frequency_untrained_summary"]
    n_blocks, n_top = int(summary["n_blocks"].iloc[0]), top_blocks(summary)
    lowered = summary["singular_rank90"].mean() < untrained["singular_rank90"].mean()
    return "\n\n".join([
        "## frequency: the learned rule's energy in a few frequency blocks, aligned with K",
        "Each trained RoPE head's content-averaged logit kernel is exactly s(delta) = sum_i A_i cos(delta theta_i + "
        f"phi_i) over its {n_blocks} rotary blocks. Block i's energy share is A_i^2 / sum A^2 and its alignment "
        "cos(K theta_i + phi_i) (1: it peaks at delta = K); s(K) / sum A is 1 when every block peaks at K; M[m, n] = "
        "s(m - n) over the training positions. Untrained: the same heads at their seeded init, of the same width. "
        "Cells: mean [min, max] over seeds.",
        summary_markdown(summary, untrained),
        peaks_markdown(summary),
        f"**Rank.** Training {'lowers' if lowered else 'does not lower'} the rank of the position kernel (the last "
        "column), so the claim tested is not the paper's \"low-rank carrier\" but what the blocks show.",
        "![frequency decomposition](figures/frequency_rank.png)",
        f"**What the checks test**: whether the top {n_top} of {n_blocks} blocks (max(1, D/16)) hold at least "
        f"{MIN_TOP_SHARE:g} of the energy, more than every untrained head of the same width, with an energy-weighted "
        f"alignment with K of at least {MIN_TOP_ALIGNMENT:g}.",
        checks_markdown(checks),
    ])
