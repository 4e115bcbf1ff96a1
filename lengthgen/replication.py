"""Replication: each check of the exploratory run beside the same check in every confirmation run.

A check is matched across runs by its key (``claims.KEY``): its experiment, claim and statistic,
names that stay the same in every run that measures it, and its offset K, the *instance* (null,
shown ``all``, for a check pooled over offsets). Its *outcome* in a run is ``holds`` (at every offset
it is measured at), ``fails`` (at none) or ``partly``.

The rule (``thresholds.REPLICATION_RULE``, with its reason), fixed with the claims' rules before the confirmation runs:

- a check *replicates* in a confirmation run when it has the exploratory outcome at every offset both
  runs measure, and, at an offset only the confirmation run measures, the outcome the exploratory run
  had at all of its offsets (where it was partly, the exploratory run predicts nothing there);
- a claim (an experiment's) replicates in a run when every evidence check compared there replicates;
- over the confirmation runs that compare it, a claim or a check is *replicated* when it replicates
  in every one, *not replicated* in none, *partly* otherwise (*not tested* where none compares it).

Sanity checks (``kind`` sanity: only a bug can fail them) are compared the same way, and shown apart:
they count in no claim's replication, as they count in no verdict.

Where a check does not replicate, the cause (``thresholds.CAUSE_RULE``, with its reasons) is decided from
numbers that can point either way: in each run, on how many seeds the check fails computed on that seed
alone (k of n, ``lengthgen.bootstrap``), whether the seed bootstrap decides its outcome, and how far the
values lie from the threshold (``margin``):

- *measurement*: a run has one seed (undecided); or the two runs' shares of failing seeds are compatible
  with one rate (a two-sided Fisher exact test does not reject), the outcome is open in either run or the
  run poses the same task with fresh seeds, and the failing seeds are not seen in several runs of the study;
- *rule*: otherwise (the shares differ, failing seeds recur across runs, or both runs decide their outcome
  on another task), when the failing side misses the threshold by no more than the passing side clears it:
  the threshold sits between two settings' values, a threshold that fit one setting;
- *claim*: the same, with a larger miss: the effect itself is absent there, the phenomenon is not general.

A check that no single seed gives a value (a statistic over seed pairs, a t-interval) has no shares: the
bootstrap alone decides between *measurement* (open in a run) and the margins. ``worked_example`` states the
rule on numbers.

Everything here reads tables and plain data: no torch.
"""

import math
from typing import NamedTuple

import pandas as pd
from scipy.stats import fisher_exact

from lengthgen.claims import KEY, verdict
from lengthgen.experiments.catalog import with_current_names
from lengthgen.thresholds import (CAUSE_RULE, DECIDED_FRACTION, RECURRING_RUNS, REPLICATION_RULE,
                                  RULE_CAUSE_MAX_MISS, SHARES_DIFFER_LEVEL, SPREAD_INTERVAL)

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


# ---------------------------------------------------------------------------------------------
# Every run's checks, side by side


def annotated_checks(runs: dict[str, tuple[pd.DataFrame, pd.DataFrame]]) -> pd.DataFrame:
    """One row per check of every run: run, the ``all_claims`` columns and the ``claim_spread`` ones, whether
    the bootstrap decides the outcome, and the verdict of the check's experiment in that run (over all its
    sections, shift_K1 and shift_K2 make one; evidence only). ``runs``: run name -> (all_claims, claim_spread),
    the exploratory run first. A run written before an experiment was renamed has its checks under the current
    name (``catalog.RENAMED_EXPERIMENTS``)."""
    frames = []
    for run, (claims, spread) in runs.items():
        # The offset is Int64 in both: a table without pooled checks reads it as a plain integer column.
        claims, spread = (with_current_names(frame).reset_index(drop=True)
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
    return "holds" if holds.all() else "fails" if not holds.any() else "partly"


def check_outcomes(checks: pd.DataFrame) -> pd.DataFrame:
    """Per (run, check): its outcome over its offsets, and whether the bootstrap decides all of them."""
    grouped = checks.groupby(["run", *CHECK], sort=False)
    return pd.DataFrame({"outcome": grouped["holds"].agg(outcome), "decided": grouped["decided"].all()})


def seeds_text(row) -> str:
    """``fails on 1 of 5 seeds alone``, or that no single seed gives the check a value."""
    if pd.isna(row.seeds_failing):
        return "no per-seed value"
    return f"fails on {int(row.seeds_failing)} of {int(row.seeds_checked)} seeds alone"


def describe_values(rows: pd.DataFrame) -> str:
    """``run K=1: 0.709 [0.63, 0.79], holds in 88% of resamples, fails on 1 of 5 seeds alone`` for each instance,
    and the rule."""
    parts = [f"{row.run} {instance_name(row.offset)}: {row.value:.3g} [{row.spread_low:.3g}, {row.spread_high:.3g}], "
             f"holds in {row.holds_fraction:.0%} of resamples, {seeds_text(row)}" for row in rows.itertuples()]
    return "; ".join(parts) + f" (rule {rows['rule'].iloc[0]})"


def expectations(exploratory: pd.DataFrame, confirmation: pd.DataFrame) -> list[tuple[pd.Series, bool, pd.DataFrame]]:
    """(confirmation row, the outcome the exploratory run expects there, the exploratory rows it comes from) for
    every instance of one check that the exploratory run makes a prediction for: its own outcome at an instance
    both runs measure; at another offset, the outcome it had at all of its own (none where that was partly)."""
    pooled = outcome(exploratory["holds"])
    by_instance = {instance(offset): exploratory.loc[[index]] for index, offset in exploratory["offset"].items()}
    found = []
    for _, row in confirmation.iterrows():
        if instance(row["offset"]) in by_instance:
            reference = by_instance[instance(row["offset"])]
            found.append((row, bool(reference["holds"].iloc[0]), reference))
        elif pooled != "partly":
            found.append((row, pooled == "holds", exploratory))
    return found


class Evidence(NamedTuple):
    """The numbers one non-replicating check's cause is decided from (``CAUSE_RULE``)."""

    seeds: int  # the fewer of the two runs' seeds
    open: bool  # the bootstrap leaves the outcome open in either run
    same_task: bool  # the confirmation run poses the exploratory task with fresh seeds
    shares: tuple[tuple[int, int], tuple[int, int]] | None  # (k, n) failing seeds in each run; None: no count
    failing_runs: int  # runs of the study where the check fails on some seed alone (at any offset)
    miss: float  # the failing side's largest miss below the threshold, relative to it
    clear: float  # the passing side's median clearance above it


def shares_p_value(shares: tuple[tuple[int, int], tuple[int, int]]) -> float:
    """Two-sided Fisher exact test of k1 of n1 against k2 of n2 failing seeds."""
    (k1, n1), (k2, n2) = shares
    return float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)


def share_text(share: tuple[int, int]) -> str:
    return f"{share[0]} of {share[1]}"


def decide_cause(evidence: Evidence) -> tuple[str, str]:
    """(cause, why, in words with the numbers) by ``CAUSE_RULE``."""
    if evidence.seeds < 2:
        return "measurement", "undecided: a run has one seed, which decides nothing"
    if evidence.shares is None:
        found = "no per-seed count (the statistic does not aggregate single seeds), so the seed bootstrap alone"
        if evidence.open:
            return "measurement", f"{found}: the outcome is open in at least one run"
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
        return "measurement", f"{compatible}, and {turned}: seeds alone turned it"
    return by_margin(evidence, f"{compatible}, but both runs decide their outcome on another task")


def by_margin(evidence: Evidence, found: str) -> tuple[str, str]:
    """*rule* where the failing side misses the threshold by no more than ``RULE_CAUSE_MAX_MISS`` x the passing
    side's clearance, else *claim*."""
    where = (f"{found}; the failing side misses the threshold by up to {evidence.miss:.0%} of it, the other clears "
             f"it by {evidence.clear:.0%} (median)")
    if evidence.miss <= RULE_CAUSE_MAX_MISS * evidence.clear:
        return "rule", f"{where}: the threshold sits between the two settings' values"
    return "claim", f"{where}: the effect itself differs"


def failure_share(rows: pd.DataFrame) -> tuple[int, int] | None:
    """(k, n): failing seeds of checked seeds, summed over ``rows``; None where a row has no per-seed count."""
    if rows["seeds_failing"].isna().any():
        return None
    return int(rows["seeds_failing"].sum()), int(rows["seeds_checked"].sum())


def misses_and_clears(mismatches: list[tuple[pd.Series, bool, pd.DataFrame]]) -> tuple[float, float]:
    """The failing side's largest relative miss (over every instance compared) and the passing side's median
    relative clearance."""
    misses, clears = [], []
    for row, expected, reference in mismatches:
        failing, passing = (pd.DataFrame([row]), reference) if expected else (reference, pd.DataFrame([row]))
        misses += list(-margins(failing[~failing["holds"].astype(bool)]))
        clears += list(margins(passing[passing["holds"].astype(bool)]))
    return max(misses, default=0.0), float(pd.Series(clears, dtype=float).median()) if clears else 0.0


def cause(mismatches: list[tuple[pd.Series, bool, pd.DataFrame]], same_task: bool,
          failing_runs: int) -> tuple[str, str]:
    """(cause, explanation with the numbers) of the instances where a confirmation run does not have the outcome
    the exploratory run expects (``expectations``), by ``CAUSE_RULE``. ``failing_runs``: the runs of the study in
    which the check fails on some seed alone."""
    confirmation = pd.DataFrame([row for row, _, _ in mismatches])
    exploratory = pd.concat([reference for _, _, reference in mismatches]).drop_duplicates("offset")
    both = pd.concat([exploratory, confirmation], ignore_index=True)
    shares = failure_share(exploratory), failure_share(confirmation)
    miss, clear = misses_and_clears(mismatches)
    evidence = Evidence(seeds=int(both["n_seeds"].min()), open=not both["decided"].all(), same_task=same_task,
                        shares=None if None in shares else shares, failing_runs=failing_runs, miss=miss, clear=clear)
    found, why = decide_cause(evidence)
    return found, f"{why}; {describe_values(both)}"


def worked_example() -> str:
    """The cause rule applied, by ``decide_cause``, to illustrative numbers in the shape of a learned head that
    does not pin: a check ``>= 0.5`` on a minimum over seeds, which one failing seed fails."""
    evidence = Evidence(seeds=10, open=True, same_task=False, shares=((0, 30), (1, 10)), failing_runs=1,
                        miss=-margin(0.248, ">=", 0.5), clear=margin(0.62, ">=", 0.5))
    cases = [("as it is", evidence),
             ("if another run (say fresh seeds) also had a seed that fails it, at any offset",
              evidence._replace(failing_runs=2)),
             ("if 6 of the 10 seeds failed it", evidence._replace(shares=((0, 30), (6, 10)), open=False)),
             ("if those 6 seeds missed by little (worst 0.45)",
              evidence._replace(shares=((0, 30), (6, 10)), open=False, miss=-margin(0.45, ">=", 0.5)))]
    lines = [f"- {name}: **{found}** ({why})." for name, (found, why) in
             ((name, decide_cause(case)) for name, case in cases)]
    return ("**Worked example** (illustrative numbers). A check that the learned head keeps most attention mass "
            "inside the training range, `min over seeds >= 0.5`, holds in the exploratory run at K=1..3 (worst "
            "seed 0.62, clearing the threshold by 24% of it; 0 of 30 seed-offset pairs fail alone) and is compared "
            "at K=4 in a run on another task, where one of 10 seeds does not pin (mass 0.248, a miss of 50%): the "
            "check fails there and holds in 35% of the seed resamples (those that leave that seed out), so the "
            "bootstrap leaves it open.\n\n"
            + "\n".join(lines))


COMPARISON_COLUMNS = [*CHECK, "kind", "run", "exploratory_outcome", "outcome", "replicates", "cause", "explanation"]


def compare_runs(checks: pd.DataFrame, same_task: dict[str, bool]) -> pd.DataFrame:
    """Per (check, confirmation run) where the exploratory run expects an outcome (``expectations``): the check's
    kind (the exploratory run's), both runs' outcomes over their own offsets, whether it replicates (every
    expected outcome met), and if not its cause and explanation."""
    explored = dict(iter(checks[checks["run"] == EXPLORATORY].groupby(CHECK, sort=False)))
    failing_runs = checks[checks["seeds_failing"].fillna(0) > 0].groupby(CHECK)["run"].nunique()
    rows = []
    for run, run_checks in checks[checks["run"] != EXPLORATORY].groupby("run", sort=False):
        for key, confirmation in run_checks.groupby(CHECK, sort=False):
            expected = expectations(explored[key], confirmation) if key in explored else []
            if not expected:
                continue  # the exploratory run makes no prediction here
            mismatches = [entry for entry in expected if bool(entry[0]["holds"]) != entry[1]]
            found = cause(mismatches, same_task[run], int(failing_runs.get(key, 0))) if mismatches else ("", "")
            rows.append({**dict(zip(CHECK, key)), "kind": explored[key]["kind"].iloc[0], "run": run,
                         "exploratory_outcome": outcome(explored[key]["holds"]),
                         "outcome": outcome(confirmation["holds"]), "replicates": not mismatches,
                         "cause": found[0], "explanation": found[1]})
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def replication_verdict(replicates: pd.Series) -> str:
    """Over the confirmation runs that measure it: ``REPLICATION_RULE``."""
    if replicates.empty:
        return "not tested"
    return "replicated" if replicates.all() else "not replicated" if not replicates.any() else "partly"


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
        replicates = in_run[experiment] if experiment in in_run.index.get_level_values(0) else pd.Series(dtype=bool)
        failed = evidence[(evidence["experiment"] == experiment) & ~evidence["replicates"]]
        rows.append({"experiment": experiment, "verdicts": verdicts.loc[experiment].dropna().to_dict(),
                     "replicates": replicates.to_dict(), "replication": replication_verdict(replicates),
                     "causes": failed["cause"].value_counts().to_dict()})
    return pd.DataFrame(rows)


def replication_table(checks: pd.DataFrame, comparison: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """The ``replication`` table: every check of every run (one row per instance), with its outcome in that run,
    whether it replicates there, the cause where it does not, its experiment's verdict in the run and its
    experiment's replication verdict over the study."""
    outcomes = check_outcomes(checks).reset_index()
    table = checks.merge(outcomes[["run", *CHECK, "outcome"]], on=["run", *CHECK], how="left")
    table = table.merge(comparison[["run", *CHECK, "replicates", "cause"]], on=["run", *CHECK], how="left")
    table["replicates"] = table["replicates"].map({True: "yes", False: "no"}).fillna("")
    table["cause"] = table["cause"].fillna("")
    table["replication"] = table["experiment"].map(claims.set_index("experiment")["replication"])
    return table.rename(columns={"experiment_verdict": "claim_verdict"})


# ---------------------------------------------------------------------------------------------
# The RESULTS.md section


def report_order(checks: pd.DataFrame) -> pd.DataFrame:
    """Checks in report order: experiments and checks as they first appear (the exploratory run first), then by
    offset (pooled first)."""
    experiments = {name: index for index, name in enumerate(dict.fromkeys(checks["experiment"]))}
    names = list(zip(checks["claim"], checks["statistic"]))
    ranks = {name: index for index, name in enumerate(dict.fromkeys(names))}
    keys = pd.DataFrame({"experiment": checks["experiment"].map(experiments).to_numpy(),
                         "check": [ranks[name] for name in names],
                         "offset": checks["offset"].astype("Int64").fillna(-1).to_numpy()}, index=checks.index)
    return checks.loc[keys.sort_values(["experiment", "check", "offset"], kind="stable").index]


def _cell(rows: pd.DataFrame) -> str:
    if rows.empty:
        return "-"
    row = rows.iloc[0]
    mark = "yes" if row["holds"] else "no"
    spread = ("" if row["n_seeds"] < 2 else
              f" [{row['spread_low']:.3g}, {row['spread_high']:.3g}], {row['holds_fraction']:.0%}")
    seeds = "" if pd.isna(row["seeds_failing"]) else f", {row['seeds_failing']}/{row['seeds_checked']} seeds fail:"
    return f"{row['value']:.3g}{spread}{seeds} {mark}"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _markdown(rows: list[list[str]], header: list[str]) -> str:
    """A markdown table of preformatted cells (``disable_numparse``: "1.00" stays "1.00"); tabulate does not escape
    "|", so a cell that may hold one is passed through ``_escape`` first."""
    return pd.DataFrame(rows, columns=header).to_markdown(index=False, disable_numparse=True)


def runs_markdown(runs: list[dict], exploratory: dict) -> str:
    """One row per run: seeds, task, how it differs from the exploratory config, the experiments it leaves out, and
    its file's note on why (``confirmation.note``)."""
    header = ["run", "seeds", "V", "training lengths", "K", "differs from the exploratory config in", "left out", "why"]
    rows = []
    for run in [exploratory, *runs]:
        left_out = ", ".join(f"`{name}` ({reason})" for name, reason in run["left_out"].items()) or "nothing"
        differences = "; ".join(f"`{entry}`" for entry in run.get("differences", [])) or "-"
        rows.append([f"{run['name']}", ", ".join(map(str, run["seeds"])), f"{run['vocab_size']}",
                     f"{run['train_lengths'][0]}..{run['train_lengths'][1]}", ", ".join(map(str, run["offsets"])),
                     _escape(differences), left_out, _escape(run.get("note") or "-")])
    return _markdown(rows, header)


def rules_markdown(record: dict, rule_files: list[str]) -> str:
    files = ", ".join(f"`{path}`" for path in rule_files)
    if record["error"]:
        return (f"**Rules fixed before the confirmation runs**: not established ({record['error']}). The rules and "
                f"predictors ({files}) the runs applied are those of this checkout.")
    head = (f"**Rules fixed before the confirmation runs**: commit `{record['commit'][:12]}` ({record['date']}, "
            f"\"{record['subject']}\"). Every claim rule and predictor the runs applied is in {files}. ")
    if not record["changes"] and not record["diffstat"]:
        return head + "None of these files has changed since that commit."
    changes = "\n".join(f"- `{line}`" for line in record["changes"]) or "- (no commit: uncommitted edits)"
    return (head + "They changed since that commit, so the confirmation does not test these rules as fixed:\n\n"
            + changes + "\n\n```\n" + record["diffstat"] + "\n```")


def claims_markdown(claims: pd.DataFrame, run_names: list[str]) -> str:
    header = ["claim", "exploratory", *run_names, "replication", "why not (checks)"]
    rows = []
    for row in claims.itertuples():
        cells = [f"`{row.experiment}`", row.verdicts.get(EXPLORATORY, "-")]
        for run in run_names:
            if run not in row.verdicts:
                cells.append("not run")
                continue
            replicated = row.replicates.get(run)
            cells.append(row.verdicts[run] + ("" if replicated is None else " (replicates)" if replicated else
                                              " (does not replicate)"))
        causes = ", ".join(f"{name}: {count}" for name, count in row.causes.items()) or "-"
        rows.append(cells + [f"**{row.replication}**", causes])
    return _markdown(rows, header)


def _failure_line(check) -> str:
    """One check of ``compare_runs`` that does not replicate: run, names, outcomes, cause and numbers."""
    return (f"{check.run}, *{_escape(check.claim)} \\| {_escape(check.statistic)}*: {check.exploratory_outcome} -> "
            f"{check.outcome}; **{check.cause}**: {_escape(check.explanation)}.")


def reasons_markdown(claims: pd.DataFrame, comparison: pd.DataFrame) -> str:
    """Per claim that is not replicated (or partly): each evidence check that does not replicate, its cause and
    numbers."""
    evidence = comparison[comparison["kind"] == "evidence"]
    items = []
    for row in claims[claims["replication"].isin(["not replicated", "partly"])].itertuples():
        failed = evidence[(evidence["experiment"] == row.experiment) & ~evidence["replicates"]]
        lines = [f"- **`{row.experiment}`: {row.replication}.** "
                 + "; ".join(f"{count} check(s) by {name}" for name, count in row.causes.items()) + "."]
        lines += [f"  - {_failure_line(check)}" for check in failed.itertuples()]
        items.append("\n".join(lines))
    return "\n".join(items) if items else "Every claim measured by a confirmation run replicated."


def sanity_markdown(comparison: pd.DataFrame) -> str:
    """The sanity checks (tests of the code) that do not replicate: each points at a bug, not at the claim."""
    sanity = comparison[comparison["kind"] == "sanity"]
    failed = sanity[~sanity["replicates"].astype(bool)]
    if failed.empty:
        return (f"**Sanity checks** (tests of the code; in no claim's replication): all {len(sanity)} compared "
                "replicate." if len(sanity) else "**Sanity checks**: none compared.")
    lines = [f"**Sanity checks** (tests of the code; in no claim's replication): {len(failed)} of {len(sanity)} "
             "compared do not replicate, so the code behaves differently in another run:"]
    lines += [f"- `{check.experiment}`: {_failure_line(check)}" for check in failed.itertuples()]
    return "\n".join(lines)


def checks_markdown(checks: pd.DataFrame, comparison: pd.DataFrame, run_names: list[str], kind: str) -> str:
    """Every check of ``kind``, one row per (check, offset), its value in each run as ``value [95% interval], share
    of resamples in which it holds, k/n seeds fail: holds``; and whether the check replicates over the study."""
    replicated = comparison.groupby(CHECK, sort=False)["replicates"].apply(replication_verdict)
    header = ["claim", "check", "K", "rule (exploratory)", EXPLORATORY, *run_names, "check replication"]
    table = []
    ordered = report_order(checks)
    ordered = ordered[ordered["kind"] == kind]
    for (experiment, claim, statistic, offset), rows in ordered.groupby(KEY, sort=False, dropna=False):
        by_run = {run: rows[rows["run"] == run] for run in [EXPLORATORY, *run_names]}
        rule = (by_run[EXPLORATORY] if len(by_run[EXPLORATORY]) else rows)["rule"].iloc[0]
        status = replicated.get((experiment, claim, statistic), "not tested")
        table.append([f"`{experiment}`", _escape(f"{claim} | {statistic}"), instance_name(offset), _escape(rule),
                      *(_cell(by_run[run]) for run in [EXPLORATORY, *run_names]), status])
    return _markdown(table, header)


def section_markdown(checks: pd.DataFrame, comparison: pd.DataFrame, claims: pd.DataFrame, runs: list[dict],
                     exploratory: dict, record: dict, rule_files: list[str], history: str,
                     figure: str = "replication.png") -> str:
    run_names = [run["name"] for run in runs]
    seeds = int(checks.loc[checks["run"] == EXPLORATORY, "n_seeds"].max())
    tally = claims["replication"].value_counts()
    summary = ", ".join(f"{tally[name]} {name}" for name in ("replicated", "partly", "not replicated", "not tested")
                        if name in tally)
    sanity = (["**Sanity checks** in every run (tests of the code; in no verdict and no replication):",
               checks_markdown(checks, comparison, run_names, "sanity")] if (checks["kind"] == "sanity").any() else [])
    return "\n\n".join([
        "## replication: do the verdicts hold on fresh seeds and other tasks?",
        f"The verdicts above come from one configuration, the exploratory run. The confirmation study reruns every "
        f"experiment under {len(runs)} other configuration{'s' if len(runs) > 1 else ''} (fresh seeds, other task "
        f"settings), each with every rule of the workflow, and compares each check with its exploratory outcome. "
        f"Of {len(claims)} claims: {summary}.",
        rules_markdown(record, rule_files),
        runs_markdown(runs, exploratory),
        f"**Rule.** Checks are matched across runs by their experiment, claim and statistic, names that no setting "
        f"changes (the numbers that follow the settings, such as n = 4 x the training length, are in the rule's "
        f"text), per offset K; {REPLICATION_RULE}. Only evidence checks count toward a claim's replication; sanity "
        f"checks (tests of the code) are compared apart. Where a check does not replicate, its cause is "
        f"{CAUSE_RULE}. The spread of every checked statistic is a "
        f"seed bootstrap: the run's seeds resampled with replacement, every check recomputed, its statistic's "
        f"central {SPREAD_INTERVAL:.0%} over the resamples (here {seeds} seeds in the exploratory run). For a "
        f"statistic that is a minimum (maximum) over seeds a resample cannot go below (above) the value measured, "
        f"so its interval starts (ends) there, and one failing seed of five leaves the outcome open (it holds in the "
        f"(4/5)^5 = 33% of resamples that leave that seed out). What the seeds say is then counted directly: every "
        f"check is also computed on each seed alone, and k of n is on how many of the n seeds it fails.",
        worked_example(),
        claims_markdown(claims, run_names),
        "**Why a claim does not replicate**, check by check, with each run's values (95% bootstrap interval, the "
        "share of resamples in which the check holds, on how many seeds it fails computed on each alone):",
        reasons_markdown(claims, comparison),
        sanity_markdown(comparison),
        f"![every check in every run](figures/{figure})",
        "**Every check** in every run: value [95% seed-bootstrap interval], share of resamples in which it holds, "
        "k/n seeds on which it fails computed on each alone (none where one seed gives it no value), and whether it "
        "holds (yes/no); `-` where the run does not measure it. The numbers in a rule (such as the "
        "length n) follow each run's settings; the rule shown is the exploratory run's.",
        checks_markdown(checks, comparison, run_names, "evidence"),
        *sanity,
        history,
    ]) + "\n"
