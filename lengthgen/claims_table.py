"""The claims table of RESULTS.md's first screen: one short row per claim, each cell read from the tables.

Per claim of ``findings.FINDINGS``, from the ``all_claims`` table joined row for row with ``claim_spread``:

- *claim*: the claim in a few words (``Finding.short``);
- *measured*: what its headline number is, with its unit (``Headline.measured``);
- *value*: the headline check at the offset that decides it (``findings.deciding_check``): its value, its seed
  bootstrap's 95% interval and its number of seeds, ``0.684 [0.584, 0.777] (n=10), K=1``;
- *baseline*: what the number is set against (``Headline.baseline``): chance (1 / V), the same heads untrained
  (as the check's rule states it), the rival account's or the rival head's value;
- *rule*: the headline check's threshold and when its experiment's rules were fixed (``rule_history.rule_timing``);
- *verdict*: the row's verdict (``findings.row_verdict``, in ``lengthgen.verdicts``' words) and how many of its
  evidence checks hold;
- *replication*: in how many confirmation runs every one of its evidence checks replicates, ``2 of 3 runs``;
- *robustness*: the hook for a robustness study: ``robustness`` maps a claim's name (``Finding.name``) to
  (points where it holds, points tested), rendered ``holds at 11 of 12 points``; *not run* without it;
- *page*: the link to its page.

Torch-free and pure: tables and plain data in, a table of strings out.
"""

import re
from collections.abc import Mapping

import pandas as pd

from lengthgen.findings import (CHANCE, FINDINGS, NO_CONFIRMATION, NOT_TESTED, RIVAL, REST, UNTRAINED, Finding,
                                Headline, counted_checks, deciding_check, replicates_in_run, row_verdict, selections)
from lengthgen.robustness.points import DEFAULT_POINT
from lengthgen.rule_history import rule_timing
from lengthgen.verdicts import HOLDS

NOT_RUN = "not run"
COLUMNS = ["claim", "measured", "value [95% interval] (n)", "baseline", "rule (fixed)", "verdict", "replication",
           "robustness", "page"]
# The same statistic on untrained heads, as a check's rule states it: ``untrained heads: 0.012`` or
# ``untrained: 0.461 to 0.747``.
UNTRAINED_IN_RULE = re.compile(r"untrained[^:;]*: ([-+]?[0-9.]+(?:e-?[0-9]+)?)(?: to ([-+]?[0-9.]+(?:e-?[0-9]+)?))?")


def number(value: float) -> str:
    """Three significant digits: the precision every cell of the first screen gives."""
    return f"{value:.3g}"


def headline_rows(headline: Headline, claims: pd.DataFrame) -> pd.DataFrame:
    return claims[(claims["experiment"] == headline.experiment) & (claims["claim"] == headline.claim)
                  & (claims["statistic"] == headline.statistic)]


def headline_check(headline: Headline, claims: pd.DataFrame) -> pd.Series | None:
    """The headline's check at the offset that decides it; None where it was not measured."""
    rows = headline_rows(headline, claims)
    return None if rows.empty else deciding_check(rows)


def value_cell(check: pd.Series) -> str:
    where = "" if pd.isna(check["offset"]) else f", K={int(check['offset'])}"
    return (f"{number(check['value'])} [{number(check['spread_low'])}, {number(check['spread_high'])}] "
            f"(n={int(check['n_seeds'])}){where}")


def baseline_cell(headline: Headline, check: pd.Series, claims: pd.DataFrame, vocab_size: int) -> str:
    if headline.baseline == CHANCE:
        return f"chance {number(1 / vocab_size)}"
    if headline.baseline == UNTRAINED:
        found = UNTRAINED_IN_RULE.search(check["rule"])
        if found is None:
            raise ValueError(f"headline {headline.claim!r}: its rule {check['rule']!r} states no untrained value")
        low, high = found.groups()
        return f"untrained {low}" + (f" to {high}" if high else "")
    if headline.baseline == RIVAL:
        claim, statistic = headline.rival
        rival = claims[(claims["experiment"] == headline.experiment) & (claims["claim"] == claim)
                       & (claims["statistic"] == statistic)]
        rival = rival[rival["offset"].isna()] if pd.isna(check["offset"]) else rival[rival["offset"] == check["offset"]]
        return f"{headline.label} {number(rival['value'].iloc[0])}" if not rival.empty else f"{headline.label}: {NOT_RUN}"
    if headline.baseline == REST:
        return f"{headline.label} {number(1 - check['value'])}"
    return "-"


def rule_cell(headline: Headline, check: pd.Series) -> str:
    return f"{check['comparison']} {number(check['threshold'])}, {rule_timing(headline.experiment)}"


def verdict_cell(finding: Finding, claims: pd.DataFrame) -> str:
    selected = selections(finding, claims)
    checks = counted_checks(selected, claims)
    evidence = checks[checks["kind"] == "evidence"]
    found = row_verdict(selected, claims)
    return found if evidence.empty else f"{found} ({int(evidence['holds'].sum())} of {len(evidence)} checks)"


def replication_cell(finding: Finding, claims: pd.DataFrame, replication: pd.DataFrame | None) -> str:
    if replication is None:
        return NO_CONFIRMATION
    in_run = replicates_in_run(counted_checks(selections(finding, claims), claims), replication)
    return f"{int(in_run.sum())} of {len(in_run)} runs" if len(in_run) else "not compared"


def robustness_of_findings(study: pd.DataFrame, claims: pd.DataFrame,
                           findings: tuple[Finding, ...] = FINDINGS) -> dict[str, tuple[int, int]]:
    """Per claim the robustness study tests whole: (points at which its verdict holds, points). ``study``: the
    ``robustness_checks`` table (a point's checks, this run's as the default point among them); a claim's verdict
    at a point is ``findings.row_verdict`` of its checks there, the rule of its row in the claims table. A claim
    is left out where the study runs only some of the experiments it is decided on (fewer of its counted checks at
    the default point than in ``claims``, this run's): its verdict there would rest on a part of its evidence."""
    robustness = {}
    by_point = {point: study[study["point"] == point] for point in dict.fromkeys(study["point"])}
    for finding in findings:
        counted = counted_checks(selections(finding, claims), claims)
        at_default = by_point.get(DEFAULT_POINT, study.iloc[:0])
        if counted.empty or len(counted_checks(selections(finding, at_default), at_default)) < len(counted):
            continue
        verdicts = [row_verdict(selections(finding, checks), checks) for checks in by_point.values()]
        robustness[finding.name] = (sum(verdict == HOLDS for verdict in verdicts), len(verdicts))
    return robustness


def robustness_cell(finding: Finding, robustness: Mapping[str, tuple[int, int]] | None) -> str:
    if not robustness or finding.name not in robustness:
        return NOT_RUN
    held, points = robustness[finding.name]
    return f"holds at {held} of {points} points"


def claim_row(finding: Finding, claims: pd.DataFrame, replication: pd.DataFrame | None, vocab_size: int,
              robustness: Mapping[str, tuple[int, int]] | None = None) -> dict:
    """One row of the claims table (module doc); a claim none of whose checks ran says so in every cell."""
    check = headline_check(finding.headline, claims)
    page = f"[{finding.page}](experiments/{finding.page}.md)"
    if check is None:
        return dict(zip(COLUMNS, [finding.short, finding.headline.measured, NOT_RUN, "-", "-", NOT_TESTED, "-",
                                  robustness_cell(finding, robustness), page]))
    return dict(zip(COLUMNS, [
        finding.short, finding.headline.measured, value_cell(check),
        baseline_cell(finding.headline, check, claims, vocab_size), rule_cell(finding.headline, check),
        verdict_cell(finding, claims), replication_cell(finding, claims, replication),
        robustness_cell(finding, robustness), page]))


def claims_table(claims: pd.DataFrame, replication: pd.DataFrame | None, vocab_size: int,
                 robustness: Mapping[str, tuple[int, int]] | None = None,
                 findings: tuple[Finding, ...] = FINDINGS) -> pd.DataFrame:
    """The claims table (module doc), one row per finding, in their order. ``claims``: ``all_claims`` joined with
    ``claim_spread``; ``replication``: the replication table, when the config has confirmation runs."""
    return pd.DataFrame([claim_row(finding, claims, replication, vocab_size, robustness) for finding in findings],
                        columns=COLUMNS)
