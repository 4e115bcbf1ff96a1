"""The claims table of RESULTS.md's first screen: one short row per claim, each cell read from the tables.

Per claim of ``findings.FINDINGS``, from the ``all_claims`` table joined row for row with ``claim_spread``:

- *claim*: the claim in a few words (``Finding.short``);
- *measured*: what its headline number is, with its unit (``Headline.measured``; ``{far}`` in it is the length
  4x the longest training length);
- *value*: the headline check at the offset that decides it (``findings.deciding_check``): its value, its seed
  bootstrap's 95% interval and its number of seeds, ``0.684 [0.584, 0.777] (10 seeds), K=1``; a worst seed's value
  gives its bootstrap range instead (it starts at the value), or no range under 5 seeds, where a resample is
  mostly the same few seeds;
- *baseline*: what the number is set against (``Headline.baseline``): chance (1 / V), the same heads untrained
  (as the check's rule states it), the rival account's or the rival head's value (or a number its rule states);
- *threshold (when set)*: the headline check's threshold and when its experiment's rules were fixed
  (``rule_history.rule_timing``);
- *verdict*: the claim's verdict (``findings.finding_verdict``, in ``lengthgen.checks.verdicts``' words) and how many of
  its evidence checks hold; a verified headline (a test of the code) says that the evidence is the contrast;
- *replication*: in how many confirmation runs every one of its evidence checks has its outcome here, of the runs
  where its preconditions hold, ``1 of 2 runs (untestable in large vocab)`` (``findings.outcome_by_run``);
- *robustness*, only where a robustness study ran: ``robustness`` maps a claim's name (``Finding.name``) to
  (points where it holds, points tested, points where it is untestable), rendered ``holds at 6 of 11 points
  (untestable at 4)``, each point judged without the
  claim's multiseed repeats (``within_study``);
- *page*: the link to its page.

Torch-free and pure: tables and plain data in, a table of strings out.
"""

import re
from collections.abc import Mapping
from dataclasses import replace

import pandas as pd

from lengthgen.report.findings import (CHANCE, FINDINGS, NO_CONFIRMATION, NOT_TESTED, REPLICATES, RIVAL, REST,
                                UNTESTABLE_THERE, UNTRAINED, Finding, Headline, counted_checks, evidence_of,
                                finding_verdict, headline_check, outcome_by_run, selections)
from lengthgen.studies.robustness import DEFAULT_POINT
from lengthgen.checks.rule_history import rule_timing
from lengthgen.checks.verdicts import HOLDS, UNTESTABLE

NOT_RUN = "not run"
VALUE = "value [95% interval] (seeds)"
COLUMNS = ["claim", "measured", VALUE, "baseline", "threshold (when set)", "verdict", "replication", "robustness",
           "page"]
FEWEST_SEEDS_FOR_A_RANGE = 5  # below, a bootstrap resample is mostly copies of the same few seeds
# The same statistic on untrained heads, as a check's rule states it: ``untrained heads: 0.012`` or
# ``untrained: 0.461 to 0.747``.
UNTRAINED_IN_RULE = re.compile(r"untrained[^:;]*: ([-+]?[0-9.]+(?:e-?[0-9]+)?)(?: to ([-+]?[0-9.]+(?:e-?[0-9]+)?))?")


def number(value: float) -> str:
    """Three significant digits: the precision every cell of the first screen gives."""
    return f"{value:.3g}"


def at_offset(check: pd.Series) -> str:
    return "" if pd.isna(check["offset"]) else f", K={int(check['offset'])}"


def value_cell(headline: Headline, check: pd.Series) -> str:
    """The headline number with its spread over seeds (module doc), its offset, and its scale where its rule says."""
    seeds = int(check["n_seeds"])
    low, high = number(check["spread_low"]), number(check["spread_high"])
    if not headline.worst_seed:
        text = f"{number(check['value'])} [{low}, {high}] ({seeds} seeds)"
    elif seeds >= FEWEST_SEEDS_FOR_A_RANGE:
        text = f"{number(check['value'])}, worst of {seeds} seeds (bootstrap range {low} to {high})"
    else:
        text = f"{number(check['value'])}, worst of {seeds} seeds"
    scale = re.search(headline.context, check["rule"]) if headline.context else None
    return text + at_offset(check) + (f", logits up to {scale.group(1)}" if scale else "")


def rival_check(headline: Headline, check: pd.Series, claims: pd.DataFrame) -> pd.Series | None:
    """The rival check of a ``RIVAL`` headline at the headline check's offset; None where it was not measured."""
    claim, statistic = headline.rival
    rival = claims[(claims["experiment"] == headline.experiment) & (claims["claim"] == claim)
                   & (claims["statistic"] == statistic)]
    rival = rival[rival["offset"].isna()] if pd.isna(check["offset"]) else rival[rival["offset"] == check["offset"]]
    return None if rival.empty else rival.iloc[0]


def rival_value(headline: Headline, rival: pd.Series) -> float:
    """The rival's number: its value, or the number its rule states (``Headline.rival_in_rule``)."""
    if not headline.rival_in_rule:
        return float(rival["value"])
    found = re.search(headline.rival_in_rule, rival["rule"])
    if found is None:
        raise ValueError(f"headline {headline.claim!r}: its rival's rule {rival['rule']!r} states no {headline.label}")
    return float(found.group(1))


def rival_cell(headline: Headline, check: pd.Series, claims: pd.DataFrame) -> str:
    rival = rival_check(headline, check, claims)
    if rival is None:
        return f"{headline.label}: {NOT_RUN}"
    scale = re.search(headline.context, rival["rule"]) if headline.context else None
    return (f"{headline.label} {number(rival_value(headline, rival))}"
            + (f", logits up to {scale.group(1)}" if scale else ""))


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
        return rival_cell(headline, check, claims)
    if headline.baseline == REST:
        return f"{headline.label} {number(1 - check['value'])}"
    return "-"


def measured_text(headline: Headline, task: dict) -> str:
    """What the headline measures, ``{far}`` in it the length 4x the longest training length."""
    return headline.measured.format(far=4 * task["train_length_max"])


def rule_cell(headline: Headline, check: pd.Series) -> str:
    return f"{check['comparison']} {number(check['threshold'])}, {rule_timing(headline.experiment)}"


def evidence_count(finding: Finding, claims: pd.DataFrame) -> tuple[int, int]:
    """(evidence checks that hold, evidence checks) of the claim's counted checks."""
    evidence = evidence_of(finding, claims)
    return int(evidence["holds"].sum()), len(evidence)


def verdict_cell(finding: Finding, claims: pd.DataFrame) -> str:
    """The verdict and how many checks hold; a verified headline (a test of the code) says that the evidence is
    the contrast its baseline gives."""
    held, total = evidence_count(finding, claims)
    verdict = finding_verdict(finding, claims)
    count = f"{held} of {total} checks hold" if total else ""
    if finding.headline.verified and total:
        count = f"the number verified to float64 rounding, a test of the code; the evidence is the contrast: {count}"
    return verdict + (f" ({count})" if count else "")


def run_names(runs) -> str:
    return ", ".join(run.replace("_", " ") for run in runs)


def replication_cell(finding: Finding, claims: pd.DataFrame, replication: pd.DataFrame | None) -> str:
    """``1 of 2 runs (untestable in large vocab)``: the runs where every evidence check has its outcome here, of the
    runs where the claim can be read (``findings.outcome_by_run``)."""
    if replication is None:
        return NO_CONFIRMATION
    outcomes = outcome_by_run(finding, claims, replication)
    if outcomes.empty:
        return "not compared"
    testable = outcomes[outcomes != UNTESTABLE_THERE]
    untestable = outcomes.index[outcomes == UNTESTABLE_THERE]
    return (f"{int((testable == REPLICATES).sum())} of {len(testable)} runs"
            + (f" (untestable in {run_names(untestable)})" if len(untestable) else ""))


SEED_REPEATS = "multiseed"  # every headline in every seed at every offset: the study's points are not repeated so


def within_study(finding: Finding) -> Finding:
    """The claim as the robustness study can judge it: without the parts of the multiseed experiment, which repeats
    the headlines across seeds and offsets at this run alone."""
    return replace(finding, parts=tuple(part for part in finding.parts if part.experiment != SEED_REPEATS))


def robustness_of_findings(study: pd.DataFrame, claims: pd.DataFrame,
                           findings: tuple[Finding, ...] = FINDINGS) -> dict[str, tuple[int, int, int]]:
    """Per claim the robustness study tests: (points at which its verdict holds, points, points at which it is
    untestable: a precondition fails there, so that its evidence cannot be read). ``study``: the
    ``robustness_checks`` table (a point's checks, this run's as the default point among them); a claim's verdict
    at a point is ``findings.finding_verdict`` of its checks there (``within_study``: its multiseed repeats are not
    run at the points), the rule of its row in the claims table. A claim is left out where the study runs only some
    of the other experiments it is decided on (fewer of its counted checks at the default point than in ``claims``,
    this run's): its verdict there would rest on a part of its evidence."""
    robustness = {}
    by_point = {point: study[study["point"] == point] for point in dict.fromkeys(study["point"])}
    for finding in map(within_study, findings):
        counted = counted_checks(selections(finding, claims), claims)
        at_default = by_point.get(DEFAULT_POINT, study.iloc[:0])
        if counted.empty or len(counted_checks(selections(finding, at_default), at_default)) < len(counted):
            continue
        verdicts = [finding_verdict(finding, checks) for checks in by_point.values()]
        robustness[finding.name] = (sum(verdict == HOLDS for verdict in verdicts), len(verdicts),
                                    sum(verdict == UNTESTABLE for verdict in verdicts))
    return robustness


def robustness_cell(finding: Finding, robustness: Mapping[str, tuple[int, int, int]]) -> str:
    """``holds at 6 of 11 points (untestable at 4)``."""
    if finding.name not in robustness:
        return "not in the study"
    held, points, untestable = robustness[finding.name]
    return f"holds at {held} of {points} points" + (f" (untestable at {untestable})" if untestable else "")


def claim_row(finding: Finding, claims: pd.DataFrame, replication: pd.DataFrame | None, task: dict,
              robustness: Mapping[str, tuple[int, int, int]]) -> dict:
    """One row of the claims table (module doc); a claim none of whose checks ran says so in every cell."""
    check = headline_check(finding.headline, claims)
    page = f"[page](experiments/{finding.page}.md)"
    measured = measured_text(finding.headline, task)
    if check is None:
        return dict(zip(COLUMNS, [finding.short, measured, NOT_RUN, "-", "-", NOT_TESTED, "-",
                                  robustness_cell(finding, robustness), page]))
    return dict(zip(COLUMNS, [
        finding.short, measured, value_cell(finding.headline, check),
        baseline_cell(finding.headline, check, claims, task["vocab_size"]), rule_cell(finding.headline, check),
        verdict_cell(finding, claims), replication_cell(finding, claims, replication),
        robustness_cell(finding, robustness), page]))


def claims_table(claims: pd.DataFrame, replication: pd.DataFrame | None, task: dict,
                 robustness: Mapping[str, tuple[int, int, int]] | None = None,
                 findings: tuple[Finding, ...] = FINDINGS) -> pd.DataFrame:
    """The claims table (module doc), one row per finding, in their order. ``claims``: ``all_claims`` joined with
    ``claim_spread``; ``replication``: the replication table, when the config has confirmation runs; ``task``: the
    config's task section; without ``robustness`` (no robustness study ran) the table has no robustness column."""
    table = pd.DataFrame([claim_row(finding, claims, replication, task, robustness or {}) for finding in findings],
                         columns=COLUMNS)
    return table if robustness is not None else table.drop(columns="robustness")
