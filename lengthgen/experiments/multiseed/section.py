"""The multiseed experiment's section: every headline over seeds and offsets, each run's value shown."""

import pandas as pd

from lengthgen.experiments.multiseed.headlines import HEADLINES


def summary_markdown(summary: pd.DataFrame) -> str:
    """One row per (headline, offset or all), the headlines in their experiments' order: runs, mean [95% CI], the
    rule, the share of runs meeting it."""
    order = {headline.name: position for position, headline in enumerate(HEADLINES)}
    summary = summary.sort_values("headline", key=lambda names: names.map(order), kind="stable")
    return pd.DataFrame({
        "headline": summary["headline"], "K": summary["offset"], "runs": summary["n_seeds"],
        "mean [95% CI]": [f"{row.mean:.3g} [{row.ci_low:.3g}, {row.ci_high:.3g}]" for row in summary.itertuples()],
        "threshold": [f"{row.comparison} {row.threshold:.3g}" if row.comparison else "-" for row in summary.itertuples()],
        "runs meeting it": summary["fraction_of_runs_meeting"].map(lambda share: "-" if pd.isna(share) else f"{share:.0%}"),
    }).to_markdown(index=False, disable_numparse=True)


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    return "\n\n".join([
        "## multiseed: every headline across seeds and offsets",
        "Each headline is one number per trained run (seed, offset), read from its experiment's table: a claim's "
        "primary statistic, its baseline or a number its page shows beside it. Mean and 95% Student-t interval over "
        "seeds per offset and over all runs (clipped to the value's range). Each claim's verdict is read from these "
        "numbers by its one rule, the mean over seeds per K against its threshold (see the claim's page); the share "
        "of single runs meeting a rule is the spread, shown here and counted in no verdict.",
        summary_markdown(tables["headline_summary"]),
        "![headlines across seeds and offsets](figures/multiseed_results.png)",
    ])
