"""Verdicts: each claim is a list of checks (statistic, value, rule, holds) fixed in advance.

An experiment's verdict is *confirmed* when every check holds, *not confirmed* when none
does, and *mixed* otherwise. Each experiment's module builds its checks with ``check``,
applying the thresholds of ``lengthgen.rules``.
"""

import pandas as pd

VERDICT_RULE = "confirmed if every check holds, not confirmed if none holds, mixed otherwise"

def check(experiment: str, claim: str, statistic: str, value: float, rule: str, holds: bool) -> dict:
    return {"experiment": experiment, "claim": claim, "statistic": statistic, "value": float(value),
            "rule": rule, "holds": bool(holds)}


def verdict(checks: pd.DataFrame) -> str:
    if checks["holds"].all():
        return "confirmed"
    if not checks["holds"].any():
        return "not confirmed"
    return "mixed"


def with_verdicts(checks: pd.DataFrame) -> pd.DataFrame:
    """Every experiment's checks, each with its experiment's verdict (the ``all_claims`` table)."""
    verdicts = checks.groupby("experiment", sort=False).apply(verdict, include_groups=False)
    return checks.assign(verdict=checks["experiment"].map(verdicts))


def checks_markdown(checks: pd.DataFrame) -> str:
    """The checks as a markdown table: claim, statistic, value, rule, holds."""
    lines = ["| claim | statistic | value | rule | holds |", "|---|---|---|---|---|"]
    for row in checks.itertuples():
        lines.append(f"| {row.claim} | {row.statistic} | {row.value:.4g} | {row.rule} | {'yes' if row.holds else 'no'} |")
    return "\n".join(lines)
