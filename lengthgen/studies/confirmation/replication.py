"""Replication: each check of the exploratory run beside the same check in every confirmation run.

A check is matched across runs by its key (``claims.KEY``): its experiment, claim and statistic,
names that stay the same in every run that measures it, and its offset K, the *instance* (null,
shown ``all``, for a check pooled over offsets). Its *outcome* in a run is graded in the report's
vocabulary (``lengthgen.checks.verdicts``): ``holds`` (at every offset it is measured at), ``does not hold`` (at none)
or ``holds in part``.

The rule (``thresholds.REPLICATION_RULE``, with its reason), fixed with the claims' rules before the confirmation runs:

- a check *replicates* in a confirmation run when it has the exploratory outcome at every offset both
  runs measure, and, at an offset only the confirmation run measures, the outcome the exploratory run
  had at all of its offsets (where it held in part, the exploratory run predicts nothing there);
- a claim (an experiment's) replicates in a run when every evidence check compared there replicates;
- over the confirmation runs that compare it, a claim's or a check's replication *holds* when it replicates
  in every one, *does not hold* in none, *holds in part* otherwise (*untestable* where none compares it).

Sanity checks (``kind`` sanity: only a bug can fail them) are compared the same way, and shown apart:
they count in no claim's replication, as they count in no verdict.

Where a check does not replicate, the cause (``thresholds.CAUSE_RULE``, with its reasons) is decided from
numbers that can point either way: in each run, on how many seeds the check fails computed on that seed
alone (k of n, ``lengthgen.checks.bootstrap``), whether the seed bootstrap decides its outcome, and how far the
values lie from the threshold (``margin``):

- *measurement*: a run has one seed (undecided); or the two runs' shares of failing seeds are compatible
  with one rate (a two-sided Fisher exact test does not reject), the outcome is open in either run or the
  run poses the same task with fresh seeds, and the failing seeds are not seen in several runs of the study;
- *rule*: otherwise (the shares differ, failing seeds recur across runs, or both runs decide their outcome
  on another task), when the failing side misses the threshold by no more than the passing side clears it
  (``clearance``: one seed's share for a check that holds on its threshold, such as an equality):
  the threshold sits between two settings' values, a threshold that fit one setting;
- *claim*: the same, with a larger miss: the effect itself is absent there, the phenomenon is not general.

A check not counted per seed (declared so, ``claims.check``'s ``per_seed``: one seed's value set against
another's, a t-interval) has no shares: the bootstrap alone decides between *measurement* (open in a run)
and the margins. ``Cause.basis`` says which of these steps decided a cause.

Everything here reads tables and plain data: no torch. The section text is ``lengthgen.studies.confirmation.section`` (its
``worked_example`` states the rule on numbers).
"""

import math
from typing import NamedTuple

import pandas as pd

from lengthgen.checks.check import KEY, verdict
from lengthgen.checks.shared_rules import DECIDED_FRACTION, RECURRING_RUNS, RULE_CAUSE_MAX_MISS, SHARES_DIFFER_LEVEL
from lengthgen.checks.verdicts import HOLDS, IN_PART, graded

EXPLORATORY = "exploratory"
CHECK = KEY[:-1]  # a check over its offsets: experiment, claim, statistic
SPREAD_KEY = ["experiment", "section", *KEY[1:]]  # the columns claim_spread shares with all_claims, row for row

# ---------------------------------------------------------------------------------------------
# Instances and margins


def instance(offset) -> int | None:
    """The offset a check is measured at, None where it is pooled over offsets."""
    return None if pd.isna(offset) else int(offset)


def instance_name(offset) -> str:
    """``K=1``, or ``all`` for a check pooled over offsets."""
    return "all" if pd.isna(offset) else f"K={int(offset)}"


def margin(value: float, comparison: str, threshold: float) -> float:
    """How far ``value`` lies on the passing side of ``threshold``, relative to the threshold (to 1 where it
    is 0); negative on the failing side; NaN where the value is. An equality has no passing side: its
    margin is 0 when it holds."""
    if value is None or math.isnan(value):
        return math.nan
    scale = abs(threshold) or 1.0
    if comparison == "==":
        return -abs(value - threshold) / scale
    sign = 1.0 if comparison in (">=", ">") else -1.0
    return sign * (value - threshold) / scale


def margins(rows: pd.DataFrame) -> pd.Series:
    return pd.Series([margin(value, comparison, threshold) for value, comparison, threshold
                      in zip(rows["value"], rows["comparison"], rows["threshold"])], dtype=float)


def clearance(value: float, comparison: str, threshold: float, seeds: int) -> float:
    """How far a check that holds lies from failing, relative to the threshold as ``margin`` is: its margin, and for
    one that holds on its threshold (margin 0: an equality, or a share at its bound such as ``>= 1``) one seed's
    share, 1 / ``seeds``. Every such check of the study is a share at 0 or 1 (of seeds, runs, cells or pairs: no
    one, every one) and one seed is the least a run's seeds can move it by, so a failing side that misses by one
    seed's share or less misses by no more than the holding side could have cleared."""
    found = margin(value, comparison, threshold)
    return found if found > 0 else 1.0 / seeds / (abs(threshold) or 1.0)


def clearances(rows: pd.DataFrame) -> pd.Series:
    return pd.Series([clearance(value, comparison, threshold, seeds) for value, comparison, threshold, seeds
                      in zip(rows["value"], rows["comparison"], rows["threshold"], rows["n_seeds"])], dtype=float)


# ---------------------------------------------------------------------------------------------
# Every run's checks, side by side


def annotated_checks(runs: dict[str, tuple[pd.DataFrame, pd.DataFrame]]) -> pd.DataFrame:
    """One row per check of every run: run, the ``all_claims`` columns and the ``claim_spread`` ones, whether
    the bootstrap decides the outcome, and the verdict of the check's experiment in that run (over all its
    sections, shift_K1 and shift_K2 make one; evidence only). ``runs``: run name -> (all_claims, claim_spread),
    the exploratory run first."""
    frames = []
    for run, (claims, spread) in runs.items():
        # The offset is Int64 in both: a table without pooled checks reads it as a plain integer column.
        claims, spread = (frame.reset_index(drop=True)
                          .assign(offset=frame["offset"].astype("Int64").to_numpy()) for frame in (claims, spread))
        if not claims[SPREAD_KEY].equals(spread[SPREAD_KEY]):
            raise ValueError(f"run {run}: the claim spreads do not list the checks of its claims table")
        frames.append(claims.join(spread.drop(columns=SPREAD_KEY)).assign(run=run))
    checks = pd.concat(frames, ignore_index=True)
    decided = (checks["n_seeds"] >= 2) & ((checks["holds_fraction"] >= DECIDED_FRACTION)
                                          | (checks["holds_fraction"] <= 1 - DECIDED_FRACTION))
    verdicts = checks.groupby(["run", "experiment"], sort=False)[["kind", "holds"]].apply(verdict)
    return checks.assign(decided=decided).join(verdicts.rename("experiment_verdict"), on=["run", "experiment"])


def outcome(holds: pd.Series) -> str:
    return graded(holds.astype(bool))


def check_outcomes(checks: pd.DataFrame) -> pd.DataFrame:
    """Per (run, check): its outcome over its offsets (columns run, experiment, claim, statistic, outcome)."""
    return checks.groupby(["run", *CHECK], sort=False)["holds"].agg(outcome).rename("outcome").reset_index()


def seeds_text(row) -> str:
    """``fails on 1 of 5 seeds alone``, or that the check is not counted per seed."""
    if pd.isna(row.seeds_failing):
        return "no per-seed count"
    return f"fails on {int(row.seeds_failing)} of {int(row.seeds_checked)} seeds alone"


def describe_values(rows: pd.DataFrame) -> str:
    """``run K=1: 0.709 [0.63, 0.79], holds in 88% of resamples, fails on 1 of 5 seeds alone, rule >= 0.5`` for each
    instance: each with its own run's rule, whose threshold may follow that run's settings or data."""
    return "; ".join(f"{row.run} {instance_name(row.offset)}: {row.value:.3g} [{row.spread_low:.3g}, "
                     f"{row.spread_high:.3g}], holds in {row.holds_fraction:.0%} of resamples, {seeds_text(row)}, "
                     f"rule {row.rule}" for row in rows.itertuples())


def expectations(exploratory: pd.DataFrame, confirmation: pd.DataFrame) -> list[tuple[pd.Series, bool, pd.DataFrame]]:
    """(confirmation row, the outcome the exploratory run expects there, the exploratory rows it comes from) for
    every instance of one check that the exploratory run makes a prediction for: its own outcome at an instance
    both runs measure; at another offset, the outcome it had at all of its own (none where it held in part)."""
    pooled = outcome(exploratory["holds"])
    by_instance = {instance(offset): exploratory.loc[[index]] for index, offset in exploratory["offset"].items()}
    found = []
    for _, row in confirmation.iterrows():
        if instance(row["offset"]) in by_instance:
            reference = by_instance[instance(row["offset"])]
            found.append((row, bool(reference["holds"].iloc[0]), reference))
        elif pooled != IN_PART:
            found.append((row, pooled == HOLDS, exploratory))
    return found


class Evidence(NamedTuple):
    """The numbers one non-replicating check's cause is decided from (``CAUSE_RULE``)."""

    seeds: int  # the fewer of the two runs' seeds
    open: bool  # the bootstrap leaves the outcome open in either run
    same_task: bool  # the confirmation run poses the exploratory task with fresh seeds
    shares: tuple[tuple[int, int], tuple[int, int]] | None  # (k, n) failing seeds in each run; None: no count
    failing_runs: int  # runs of the study where the check fails on some seed alone (at any offset)
    miss: float  # the failing side's largest miss below the threshold, relative to it
    clear: float  # the passing side's median clearance above it (``clearance``)


# What decided a cause (``Cause.basis``). The first two leave it *measurement* because the data cannot decide it.
ONE_SEED = "one seed"  # a run has one seed
OPEN_WITHOUT_COUNT = "open without a per-seed count"  # not counted per seed, and the bootstrap leaves it open
SHARES = "shares"  # compatible shares of failing seeds, the outcome open or the same task: seeds alone turned it
MARGINS = "margins"  # the miss against the clearance: rule or claim


class Cause(NamedTuple):
    cause: str  # measurement, rule or claim
    basis: str  # what decided it: ONE_SEED, OPEN_WITHOUT_COUNT, SHARES or MARGINS
    why: str  # in words, with the numbers


NO_CAUSE = Cause("", "", "")  # a check that replicates


def shares_p_value(shares: tuple[tuple[int, int], tuple[int, int]]) -> float:
    """Two-sided Fisher exact test of k1 of n1 against k2 of n2 failing seeds."""
    (k1, n1), (k2, n2) = shares
    # Imported here, not at the top: the workflow's parse imports this module (report -> findings), and
    # scipy.stats costs about a second there, at every dry run.
    from scipy.stats import fisher_exact

    return float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)


def share_text(share: tuple[int, int]) -> str:
    return f"{share[0]} of {share[1]}"


def decide_cause(evidence: Evidence) -> Cause:
    """The cause, what decided it and why, by ``CAUSE_RULE``."""
    if evidence.seeds < 2:
        return Cause("measurement", ONE_SEED, "undecided: a run has one seed, which decides nothing")
    if evidence.shares is None:
        found = "no per-seed count (the check is not computed per seed), so the seed bootstrap alone"
        if evidence.open:
            return Cause("measurement", OPEN_WITHOUT_COUNT, f"{found}: the outcome is open in at least one run")
        return by_margin(evidence, f"{found}: decided in both runs")
    p_value = shares_p_value(evidence.shares)
    shares = " against ".join(share_text(share) for share in evidence.shares) + " seeds fail"
    if p_value < SHARES_DIFFER_LEVEL:
        return by_margin(evidence, f"{shares}, shares that differ (Fisher p = {p_value:.2g})")
    compatible = f"{shares}, shares compatible with one rate (Fisher p = {p_value:.2g})"
    # Recurring: failing seeds in RECURRING_RUNS or more runs of the study, the runs compared among them.
    if evidence.failing_runs >= RECURRING_RUNS and any(k for k, _ in evidence.shares):
        return by_margin(evidence, f"{compatible}, and failing seeds recur in {evidence.failing_runs} runs of the "
                                   "study: a fixed share of seeds fails, which more seeds would not remove")
    if evidence.open or evidence.same_task:
        turned = "the outcome is open in at least one run" if evidence.open else "the same task with fresh seeds"
        return Cause("measurement", SHARES, f"{compatible}, and {turned}: seeds alone turned it")
    return by_margin(evidence, f"{compatible}, but both runs decide their outcome on another task")


def by_margin(evidence: Evidence, found: str) -> Cause:
    """*rule* where the failing side misses the threshold by no more than ``RULE_CAUSE_MAX_MISS`` x the passing
    side's clearance, else *claim*."""
    where = (f"{found}; the failing side misses the threshold by up to {evidence.miss:.0%} of it, the other clears "
             f"it by {evidence.clear:.0%} (median)")
    if evidence.miss <= RULE_CAUSE_MAX_MISS * evidence.clear:
        return Cause("rule", MARGINS, f"{where}: the threshold sits between the two settings' values")
    return Cause("claim", MARGINS, f"{where}: the effect itself differs")


def failure_share(rows: pd.DataFrame) -> tuple[int, int] | None:
    """(k, n): failing seeds of checked seeds, summed over ``rows``; None where a row has no per-seed count."""
    if rows["seeds_failing"].isna().any():
        return None
    return int(rows["seeds_failing"].sum()), int(rows["seeds_checked"].sum())


def misses_and_clears(mismatches: list[tuple[pd.Series, bool, pd.DataFrame]]) -> tuple[float, float]:
    """The failing side's largest relative miss (over every instance compared; NaN only where every miss is) and
    the passing side's median relative clearance. Every mismatch has a failing and a passing side."""
    misses, clears = [], []
    for row, expected, reference in mismatches:
        failing, passing = (pd.DataFrame([row]), reference) if expected else (reference, pd.DataFrame([row]))
        misses += list(-margins(failing[~failing["holds"].astype(bool)]))
        clears += list(clearances(passing[passing["holds"].astype(bool)]))
    return float(pd.Series(misses).max()), float(pd.Series(clears).median())


def cause(mismatches: list[tuple[pd.Series, bool, pd.DataFrame]], same_task: bool, failing_runs: int) -> Cause:
    """The cause, its basis and its explanation with the numbers, of the instances where a confirmation run does
    not have the outcome the exploratory run expects (``expectations``), by ``CAUSE_RULE``. ``failing_runs``: the
    runs of the study in which the check fails on some seed alone."""
    confirmation = pd.DataFrame([row for row, _, _ in mismatches])
    references = pd.concat([reference for _, _, reference in mismatches])
    exploratory = references[~references.index.duplicated()]  # a pooled prediction's rows come once per instance
    both = pd.concat([exploratory, confirmation])
    shares = failure_share(exploratory), failure_share(confirmation)
    miss, clear = misses_and_clears(mismatches)
    evidence = Evidence(seeds=int(both["n_seeds"].min()), open=not both["decided"].all(), same_task=same_task,
                        shares=None if None in shares else shares, failing_runs=failing_runs, miss=miss, clear=clear)
    found = decide_cause(evidence)
    return found._replace(why=f"{found.why}; {describe_values(both)}")


COMPARISON_COLUMNS = [*CHECK, "kind", "run", "exploratory_outcome", "outcome", "replicates", "cause", "basis",
                      "explanation"]


def compare_runs(checks: pd.DataFrame, same_task: dict[str, bool]) -> pd.DataFrame:
    """Per (check, confirmation run) where the exploratory run expects an outcome (``expectations``): the check's
    kind (the exploratory run's), both runs' outcomes over their own offsets, whether it replicates (every
    expected outcome met), and if not its cause, what decided it (``Cause.basis``) and its explanation."""
    explored = dict(iter(checks[checks["run"] == EXPLORATORY].groupby(CHECK, sort=False)))
    failing_runs = checks[checks["seeds_failing"].fillna(0) > 0].groupby(CHECK)["run"].nunique()
    rows = []
    for run, run_checks in checks[checks["run"] != EXPLORATORY].groupby("run", sort=False):
        for key, confirmation in run_checks.groupby(CHECK, sort=False):
            expected = expectations(explored[key], confirmation) if key in explored else []
            if not expected:
                continue  # the exploratory run makes no prediction here
            mismatches = [entry for entry in expected if bool(entry[0]["holds"]) != entry[1]]
            found = cause(mismatches, same_task[run], int(failing_runs.get(key, 0))) if mismatches else NO_CAUSE
            rows.append({**dict(zip(CHECK, key)), "kind": explored[key]["kind"].iloc[0], "run": run,
                         "exploratory_outcome": outcome(explored[key]["holds"]),
                         "outcome": outcome(confirmation["holds"]), "replicates": not mismatches,
                         "cause": found.cause, "basis": found.basis, "explanation": found.why})
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def replication_verdict(replicates: pd.Series) -> str:
    """Over the confirmation runs that measure it: ``REPLICATION_RULE``."""
    return graded(replicates.astype(bool))


def claim_replication(checks: pd.DataFrame, comparison: pd.DataFrame) -> pd.DataFrame:
    """Per experiment: its verdict in each run, whether it replicates in each confirmation run, its replication
    verdict, and the causes of the checks that do not replicate (cause -> count); from its evidence checks
    only (a sanity check that does not replicate is a bug, ``sanity_markdown``, not a claim's failure)."""
    verdicts = checks.drop_duplicates(["run", "experiment"]).pivot(index="experiment", columns="run",
                                                                   values="experiment_verdict")
    evidence = comparison[comparison["kind"] == "evidence"]
    in_run = evidence.groupby(["experiment", "run"], sort=False)["replicates"].all()
    rows = []
    for experiment in dict.fromkeys(checks["experiment"]):
        replicates = in_run[in_run.index.get_level_values("experiment") == experiment].droplevel("experiment")
        failed = evidence[(evidence["experiment"] == experiment) & ~evidence["replicates"]]
        rows.append({"experiment": experiment, "verdicts": verdicts.loc[experiment].dropna().to_dict(),
                     "replicates": replicates.to_dict(), "replication": replication_verdict(replicates),
                     "causes": failed["cause"].value_counts().to_dict()})
    return pd.DataFrame(rows)


def replication_table(checks: pd.DataFrame, comparison: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """The ``replication`` table: every check of every run (one row per instance), with its outcome in that run,
    whether it replicates there, the cause where it does not, its experiment's verdict in the run and its
    experiment's replication verdict over the study."""
    table = checks.merge(check_outcomes(checks), on=["run", *CHECK], how="left")
    table = table.merge(comparison[["run", *CHECK, "replicates", "cause"]], on=["run", *CHECK], how="left")
    table["replicates"] = table["replicates"].map({True: "yes", False: "no"}).fillna("")
    table["cause"] = table["cause"].fillna("")
    table["replication"] = table["experiment"].map(claims.set_index("experiment")["replication"])
    return table.rename(columns={"experiment_verdict": "claim_verdict"})
