"""The frequency experiment's RESULTS.md section: each rope head's kernel by rotary block, trained and at init,
the claim, its checks."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.frequency.thresholds import MIN_TOP_ALIGNMENT, MIN_TOP_SHARE


def summary_columns(n_top: int) -> dict[str, str]:
    """The summary statistics the page shows, column -> label; ``n_top``: how many blocks the checks judge."""
    return {"top1_share": "top-1 share", "top2_share": "top-2 share", "top_share": f"top-{n_top} share (D/16)",
            "participation_ratio": "participation ratio", "entropy_rank": "entropy rank",
            "top_alignment": f"top-{n_top} alignment", "amplitude_alignment": "s(K) / sum A",
            "singular_rank90": "singular values for 90% of squared norm of M"}


def spread_cell(values: pd.Series) -> str:
    return f"{values.mean():.3g} [{values.min():.3g}, {values.max():.3g}]"


def summary_markdown(summary: pd.DataFrame, untrained: pd.DataFrame) -> str:
    """Per offset and head state (trained, untrained): mean [min, max] over seeds of the key statistics."""
    states = pd.concat([summary.assign(head="trained"), untrained.assign(head="untrained")], ignore_index=True)
    columns = summary_columns(top_blocks(summary))
    rows = [{"K": offset, "head": head, "seeds": len(heads),
             "peak delta (all seeds)": ", ".join(str(peak) for peak in sorted(set(heads["peak_delta"]))),
             **{label: spread_cell(heads[column]) for column, label in columns.items()}}
            for (offset, head), heads in states.groupby(["offset", "head"], sort=True)]
    # The cells are formatted already: tabulate must not read "0.950" back as a number and print it otherwise.
    return pd.DataFrame(rows).to_markdown(index=False, disable_numparse=True)


def top_blocks(summary: pd.DataFrame) -> int:
    """How many blocks the checks judge: one count per run, as its heads have one width."""
    counts = summary["top_blocks"].unique()
    if len(counts) != 1:
        raise ValueError(f"frequency_summary: heads of one run judge different numbers of top blocks: {sorted(counts)}")
    return int(counts[0])


def untrained_share_markdown(untrained: pd.DataFrame) -> str:
    """Per offset: the distribution of the top-blocks share over the untrained heads, against the absolute bar."""
    parts = [f"K={offset}: median {heads['top_share'].median():.3g}, largest {heads['top_share'].max():.3g}, "
             f"{int((heads['top_share'] >= MIN_TOP_SHARE).sum())} of {len(heads)} >= {MIN_TOP_SHARE:g}"
             for offset, heads in untrained.groupby("offset", sort=True)]
    return (f"Top-{top_blocks(untrained)} share of the untrained heads, which no training concentrated: "
            + "; ".join(parts) + ". "
            "So the share counts as learned only when, besides reaching the bar, every trained head holds more "
            "than every untrained one of the same seeds (the check on the lowest trained share minus the "
            "highest untrained).")


def peak_offsets_markdown(summary: pd.DataFrame) -> str:
    """Per offset: each trained seed's peak offset (``peak_delta``), and the seeds whose kernel peaks elsewhere
    than at K."""
    parts = []
    for offset, heads in summary.sort_values("seed").groupby("offset", sort=True):
        elsewhere = heads[heads["peak_delta"] != offset]
        off_peak = (", ".join(f"seed {row.seed} at {row.peak_delta}" for row in elsewhere.itertuples())
                    if len(elsewhere) else "none")
        parts.append(f"K={offset}: {', '.join(map(str, heads['peak_delta']))} (peaking elsewhere than K: {off_peak})")
    return ("**Where each trained kernel peaks** (its peak offset, column `peak_delta`, per seed in seed order): "
            + "; ".join(parts) + ".")


def rank_markdown(summary: pd.DataFrame, untrained: pd.DataFrame) -> str:
    """The singular values M needs for 90% of its squared norm, trained against untrained: whether "low rank" is
    what training did (the paper's word, which the claim here does not use)."""
    trained_mean, untrained_mean = summary["singular_rank90"].mean(), untrained["singular_rank90"].mean()
    effect = ("Training does not lower the rank of the position kernel" if trained_mean >= untrained_mean else
              "Training lowers the rank of the position kernel")
    return (f"**Rank.** M needs {summary['singular_rank90'].min()}-{summary['singular_rank90'].max()} singular values "
            f"for 90% of its squared norm in the trained heads (mean {trained_mean:.1f}), "
            f"{untrained['singular_rank90'].min()}-{untrained['singular_rank90'].max()} in the same heads untrained "
            f"(mean {untrained_mean:.1f}). {effect}. The claim tested here is not the paper's \"low-rank carrier\" "
            "but what the blocks can show: whether training concentrates the kernel's energy in a few rotary blocks "
            "and aligns them with K.")


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    summary, untrained = tables["frequency_summary"], tables["frequency_untrained_summary"]
    train_length_max = settings["task"]["train_length_max"]
    n_blocks, n_top = int(summary["n_blocks"].iloc[0]), top_blocks(summary)
    return "\n\n".join([
        "## frequency: the learned rule's energy in a few frequency blocks, aligned with K",
        f"For each trained RoPE head the content-averaged logit kernel is, exactly, "
        f"s(delta) = sum_i A_i cos(delta theta_i + phi_i) over its {n_blocks} rotary blocks, with A_i exp(i phi_i) "
        "the product of the mean query and the conjugate mean key in block i (divided by sqrt(D)). "
        "Energy share p_i = A_i^2 / sum A^2; alignment cos(K theta_i + phi_i) (1: the block peaks at delta = K); "
        "effective ranks: participation ratio 1 / sum p_i^2 and entropy rank exp(H(p)); "
        f"the top-{n_top} share and alignment are over the {n_top} most energetic blocks, max(1, D/16) of the D/2 "
        "(the alignment energy-weighted); s(K) / sum A is 1 when every block peaks at K. Peak delta: argmax of s "
        f"over delta in 0..{train_length_max - 1}. Singular values are those of M[m, n] = s(m - n) over positions "
        f"0..{train_length_max - 1}. "
        "Cells: mean [min, max] over seeds. Untrained: the same heads at their seeded initialization "
        "(`training.init_head` at each run's seed), decomposed the same way: the baseline the trained values "
        "are to be read against.",
        summary_markdown(summary, untrained),
        peak_offsets_markdown(summary),
        rank_markdown(summary, untrained),
        untrained_share_markdown(untrained),
        "![frequency decomposition](figures/frequency_rank.png)",
        "**Claim**: the learned rule concentrates its energy in a few frequency blocks, aligned with K (the paper "
        "calls it a low-rank carrier; the rank above is why that word is not tested). As measured: the energy share "
        f"of the top {n_top} of its {n_blocks} rotary blocks (max(1, D/16), an eighth of them at every width) is at "
        f"least {MIN_TOP_SHARE:g}, above that of any of the same heads untrained (the same width), and their "
        f"energy-weighted alignment with K is at least {MIN_TOP_ALIGNMENT:g}.",
        checks_markdown(checks),
    ])
