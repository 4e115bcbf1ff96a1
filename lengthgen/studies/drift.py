"""How far one run's checked numbers and claim verdicts drifted from another's, e.g. yours from the committed run.

    python -m lengthgen.studies.drift results my_results

compares the two folders' ``tables/claims.parquet`` (each check matched on ``check.KEY``), ``claim_judgments`` and,
where both have them, ``accuracy_summary`` and ``variants_classes``: every check with both values and their drift, the
largest drift of a mean accuracy, every claim verdict and variants class that differs. Exit status 1 when a check's
outcome or kind, a claim verdict or a class differs, or a check is in one run only; 0 when only numbers drifted; 2
(naming the folder and what is wrong) when a folder lacks a table or a column.

``--open-may-differ`` forgives an outcome that differs where either run's seed bootstrap leaves the check open
(``claim_spread.parquet``: it holds in fewer than ``DECIDED_FRACTION`` and more than 1 - that share of the
resamples), and a verdict that differs where either run's is *inconclusive* (as two CPU paths may part on them). A
check in one run only or of another kind is never forgiven.
"""

import argparse
import sys
from pathlib import Path

import pandas as pd

from lengthgen.checks.check import KEY
from lengthgen.checks.shared_rules import DECIDED_FRACTION
from lengthgen.tables.core import ACCURACY_SUMMARY, CLAIMS
from lengthgen.tables.spread import CLAIM_SPREAD
from lengthgen.checks.judgment import INCONCLUSIVE
from lengthgen.studies.judgments.tables import CLAIM_JUDGMENTS
from lengthgen.experiments.sections import markdown, written
from lengthgen.experiments.variants.tables import VARIANTS_CLASSES
from lengthgen.tables.io import TableError, read_table


def relative_drift(reference: pd.Series, run: pd.Series) -> pd.Series:
    """|run - reference| / |reference| (absolute where the reference is 0); 0 where both agree, NaN included."""
    difference = (run - reference).abs()
    scale = reference.abs().where(reference != 0, 1.0)
    same = (run == reference) | (run.isna() & reference.isna())
    return (difference / scale).where(~same, 0.0)


def compare_claims(reference: pd.DataFrame, run: pd.DataFrame) -> pd.DataFrame:
    """Per check of either run (on ``KEY``): both values, drift, outcome or kind changed, ``only_in`` (one run's)."""
    reference, run = (frame.assign(offset=frame["offset"].astype("Int64")) for frame in (reference, run))
    both = reference.merge(run, on=KEY, how="outer", suffixes=("_reference", "_run"), indicator=True, sort=False)
    in_both = both["_merge"] == "both"
    return both.assign(
        drift=relative_drift(both["value_reference"], both["value_run"]),
        only_in=both["_merge"].map({"left_only": "reference", "right_only": "run", "both": ""}).astype(str),
        holds_changed=(both["holds_reference"] != both["holds_run"]) & in_both,
        kind_changed=(both["kind_reference"] != both["kind_run"]) & in_both,
    ).drop(columns="_merge")


def moved_verdicts(reference: pd.DataFrame, run: pd.DataFrame) -> pd.DataFrame:
    """The (claim, condition, K) both runs judge whose verdict differs, with both verdicts and means."""
    both = reference.merge(run, on=["claim", "condition", "offset"], suffixes=("_reference", "_run"))
    return both[both["verdict_reference"] != both["verdict_run"]]


def is_open(holds_fraction: pd.Series) -> pd.Series:
    """Whether the seed bootstrap leaves a check's outcome open (neither share of resamples decides)."""
    return (holds_fraction < DECIDED_FRACTION) & (holds_fraction > 1 - DECIDED_FRACTION)


def with_spread(claims: pd.DataFrame, spread: pd.DataFrame) -> pd.DataFrame:
    """``claims`` with ``open``: whether its seed bootstrap leaves the check open (matched on ``claims.KEY``)."""
    spread = spread.assign(offset=spread["offset"].astype("Int64"), open=is_open(spread["holds_fraction"]))
    return claims.assign(offset=claims["offset"].astype("Int64")).merge(spread[[*KEY, "open"]], on=KEY, how="left")


def compare_classes(reference: pd.DataFrame, run: pd.DataFrame) -> pd.DataFrame:
    """The (pe, offset) cells of the variants experiment whose class differs between the runs."""
    both = reference.merge(run, on=["pe", "offset"], how="outer", suffixes=("_reference", "_run"))
    return both[both["category_reference"] != both["category_run"]]


def compare_summaries(reference: pd.DataFrame, run: pd.DataFrame) -> pd.DataFrame:
    """One row per (experiment, pe, offset, length) of both runs: both mean accuracies and their difference."""
    both = reference.merge(run, on=["experiment", "pe", "offset", "length"], suffixes=("_reference", "_run"))
    return both.assign(difference=(both["mean_run"] - both["mean_reference"]).abs())


def _yes_no(value) -> str:
    return "-" if pd.isna(value) else "yes" if value else "no"


def difference_note(row) -> str:
    """What differs about one compared check besides its value: ONLY IN a run, CHANGED outcome, KIND."""
    if row.only_in:
        return f" ONLY IN {row.only_in.upper()}"
    return (" CHANGED" if row.holds_changed else "") + (
        f" KIND {row.kind_reference} -> {row.kind_run}" if row.kind_changed else "")


def check_cells(row, form: str) -> list[str]:
    """A compared check's key, both values written by ``form``, and both outcomes."""
    return [row.experiment, row.claim, row.statistic, written(row.offset, missing="all"),
            written(row.value_reference, form), written(row.value_run, form),
            f"{_yes_no(row.holds_reference)} -> {_yes_no(row.holds_run)}"]


def drift_report(claims: pd.DataFrame, summaries: pd.DataFrame) -> str:
    rows = []
    for row in claims.itertuples():
        *key_and_values, holds = check_cells(row, "{:.6g}")
        rows.append([*key_and_values, "-" if row.only_in else f"{row.drift:.2e}", holds + difference_note(row)])
    lines = [markdown(rows, ["experiment", "claim", "statistic", "K", "reference", "run", "relative drift",
                             "holds (reference -> run)"])]
    common = claims[claims["only_in"] == ""]
    moved = common[common["drift"] > 0]
    only = claims["only_in"].value_counts()
    lines += ["", f"checks: {len(common)} in both runs, {int(only.get('reference', 0))} in the reference only, "
                  f"{int(only.get('run', 0))} in the run only; {len(moved)} values drifted (largest relative drift "
                  f"{common['drift'].max():.2e}); {int(common['holds_changed'].sum())} outcomes and "
                  f"{int(common['kind_changed'].sum())} kinds changed"]
    if len(summaries):
        worst = summaries.loc[summaries["difference"].idxmax()]
        lines.append(f"accuracy summary: {len(summaries)} cells in both runs; largest drift of a mean accuracy "
                     f"{worst['difference']:.4f} ({worst['pe']}, K={worst['offset']}, n={worst['length']}: "
                     f"{worst['mean_reference']:.4f} -> {worst['mean_run']:.4f})")
    return "\n".join(lines)


def changes_markdown(previous: pd.DataFrame, current: pd.DataFrame, note: str | None) -> str:
    """What moved since the previous committed run (``report.previous_claims``): each check whose outcome or kind
    changed or that one run lacks, with both values; ``note`` says why the runs differ."""
    claims = compare_claims(previous, current)
    common = claims[claims["only_in"] == ""]
    lines = ["## Changes since the previous run", *([note.strip()] if note else []),
             f"Checks in both runs: {len(common)}; values moved: {int((common['drift'] > 0).sum())}; "
             f"outcomes changed: {int(common['holds_changed'].sum())}; "
             f"kinds changed: {int(common['kind_changed'].sum())}; "
             f"checks in one run only: {int((claims['only_in'] != '').sum())}."]
    differing = claims[claims["holds_changed"] | claims["kind_changed"] | (claims["only_in"] != "")]
    if len(differing):
        only_in = {"reference": "previous", "run": "now", "": ""}
        lines.append(markdown([[*check_cells(row, "{:.4g}"), f"{written(row.kind_reference)} -> {written(row.kind_run)}",
                                only_in[row.only_in]] for row in differing.itertuples()],
                              ["experiment", "claim", "statistic", "K", "previous", "now", "holds (previous -> now)",
                               "kind (previous -> now)", "only in"]))
    return "\n\n".join(lines)


def previous_changes_markdown(path: Path, current: pd.DataFrame, note: str | None) -> str:
    """``changes_markdown`` against the previous run's claims at ``path``."""
    return changes_markdown(read_table(path, CLAIMS), current, note)


def read_claims(folder: Path, with_open: bool) -> pd.DataFrame:
    claims = read_table(folder / "tables" / "claims.parquet", CLAIMS)
    if not with_open:
        return claims
    return with_spread(claims, read_table(folder / "tables" / "claim_spread.parquet", CLAIM_SPREAD))


def both_tables(reference: Path, run: Path, name: str, schema) -> list[pd.DataFrame] | None:
    """Both runs' ``tables/<name>.parquet``, or None where either lacks it."""
    paths = [folder / "tables" / f"{name}.parquet" for folder in (reference, run)]
    return [read_table(path, schema) for path in paths] if all(path.exists() for path in paths) else None


def compare_runs(reference: Path, run: Path, open_may_differ: bool = False) -> tuple[str, bool]:
    """(the report, whether both runs have the same checks, outcomes, kinds, claim verdicts and variants classes);
    ``open_may_differ`` forgives an outcome either run's bootstrap leaves open, a verdict either finds inconclusive."""
    claims = compare_claims(*(read_claims(folder, open_may_differ) for folder in (reference, run)))
    summaries, classes, judgments = (both_tables(reference, run, name, schema) for name, schema in (
        ("accuracy_summary", ACCURACY_SUMMARY), ("variants_classes", VARIANTS_CLASSES),
        ("claim_judgments", CLAIM_JUDGMENTS)))
    summaries = compare_summaries(*summaries) if summaries else pd.DataFrame()
    classes = compare_classes(*classes) if classes else pd.DataFrame()
    moved = moved_verdicts(*judgments) if judgments else pd.DataFrame()
    changed, unforgiven = claims["holds_changed"], moved
    if open_may_differ:
        changed = changed & ~(claims["open_reference"].fillna(False) | claims["open_run"].fillna(False)).astype(bool)
        if len(moved):
            unforgiven = moved[(moved["verdict_reference"] != INCONCLUSIVE) & (moved["verdict_run"] != INCONCLUSIVE)]
    # A check in one run only, or of another kind, differs whatever the bootstrap says: the runs check other things.
    same_outcomes = not (changed.any() or len(unforgiven) or (claims["only_in"] != "").any()
                         or claims["kind_changed"].any() or len(classes))
    report = drift_report(claims, summaries)
    if judgments:
        report += "\nclaim verdicts that differ: " + ("; ".join(
            f"{row.claim} ({row.condition}, K={row.offset}): {row.verdict_reference} -> {row.verdict_run} "
            f"(mean {row.mean_reference:.4g} -> {row.mean_run:.4g})" for row in moved.itertuples()) or "none")
    if len(classes):
        report += "\nvariants classes that differ: " + "; ".join(
            f"{row.pe} K={row.offset}: {row.category_reference} -> {row.category_run}" for row in classes.itertuples())
    if open_may_differ:
        forgiven = claims["holds_changed"] & ~changed
        report += f"\noutcomes that differ where the seed bootstrap leaves the check open: {int(forgiven.sum())}"
    return report, bool(same_outcomes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", type=Path, help="results folder to compare against, e.g. results (committed)")
    parser.add_argument("run", type=Path, help="results folder of the run to check")
    parser.add_argument("--open-may-differ", action="store_true",
                        help="forgive an outcome that differs where either run's seed bootstrap leaves the check open, "
                             "and a claim verdict where either run's is inconclusive")
    args = parser.parse_args(argv)
    try:
        report, same_outcomes = compare_runs(args.reference, args.run, args.open_may_differ)
    except TableError as error:
        parser.error(str(error))  # a folder without a finished run: the message, exit status 2
    print(report)
    return 0 if same_outcomes else 1


if __name__ == "__main__":
    sys.exit(main())
