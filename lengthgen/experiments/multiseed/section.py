"""The multiseed experiment's RESULTS.md section: every headline over seeds and offsets, and its checks."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.multiseed.headlines import HEADLINES


def summary_markdown(summary: pd.DataFrame) -> str:
    """One row per (headline, offset or all), the headlines in their experiments' order: runs, mean [95% CI], the
    rule, the share of runs meeting it."""
    order = {headline.name: position for position, headline in enumerate(HEADLINES)}
    summary = summary.sort_values("headline", key=lambda names: names.map(order), kind="stable")
    return pd.DataFrame({
        "headline": summary["headline"], "K": summary["offset"], "runs": summary["n_seeds"],
        "mean [95% CI]": [f"{row.mean:.3g} [{row.ci_low:.3g}, {row.ci_high:.3g}]" for row in summary.itertuples()],
        "threshold": [f"{row.comparison} {row.threshold:.3g}" for row in summary.itertuples()],
        "runs meeting it": summary["fraction_of_runs_meeting"].map("{:.0%}".format),
    }).to_markdown(index=False, disable_numparse=True)


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    return "\n\n".join([
        "## multiseed: every headline across seeds and offsets",
        "Each headline is one number per trained run (seed, offset), read from its experiment's table; "
        "mean and 95% Student-t interval over seeds per offset and over all runs (clipped to the value's range, "
        "e.g. [0, 1] for accuracies and shares). The check: every single "
        "run meets the threshold of its experiment's rule. Where a headline alone would be met by a head that "
        "learned nothing, its experiment's baseline is a headline of its own beside it: prop1's MAE (a head at "
        "chance has a small one) with its margin below the better trivial predictor's, frequency's top-4 share "
        "(untrained heads hold 0.36-0.76) with its margin over the same heads untrained, and a head at chance "
        "past the range (learned, linear arm 2) with its fit of the training range. All claims of every "
        "experiment, with their statistics and rules, are in `results/tables/claims.parquet`.",
        summary_markdown(tables["headline_summary"]),
        "![headlines across seeds and offsets](figures/multiseed_results.png)",
        checks_markdown(checks),
    ])
