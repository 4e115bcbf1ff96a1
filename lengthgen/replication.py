"""Replication: each check of the exploratory run beside the same check in every confirmation run.

A check is matched across runs by its identity (``claims.check_identity``): its experiment, its
text with the numbers that follow the settings written ``#``, and its instance (the offset K it is
about, or ``all``). Its *outcome* in a run is ``holds`` (at every offset it is measured at), ``fails``
(at none) or ``partly``.

The rule (``rules.REPLICATION_RULE``, with its reason), fixed with the claims' rules before the confirmation runs:

- a check *replicates* in a confirmation run when it has the exploratory outcome at every offset both
  runs measure, and, at an offset only the confirmation run measures, the outcome the exploratory run
  had at all of its offsets (where it was partly, the exploratory run predicts nothing there);
- a claim (an experiment's) replicates in a run when every check compared there replicates;
- over the confirmation runs that compare it, a claim or a check is *replicated* when it replicates
  in every one, *not replicated* in none, *partly* otherwise (*not tested* where none compares it).

Where a check does not replicate, the cause (``rules.CAUSE_RULE``), from the seed bootstrap of both runs
(``lengthgen.bootstrap``) and the distance of each value from its threshold:

- *measurement*: in either run the outcome is open (it holds in fewer than ``DECIDED_FRACTION`` and
  more than 1 - ``DECIDED_FRACTION`` of the seed resamples, or there is one seed), or the run poses the
  same task with fresh seeds, so seeds alone turned it: too few samples;
- *rule*: decided in both runs, on another task, and the failing side misses the threshold by no more
  than the other side clears it (distances relative to the threshold): the threshold sits between two
  settings' values of a statistic that moved less than its margin, a threshold that fit one setting;
- *claim*: decided in both, on another task, and the miss is larger than the other side's margin: the
  effect itself differs in that setting, the phenomenon is not general.

Everything here reads tables and plain data: no torch.
"""

import math
import operator
import re

import pandas as pd

from lengthgen.claims import check_identities, verdict
from lengthgen.rules import CAUSE_RULE, DECIDED_FRACTION, REPLICATION_RULE, RULE_CAUSE_MAX_MISS, SPREAD_INTERVAL

EXPLORATORY = "exploratory"
IDENTITY = ["family", "check", "instance"]
CHECK = ["family", "check"]
COMPARISONS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq}
_COMPARISON = re.compile(r"<=|>=|==|<|>")

# ---------------------------------------------------------------------------------------------
# Thresholds and margins


def rule_threshold(rule: str) -> tuple[str, float] | None:
    """(comparison, threshold) of a check's rule text, e.g. ``>= 5 x chance = 0.312`` -> (">=", 0.312):
    the last comparison in the text and the number after it (after its last ``=`` where it names one,
    before any parenthesis). None where the text names no number there."""
    found = list(_COMPARISON.finditer(rule))
    if not found:
        return None
    last = found[-1]
    rest = rule[last.end():].split("(")[0]
    try:
        return last.group(), float(rest.rsplit("=", 1)[-1])
    except ValueError:
        return None


def margin(value: float, rule: str) -> float:
    """How far ``value`` lies on the passing side of its rule's threshold, relative to the threshold (to 1
    where it is 0); negative on the failing side; NaN where the rule names no threshold. An equality has no
    passing side: its margin is 0 when it holds."""
    parsed = rule_threshold(rule)
    if parsed is None or value is None or math.isnan(value):
        return math.nan
    comparison, threshold = parsed
    scale = abs(threshold) or 1.0
    if comparison == "==":
        return -abs(value - threshold) / scale
    sign = 1.0 if comparison in (">=", ">") else -1.0
    return sign * (value - threshold) / scale


# ---------------------------------------------------------------------------------------------
# Every run's checks, side by side


def annotated_checks(runs: dict[str, tuple[pd.DataFrame, pd.DataFrame]]) -> pd.DataFrame:
    """One row per check of every run: run, identity, the ``all_claims`` columns and the ``claim_spread`` ones,
    whether the bootstrap decides the outcome, and the verdict of the check's experiment in that run (over all
    its sections: shift_K1 and shift_K2 make one). ``runs``: run name -> (all_claims, claim_spread), the
    exploratory run first."""
    keys = ["experiment", "claim", "statistic"]
    frames = []
    for run, (claims, spread) in runs.items():
        claims, spread = claims.reset_index(drop=True), spread.reset_index(drop=True)
        if not claims[keys].equals(spread[keys]):
            raise ValueError(f"run {run}: the claim spreads do not list the checks of its claims table")
        frames.append(check_identities(claims).join(spread.drop(columns=keys)).assign(run=run))
    checks = pd.concat(frames, ignore_index=True)
    decided = (checks["n_seeds"] >= 2) & ((checks["holds_fraction"] >= DECIDED_FRACTION)
                                          | (checks["holds_fraction"] <= 1 - DECIDED_FRACTION))
    verdicts = checks.groupby(["run", "family"], sort=False)["holds"].agg(
        lambda holds: verdict(pd.DataFrame({"holds": holds}))).rename("family_verdict")
    return checks.assign(decided=decided).join(verdicts, on=["run", "family"])


def outcome(holds: pd.Series) -> str:
    return "holds" if holds.all() else "fails" if not holds.any() else "partly"


def check_outcomes(checks: pd.DataFrame) -> pd.DataFrame:
    """Per (run, family, check): its outcome over its instances, and whether the bootstrap decides all of them."""
    grouped = checks.groupby(["run", *CHECK], sort=False)
    return pd.DataFrame({"outcome": grouped["holds"].agg(outcome), "decided": grouped["decided"].all()})


def describe_values(rows: pd.DataFrame) -> str:
    """``run K=1: 0.709 [0.63, 0.79], holds in 88%`` for each instance, and the rule."""
    parts = [f"{row.run} {row.instance}: {row.value:.3g} [{row.spread_low:.3g}, {row.spread_high:.3g}], holds in "
             f"{row.holds_fraction:.0%} of resamples" for row in rows.itertuples()]
    return "; ".join(parts) + f" (rule {rows['rule'].iloc[0]})"


def margins(rows: pd.DataFrame) -> pd.Series:
    return pd.Series([margin(value, rule) for value, rule in zip(rows["value"], rows["rule"])], dtype=float)


def expectations(exploratory: pd.DataFrame, confirmation: pd.DataFrame) -> list[tuple[pd.Series, bool, pd.DataFrame]]:
    """(confirmation row, the outcome the exploratory run expects there, the exploratory rows it comes from) for
    every instance of one check that the exploratory run makes a prediction for: its own outcome at an instance
    both runs measure; at another offset, the outcome it had at all of its own (none where that was partly)."""
    pooled = outcome(exploratory["holds"])
    by_instance = dict(iter(exploratory.groupby("instance", sort=False)))
    found = []
    for _, row in confirmation.iterrows():
        if row["instance"] in by_instance:
            reference = by_instance[row["instance"]]
            found.append((row, bool(reference["holds"].iloc[0]), reference))
        elif pooled != "partly":
            found.append((row, pooled == "holds", exploratory))
    return found


def cause(mismatches: list[tuple[pd.Series, bool, pd.DataFrame]], same_task: bool) -> tuple[str, str]:
    """(cause, explanation with the numbers) of the instances where a confirmation run does not have the outcome
    the exploratory run expects (``expectations``), by ``CAUSE_RULE``."""
    confirmation = pd.DataFrame([row for row, _, _ in mismatches])
    exploratory = pd.concat([reference for _, _, reference in mismatches]).drop_duplicates("instance")
    both = pd.concat([exploratory, confirmation], ignore_index=True)
    numbers = describe_values(both)
    if not both["decided"].all():
        return "measurement", f"the outcome is open in at least one run: {numbers}"
    if same_task:
        return "measurement", (f"the same task with fresh seeds turns it although each run's bootstrap decides it, so "
                               f"{int(both['n_seeds'].max())} seeds per run understate the seed-to-seed spread: {numbers}")
    misses, clears = [], []
    for row, expected, reference in mismatches:
        failing, passing = (pd.DataFrame([row]), reference) if expected else (reference, pd.DataFrame([row]))
        misses += list(-margins(failing[~failing["holds"]]))
        clears += list(margins(passing[passing["holds"]]))
    miss, clear = max(misses, default=0.0), float(pd.Series(clears, dtype=float).median()) if clears else 0.0
    where = (f"the failing side misses the threshold by up to {miss:.0%} of it, the other clears it by {clear:.0%} "
             "(median)")
    if miss <= RULE_CAUSE_MAX_MISS * clear:
        return "rule", f"{where}: the threshold sits between the two settings' values; {numbers}"
    return "claim", f"{where}: the effect itself differs in this setting; {numbers}"


def compare_runs(checks: pd.DataFrame, same_task: dict[str, bool]) -> pd.DataFrame:
    """Per (family, check, confirmation run) where the exploratory run expects an outcome (``expectations``):
    both runs' outcomes over their own offsets, whether it replicates (every expected outcome met), and if not
    its cause and explanation."""
    explored = dict(iter(checks[checks["run"] == EXPLORATORY].groupby(CHECK, sort=False)))
    rows = []
    for run, run_checks in checks[checks["run"] != EXPLORATORY].groupby("run", sort=False):
        for key, confirmation in run_checks.groupby(CHECK, sort=False):
            expected = expectations(explored[key], confirmation) if key in explored else []
            if not expected:
                continue  # the exploratory run makes no prediction here
            mismatches = [entry for entry in expected if bool(entry[0]["holds"]) != entry[1]]
            found = cause(mismatches, same_task[run]) if mismatches else ("", "")
            rows.append({"family": key[0], "check": key[1], "run": run,
                         "exploratory_outcome": outcome(explored[key]["holds"]),
                         "outcome": outcome(confirmation["holds"]), "replicates": not mismatches,
                         "cause": found[0], "explanation": found[1]})
    return pd.DataFrame(rows, columns=["family", "check", "run", "exploratory_outcome", "outcome", "replicates",
                                       "cause", "explanation"])


def replication_verdict(replicates: pd.Series) -> str:
    """Over the confirmation runs that measure it: ``REPLICATION_RULE``."""
    if replicates.empty:
        return "not tested"
    return "replicated" if replicates.all() else "not replicated" if not replicates.any() else "partly"


def claim_replication(checks: pd.DataFrame, comparison: pd.DataFrame) -> pd.DataFrame:
    """Per experiment (family): its verdict in each run, whether it replicates in each confirmation run, its
    replication verdict, and the causes of the checks that do not replicate (cause -> count)."""
    verdicts = checks.drop_duplicates(["run", "family"]).pivot(index="family", columns="run", values="family_verdict")
    in_run = comparison.groupby(["family", "run"], sort=False)["replicates"].all()
    rows = []
    for family in dict.fromkeys(checks["family"]):
        replicates = in_run[family] if family in in_run.index.get_level_values(0) else pd.Series(dtype=bool)
        failed = comparison[(comparison["family"] == family) & ~comparison["replicates"]]
        rows.append({"family": family, "verdicts": verdicts.loc[family].dropna().to_dict(),
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
    table["replication"] = table["family"].map(claims.set_index("family")["replication"])
    return table.rename(columns={"family_verdict": "claim_verdict"})


# ---------------------------------------------------------------------------------------------
# The RESULTS.md section


def report_order(checks: pd.DataFrame) -> pd.DataFrame:
    """Checks in report order: experiments and checks as they first appear (the exploratory run first), then by
    offset (``all`` first)."""
    rank = {column: {value: index for index, value in enumerate(dict.fromkeys(checks[column]))}
            for column in ("family", "check")}
    offset = checks["instance"].str.removeprefix("K=").replace("all", "0").astype(int)
    keys = pd.DataFrame({"family": checks["family"].map(rank["family"]), "check": checks["check"].map(rank["check"]),
                         "offset": offset})
    return checks.loc[keys.sort_values(["family", "check", "offset"], kind="stable").index]


def _cell(rows: pd.DataFrame) -> str:
    if rows.empty:
        return "-"
    row = rows.iloc[0]
    mark = "yes" if row["holds"] else "no"
    spread = "" if row["n_seeds"] < 2 else f" [{row['spread_low']:.3g}, {row['spread_high']:.3g}], {row['holds_fraction']:.0%}"
    return f"{row['value']:.3g}{spread} {mark}"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def runs_markdown(runs: list[dict], exploratory: dict) -> str:
    """One row per run: seeds, task, how it differs from the exploratory config, the experiments it leaves out, and
    its file's note on why (``confirmation.note``)."""
    lines = ["| run | seeds | V | training lengths | K | differs from the exploratory config in | left out | why |",
             "|---|---|---|---|---|---|---|---|"]
    for run in [exploratory, *runs]:
        left_out = ", ".join(f"`{name}` ({reason})" for name, reason in run["left_out"].items()) or "nothing"
        differences = "; ".join(f"`{entry}`" for entry in run.get("differences", [])) or "-"
        lines.append(f"| {run['name']} | {', '.join(map(str, run['seeds']))} | {run['vocab_size']} | "
                     f"{run['train_lengths'][0]}..{run['train_lengths'][1]} | {', '.join(map(str, run['offsets']))} | "
                     f"{_escape(differences)} | {left_out} | {_escape(run.get('note') or '-')} |")
    return "\n".join(lines)


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
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in claims.itertuples():
        cells = [f"`{row.family}`", row.verdicts.get(EXPLORATORY, "-")]
        for run in run_names:
            if run not in row.verdicts:
                cells.append("not run")
                continue
            replicated = row.replicates.get(run)
            cells.append(row.verdicts[run] + ("" if replicated is None else " (replicates)" if replicated else
                                              " (does not replicate)"))
        causes = ", ".join(f"{name}: {count}" for name, count in row.causes.items()) or "-"
        lines.append("| " + " | ".join(cells + [f"**{row.replication}**", causes]) + " |")
    return "\n".join(lines)


def reasons_markdown(claims: pd.DataFrame, comparison: pd.DataFrame) -> str:
    """Per claim that is not replicated (or partly): each check that does not replicate, its cause and numbers."""
    items = []
    for row in claims[claims["replication"].isin(["not replicated", "partly"])].itertuples():
        failed = comparison[(comparison["family"] == row.family) & ~comparison["replicates"]]
        lines = [f"- **`{row.family}`: {row.replication}.** "
                 + "; ".join(f"{count} check(s) by {name}" for name, count in row.causes.items()) + "."]
        for check in failed.itertuples():
            lines.append(f"  - {check.run}, *{_escape(check.check)}*: {check.exploratory_outcome} -> {check.outcome}; "
                         f"**{check.cause}**: {_escape(check.explanation)}.")
        items.append("\n".join(lines))
    return "\n".join(items) if items else "Every claim measured by a confirmation run replicated."


def checks_markdown(checks: pd.DataFrame, comparison: pd.DataFrame, run_names: list[str]) -> str:
    """Every check, one row per (check, offset), its value in each run as ``value [95% interval], share of
    resamples in which it holds, holds``; and whether the check replicates over the study."""
    replicated = comparison.groupby(CHECK, sort=False)["replicates"].apply(replication_verdict)
    header = ["claim", "check", "K", "rule (exploratory)", EXPLORATORY, *run_names, "check replication"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for (family, check, instance), rows in report_order(checks).groupby(IDENTITY, sort=False):
        by_run = {run: rows[rows["run"] == run] for run in [EXPLORATORY, *run_names]}
        rule = (by_run[EXPLORATORY] if len(by_run[EXPLORATORY]) else rows)["rule"].iloc[0]
        status = replicated.get((family, check), "not tested")
        lines.append("| " + " | ".join([f"`{family}`", _escape(check), instance, _escape(rule),
                                         *(_cell(by_run[run]) for run in [EXPLORATORY, *run_names]), status]) + " |")
    return "\n".join(lines)


def section_markdown(checks: pd.DataFrame, comparison: pd.DataFrame, claims: pd.DataFrame, runs: list[dict],
                     exploratory: dict, record: dict, rule_files: list[str], history: str,
                     figure: str = "replication.png") -> str:
    run_names = [run["name"] for run in runs]
    seeds = int(checks.loc[checks["run"] == EXPLORATORY, "n_seeds"].max())
    tally = claims["replication"].value_counts()
    summary = ", ".join(f"{tally[name]} {name}" for name in ("replicated", "partly", "not replicated", "not tested")
                        if name in tally)
    return "\n\n".join([
        "## replication: do the verdicts hold on fresh seeds and other tasks?",
        f"The verdicts above come from one configuration, the exploratory run. The confirmation study reruns every "
        f"experiment under {len(runs)} other configuration{'s' if len(runs) > 1 else ''} (fresh seeds, other task "
        f"settings), each with every rule of the workflow, and compares each check with its exploratory outcome. "
        f"Of {len(claims)} claims: {summary}.",
        rules_markdown(record, rule_files),
        runs_markdown(runs, exploratory),
        f"**Rule.** Checks are matched across runs by their text with the numbers that follow the settings "
        f"(lengths such as n = 4 x the training length, seed counts) left out, per offset K; {REPLICATION_RULE}. "
        f"Where a check does not replicate, its cause is {CAUSE_RULE}. The spread of every checked statistic is a "
        f"seed bootstrap: the run's seeds resampled with replacement, every check recomputed, its statistic's "
        f"central {SPREAD_INTERVAL:.0%} over the resamples (here {seeds} seeds in the exploratory run). For a "
        f"statistic that is a minimum (maximum) over seeds a resample cannot go below (above) the value measured, "
        f"so its interval starts (ends) there; the share of resamples in which the check holds is then the measure "
        f"of how firmly the seeds decide it.",
        claims_markdown(claims, run_names),
        "**Why a claim does not replicate**, check by check, with each run's values (95% bootstrap interval, the "
        "share of resamples in which the check holds):",
        reasons_markdown(claims, comparison),
        f"![every check in every run](figures/{figure})",
        "**Every check** in every run: value [95% seed-bootstrap interval], share of resamples in which it holds, "
        "and whether it holds (yes/no); `-` where the run does not measure it. Numbers in a check's text (such as "
        "the length n) follow each run's settings; the rule shown is the exploratory run's.",
        checks_markdown(checks, comparison, run_names),
        history,
    ]) + "\n"
