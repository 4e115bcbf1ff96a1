"""The multiseed page: every headline over seeds and offsets."""

import pandas as pd

from lengthgen.experiments.multiseed.headlines import HEADLINES
from lengthgen.experiments.sections import interval, markdown, written


def summary_markdown(summary: pd.DataFrame) -> str:
    """One row per (headline, K or all), in the experiments' order: runs, mean [95% CI], rule, runs meeting it."""
    order = {headline.name: position for position, headline in enumerate(HEADLINES)}
    summary = summary.sort_values("headline", key=lambda names: names.map(order), kind="stable")
    return markdown(pd.DataFrame({
        "headline": summary["headline"], "K": summary["offset"], "runs": summary["n_seeds"],
        "mean [95% CI]": [interval(row.mean, row.ci_low, row.ci_high, ".3g") for row in summary.itertuples()],
        "threshold": [f"{row.comparison} {row.threshold:.3g}" if row.comparison else "-"
                      for row in summary.itertuples()],
        "runs meeting it": summary["fraction_of_runs_meeting"].map(lambda share: written(share, "{:.0%}"))}))


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    return "\n\n".join([
        "## multiseed: every headline across seeds and offsets",
        "Each headline is one number per trained run (seed, offset): a claim's primary statistic, its baseline or a "
        "number its page shows beside it. Mean and 95% Student-t interval over seeds per K and over all runs. A "
        "claim is judged on its mean over seeds per K (see its page); how many single runs meet the rule is shown "
        "as the spread, and counts in no verdict.",
        summary_markdown(tables["headline_summary"]),
        "![headlines across seeds and offsets](figures/multiseed_results.png)",
    ])
