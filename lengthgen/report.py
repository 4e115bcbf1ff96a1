"""RESULTS.md: the setup it was run with, what this reproduction finds, then each experiment's generated section."""

import datetime
import os
import platform
import shutil
import subprocess
from importlib import metadata

import pandas as pd
import yaml

from lengthgen.claims import VERDICT_RULE, verdict
from lengthgen.findings import findings_markdown
from lengthgen.jobs import PORTABLE_CPU_ENV
from lengthgen.thresholds import DECIDED_FRACTION, SPREAD_INTERVAL


def code_version(repository: str, exclude: list[str]) -> str:
    """The last commit of ``repository`` that changed anything outside the ``exclude`` folders,
    marked ``-dirty`` when tracked files outside them differ from HEAD.

    The workflow's own outputs (the committed RESULTS.md and figures) live in excluded folders,
    so writing or committing them does not change the version they report.
    """
    inside = [path for path in exclude if not os.path.isabs(path) and not path.startswith("..")]
    pathspec = ["--", ".", *(f":(exclude){path}" for path in inside)]
    try:
        commit = git(repository, "log", "-1", "--format=%H", *pathspec)
        dirty = git(repository, "status", "--porcelain", "--untracked-files=no", *pathspec)
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown (not a git checkout)"
    return commit + ("-dirty" if dirty else "")


def git(repository: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repository, *args], capture_output=True, text=True, check=True).stdout.strip()


def rules_record(repository: str, commit: str | None, paths: tuple[str, ...]) -> dict:
    """The commit the rules were fixed at, and every change to ``paths`` since, as plain data: commit
    (full hash), date, subject, ``changes`` (one ``hash subject`` line per later commit touching them),
    ``diffstat`` (``git diff --stat`` of the checkout, uncommitted edits included, against the commit),
    and ``error`` (why none of it could be read, else empty)."""
    record = {"commit": commit or "", "date": "", "subject": "", "changes": [], "diffstat": "", "error": ""}
    if not commit:
        record["error"] = "no commit recorded (confirmation.rules_commit is null)"
        return record
    try:
        full, date, subject = git(repository, "log", "-1", "--date=short", "--format=%H%x09%ad%x09%s",
                                  f"{commit}^{{commit}}").split("\t", 2)
        git(repository, "merge-base", "--is-ancestor", full, "HEAD")  # fails unless HEAD descends from it
        changes = git(repository, "log", "--format=%h %s", f"{full}..HEAD", "--", *paths)
        diffstat = git(repository, "diff", "--stat", full, "--", *paths)
    except (subprocess.CalledProcessError, FileNotFoundError, ValueError):
        record["error"] = f"commit {commit} is not in this checkout's history (or this is not a git checkout)"
        return record
    record.update(commit=full, date=date, subject=subject, changes=changes.splitlines(), diffstat=diffstat)
    return record


def gpu_names() -> list[str]:
    """The GPUs ``nvidia-smi`` lists; none where it is absent. Asked without importing torch,
    which would cost the report job seconds of start-up."""
    if shutil.which("nvidia-smi") is None:
        return []
    listing = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True)
    return [line.strip() for line in listing.stdout.splitlines() if line.strip()] if listing.returncode == 0 else []


def machine_description() -> str:
    gpus = gpu_names()
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
            f"{', '.join(gpus) if gpus else 'no GPU'}; Python {platform.python_version()}, "
            f"torch {metadata.version('torch')}; CPU kernels: "
            + ", ".join(f"{name}={os.environ.get(name, 'unset')}" for name in PORTABLE_CPU_ENV))


def verdict_table(claims: pd.DataFrame, replication: dict[str, str] | None = None) -> str:
    """One row per section: checks holding and the verdict, and with ``replication`` (experiment -> its
    replication verdict over the confirmation runs) that verdict beside it."""
    rows = []
    for (section, experiment), checks in claims.groupby(["section", "experiment"], sort=False):
        evidence = checks[checks["kind"] == "evidence"]
        row = {"experiment": section, "evidence checks holding": f"{int(evidence['holds'].sum())}/{len(evidence)}",
               "sanity checks holding": f"{int(checks['holds'].sum()) - int(evidence['holds'].sum())}/"
                                        f"{len(checks) - len(evidence)}",
               "verdict": verdict(checks)}
        if replication:
            row["replication"] = replication.get(experiment, "not tested")
        rows.append(row)
    return pd.DataFrame(rows).to_markdown(index=False)


def spread_markdown(checks: pd.DataFrame) -> str:
    """How many of a section's checks the seed bootstrap decides (the same outcome in at least
    ``DECIDED_FRACTION`` of its resamples), and each open one with its statistic's interval beside its rule."""
    n_seeds, resamples = int(checks["n_seeds"].max()), int(checks["resamples"].max())
    if n_seeds < 2:
        return f"Seed bootstrap: {n_seeds} seed, so no seed-to-seed spread to measure."
    share = checks["holds_fraction"]
    open_checks = checks[(share < DECIDED_FRACTION) & (share > 1 - DECIDED_FRACTION)]
    text = (f"Seed bootstrap ({resamples} resamples of the {n_seeds} seeds, `lengthgen/bootstrap.py`): "
            f"{len(checks) - len(open_checks)} of {len(checks)} checks have the same outcome in at least "
            f"{DECIDED_FRACTION:.0%} of resamples.")
    if open_checks.empty:
        return text
    return text + " Open, so decided by the seeds drawn: " + "; ".join(
        f"{row.claim}, {row.statistic}{'' if pd.isna(row.offset) else f' (K={row.offset})'}: {row.value:.4g}, {SPREAD_INTERVAL:.0%} interval [{row.spread_low:.4g}, "
        f"{row.spread_high:.4g}] (rule {row.rule}), holds in {row.holds_fraction:.0%} of resamples"
        for row in open_checks.itertuples()) + "."


def with_verdict(section: str, checks: pd.DataFrame) -> str:
    """An experiment's section followed by its verdict, computed from its checks, and (when ``checks`` carry
    their ``claim_spread`` columns) how far the seed bootstrap decides them."""
    evidence = checks[checks["kind"] == "evidence"]
    held = f"{int(evidence['holds'].sum())}/{len(evidence)} evidence checks hold"
    spread = f"\n\n{spread_markdown(checks)}" if "holds_fraction" in checks else ""
    return f"{section.rstrip()}\n\n**Verdict: {verdict(checks)}** ({held}; {VERDICT_RULE}).{spread}\n"


def left_out_markdown(left_out: dict[str, str]) -> str:
    """The experiments this config cannot run, one line each with the reason (``experiments.catalog``)."""
    lines = [f"- `{experiment}`: {reason}" for experiment, reason in left_out.items()]
    return "Left out under this configuration:\n\n" + "\n".join(lines)


def render_results(config: dict, sections: dict[str, str], claims: pd.DataFrame, commit: str,
                   date: datetime.date, machine: str, training: str, left_out: dict[str, str] | None = None,
                   replication: dict[str, str] | None = None, replication_section: str | None = None,
                   replication_table: pd.DataFrame | None = None) -> str:
    """The whole report; ``sections`` maps each section to its generated markdown, ``training`` is the
    Training section (``training_record.training_markdown``), ``left_out`` each
    experiment that did not run to the reason; ``claims`` may carry the ``claim_spread`` columns. With
    confirmation runs, ``replication`` maps each experiment to its replication verdict,
    ``replication_section`` is the replication section, which ends the report, and ``replication_table`` is the
    replication table, from which each of the abstract's claims gets its replication. The report opens, after
    the setup, with what this reproduction finds (``lengthgen.findings``)."""
    setup = yaml.safe_dump(config, sort_keys=False, default_flow_style=None).strip()
    return "\n\n".join([
        "# Results",
        "Generated by the lengthgen workflow from its own runs; do not edit by hand "
        "(`snakemake --cores 8` rewrites it).",
        "## Setup",
        f"- code: git commit `{commit}`\n- date: {date.isoformat()}\n- machine: {machine}",
        "Configuration used:\n\n```yaml\n" + setup + "\n```",
        findings_markdown(claims, replication_table, left_out),
        training,
        "## Verdicts",
        f"Each experiment's claim is split into checks fixed in advance; its verdict is {VERDICT_RULE}.",
        verdict_table(claims, replication),
        *([left_out_markdown(left_out)] if left_out else []),
        *(with_verdict(text, claims[claims["section"] == section]) for section, text in sections.items()),
        *([replication_section.rstrip()] if replication_section else []),
    ]) + "\n"
