"""The frequency experiment's RESULTS.md section: each rope head's kernel by rotary block, trained and at init,
the claim, its checks."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.frequency.thresholds import MIN_TOP4_SHARE

SUMMARY_COLUMNS = {"top1_share": "top-1 share", "top2_share": "top-2 share", "top4_share": "top-4 share",
                   "participation_ratio": "participation ratio", "entropy_rank": "entropy rank",
                   "top4_alignment": "top-4 alignment", "amplitude_alignment": "s(K) / sum A",
                   "singular_rank90": "singular values for 90% of squared norm of M"}


def spread_cell(values: pd.Series) -> str:
    return f"{values.mean():.3g} [{values.min():.3g}, {values.max():.3g}]"


def summary_markdown(summary: pd.DataFrame, untrained: pd.DataFrame) -> str:
    """Per offset and head state (trained, untrained): mean [min, max] over seeds of the key statistics."""
    states = pd.concat([summary.assign(head="trained"), untrained.assign(head="untrained")], ignore_index=True)
    rows = [{"K": offset, "head": head, "seeds": len(heads),
             "peak delta (all seeds)": ", ".join(str(peak) for peak in sorted(set(heads["peak_delta"]))),
             **{label: spread_cell(heads[column]) for column, label in SUMMARY_COLUMNS.items()}}
            for (offset, head), heads in states.groupby(["offset", "head"], sort=True)]
    # The cells are formatted already: tabulate must not read "0.950" back as a number and print it otherwise.
    return pd.DataFrame(rows).to_markdown(index=False, disable_numparse=True)


def untrained_share_markdown(untrained: pd.DataFrame) -> str:
    """Per offset: the distribution of the top-4 share over the untrained heads, against the absolute bar."""
    parts = [f"K={offset}: median {heads['top4_share'].median():.3g}, largest {heads['top4_share'].max():.3g}, "
             f"{int((heads['top4_share'] >= MIN_TOP4_SHARE).sum())} of {len(heads)} >= {MIN_TOP4_SHARE:g}"
             for offset, heads in untrained.groupby("offset", sort=True)]
    return ("Top-4 share of the untrained heads, which no training concentrated: " + "; ".join(parts) + ". "
            "So the share counts as learned only when, besides reaching the bar, every trained head holds more "
            "than every untrained one of the same seeds (the check on the lowest trained share minus the "
            "highest untrained).")


def peak_offsets_markdown(summary: pd.DataFrame) -> str:
    """Per offset: each trained seed's peak delta, and the seeds whose kernel peaks elsewhere than at K."""
    parts = []
    for offset, heads in summary.sort_values("seed").groupby("offset", sort=True):
        elsewhere = heads[heads["peak_delta"] != offset]
        off_peak = (", ".join(f"seed {row.seed} at {row.peak_delta}" for row in elsewhere.itertuples())
                    if len(elsewhere) else "none")
        parts.append(f"K={offset}: {', '.join(map(str, heads['peak_delta']))} (peaking elsewhere than K: {off_peak})")
    return ("**Where each trained kernel peaks** (peak delta per seed, in seed order): " + "; ".join(parts) + ".")


def rank_markdown(summary: pd.DataFrame, untrained: pd.DataFrame) -> str:
    """The singular values M needs for 90% of its squared norm, trained against untrained: whether "low rank" is
    what training did."""
    trained_mean, untrained_mean = summary["singular_rank90"].mean(), untrained["singular_rank90"].mean()
    effect = ("Training does not lower the rank of the position kernel" if trained_mean >= untrained_mean else
              "Training lowers the rank of the position kernel")
    return (f"**Rank.** M needs {summary['singular_rank90'].min()}-{summary['singular_rank90'].max()} singular values "
            f"for 90% of its squared norm in the trained heads (mean {trained_mean:.1f}), "
            f"{untrained['singular_rank90'].min()}-{untrained['singular_rank90'].max()} in the same heads untrained "
            f"(mean {untrained_mean:.1f}). {effect}; what the checks below measure is whether training concentrates "
            "the kernel's energy in a few rotary blocks and aligns them with K, which is what the paper's "
            "\"low-rank carrier\" is taken to mean here.")


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    summary, untrained = tables["frequency_summary"], tables["frequency_untrained_summary"]
    train_length_max = settings["task"]["train_length_max"]
    n_blocks = int(summary["n_blocks"].iloc[0])
    return "\n\n".join([
        "## frequency: the learned rule's energy in a few frequency blocks, aligned with K",
        f"For each trained RoPE head the content-averaged logit kernel is, exactly, "
        f"s(delta) = sum_i A_i cos(delta theta_i + phi_i) over its {n_blocks} rotary blocks, with A_i exp(i phi_i) "
        "the product of the mean query and the conjugate mean key in block i (divided by sqrt(D)). "
        "Energy share p_i = A_i^2 / sum A^2; alignment cos(K theta_i + phi_i) (1: the block peaks at delta = K); "
        "effective ranks: participation ratio 1 / sum p_i^2 and entropy rank exp(H(p)); "
        "top-4 alignment is energy-weighted over the 4 most energetic blocks; s(K) / sum A is 1 when every block "
        "peaks at K. Peak delta: argmax of s over delta in 0.."
        f"{train_length_max - 1}. Singular values are those of M[m, n] = s(m - n) over positions "
        f"0..{train_length_max - 1}. "
        "Cells: mean [min, max] over seeds. Untrained: the same heads at their seeded initialization "
        "(`training.init_head` at each run's seed), decomposed the same way: the baseline the trained values "
        "are to be read against.",
        summary_markdown(summary, untrained),
        peak_offsets_markdown(summary),
        rank_markdown(summary, untrained),
        untrained_share_markdown(untrained),
        "![frequency decomposition](figures/frequency_rank.png)",
        "**Claim** (the paper's words: a low-rank carrier aligned with K; as measured: the kernel's energy "
        f"concentrated in its 4 most energetic of {n_blocks} rotary blocks, {4 / n_blocks:.0%} of them, more than in "
        "any of the same heads untrained, and those blocks aligned with K). The bar counts 4 blocks at every width, "
        "so a wider head, whose energy spreads over more blocks, is held to a larger share of its own blocks' "
        "energy than a narrower one.",
        checks_markdown(checks),
    ])
