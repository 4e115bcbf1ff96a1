"""The replication section of RESULTS.md: the runs, the rules, each claim's replication and why, every check in every run.

Not an experiment: its computation (``lengthgen.studies.confirmation.replication``: the checks side by side, the replication rule, the
causes) runs in the replication job, which passes its tables here. Nothing here decides an outcome or a cause.
"""

import pandas as pd

from lengthgen.checks.check import KEY
from lengthgen.studies.confirmation.replication import (CHECK, EXPLORATORY, ONE_SEED, OPEN_WITHOUT_COUNT, Evidence, decide_cause,
                                   instance_name, margin, replication_verdict)
from lengthgen.checks.shared_rules import CAUSE_RULE, REPLICATION_RULE, SPREAD_INTERVAL
from lengthgen.checks.verdicts import DOES_NOT_HOLD, IN_PART, UNTESTABLE, VERDICTS


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
    lines = [f"- {name}: **{found.cause}** ({found.why})." for name, found in
             ((name, decide_cause(case)) for name, case in cases)]
    return ("**Worked example** (illustrative numbers). A check that the learned head keeps most attention mass "
            "inside the training range, `min over seeds >= 0.5`, holds in the exploratory run at K=1..3 (worst "
            "seed 0.62, clearing the threshold by 24% of it; 0 of 30 seed-offset pairs fail alone) and is compared "
            "at K=4 in a run on another task, where one of 10 seeds does not pin (mass 0.248, a miss of 50%): the "
            "check fails there and holds in 35% of the seed resamples (those that leave that seed out), so the "
            "bootstrap leaves it open.\n\n"
            + "\n".join(lines))




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
    """``0.0519 [0.00744, 0.116], 63%, 7/10 seeds fail; rule <= 0.0865: yes``: the value, its spread, the failing
    seeds and the threshold of the run's own rule (some follow the run's settings or data)."""
    if rows.empty:
        return "-"
    row = rows.iloc[0]
    mark = "yes" if row["holds"] else "no"
    spread = ("" if row["n_seeds"] < 2 else
              f" [{row['spread_low']:.3g}, {row['spread_high']:.3g}], {row['holds_fraction']:.0%}")
    seeds = "" if pd.isna(row["seeds_failing"]) else f", {row['seeds_failing']}/{row['seeds_checked']} seeds fail"
    return f"{row['value']:.3g}{spread}{seeds}; rule {row['comparison']} {row['threshold']:.4g}: {mark}"


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
    for row in claims[claims["replication"].isin([DOES_NOT_HOLD, IN_PART])].itertuples():
        failed = evidence[(evidence["experiment"] == row.experiment) & ~evidence["replicates"]]
        lines = [f"- **`{row.experiment}`: {row.replication}.** "
                 + "; ".join(f"{count} check(s) by {name}" for name, count in row.causes.items()) + "."]
        lines += [f"  - {_failure_line(check)}" for check in failed.itertuples()]
        items.append("\n".join(lines))
    return "\n".join(items) if items else "Every claim measured by a confirmation run replicated."


def undecidable_markdown(comparison: pd.DataFrame) -> str:
    """How many evidence checks that do not replicate are *measurement* only because the data cannot decide a
    cause (``replication.UNDECIDABLE``): a run with one seed, or no per-seed count and an outcome left open."""
    failed = comparison[(comparison["kind"] == "evidence") & ~comparison["replicates"].astype(bool)]
    one_seed, open_without_count = ((failed["basis"] == basis).sum() for basis in (ONE_SEED, OPEN_WITHOUT_COUNT))
    return (f"Of the {len(failed)} evidence checks that do not replicate, {one_seed} are *measurement* because a run "
            f"compared has one seed, and {open_without_count} because the check is not counted per seed and the seed "
            "bootstrap leaves its outcome open in a run: for these the data cannot tell a cause, so *measurement* is "
            "a default there, not a finding.")


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
        status = replicated.get((experiment, claim, statistic), UNTESTABLE)
        table.append([f"`{experiment}`", _escape(f"{claim} | {statistic}"), instance_name(offset), _escape(rule),
                      *(_cell(by_run[run]) for run in [EXPLORATORY, *run_names]), status])
    return _markdown(table, header)


def section(checks: pd.DataFrame, comparison: pd.DataFrame, claims: pd.DataFrame, runs: list[dict], exploratory: dict,
            record: dict, rule_files: list[str], history: str, figure: str = "replication.png") -> str:
    run_names = [run["name"] for run in runs]
    seeds = int(checks.loc[checks["run"] == EXPLORATORY, "n_seeds"].max())
    tally = claims["replication"].value_counts()
    summary = ", ".join(f"{tally[name]} {name}" for name in VERDICTS if name in tally)
    sanity = (["**Sanity checks** in every run (tests of the code; in no verdict and no replication):",
               checks_markdown(checks, comparison, run_names, "sanity")] if (checks["kind"] == "sanity").any() else [])
    return "\n\n".join([
        "## replication: do the verdicts hold on fresh seeds and other tasks?",
        f"The verdicts of the results page come from one configuration, the exploratory run. The confirmation study "
        f"reruns every experiment under {len(runs)} other configuration{'s' if len(runs) > 1 else ''} (fresh seeds, other task "
        f"settings), each with every rule of the workflow, and compares each check with its exploratory outcome. "
        f"Of {len(claims)} experiments: {summary}.",
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
        "share of resamples in which the check holds, on how many seeds it fails computed on each alone) and the rule "
        "that run applied:",
        reasons_markdown(claims, comparison),
        undecidable_markdown(comparison),
        sanity_markdown(comparison),
        f"![every check in every run](figures/{figure})",
        "**Every check** in every run: value [95% seed-bootstrap interval], share of resamples in which it holds, "
        "k/n seeds on which it fails computed on each alone (none for a check not counted per seed), the threshold "
        "of the run's own rule, and whether it holds (yes/no); `-` where the run does not measure it. The numbers in "
        "a rule follow each run's settings (such as the length n) or data (such as cures' recovery bar, half the "
        "run's own hard-attention limit); the rule text shown beside the check is the exploratory run's.",
        checks_markdown(checks, comparison, run_names, "evidence"),
        *sanity,
        history,
    ]) + "\n"
