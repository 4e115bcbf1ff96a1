"""How far one run's checked numbers drifted from another's, e.g. yours from the committed run.

    python -m lengthgen.drift results my_results

compares ``<folder>/tables/claims.parquet`` (every check: its value, whether it holds, its
experiment's verdict), ``<folder>/tables/accuracy_summary.parquet`` (mean accuracy per
encoding, offset and length) and, where both runs have one, ``<folder>/tables/variants_classes.parquet``
(the class of every encoding and offset) of two results folders. It prints every check with both
values and their drift, then the largest drift of the accuracy table and every class that differs,
and exits with status 1 when a check's outcome or a verdict differs (or a check is in one run only)
or a class differs, 0 when only numbers drifted.

    python -m lengthgen.drift --open-may-differ results other_results

forgives a check whose outcome differs where the seed bootstrap of either run calls it open (it
holds in fewer than ``rules.DECIDED_FRACTION`` and more than 1 - that share of the seed
resamples, ``<folder>/tables/claim_spread.parquet``): such a check is not decided by its seeds,
so two runs may part on it (the comparison of the two CPU paths).
"""

import argparse
import sys
from pathlib import Path

import pandas as pd

from lengthgen.rules import DECIDED_FRACTION
from lengthgen.schemas.core import ACCURACY_SUMMARY, ALL_CLAIMS
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.schemas.variants import VARIANTS_CLASSES
from lengthgen.tables import TableError, read_table

CHECK_KEYS = ["experiment", "claim", "statistic"]
SUMMARY_KEYS = ["experiment", "pe", "offset", "length"]


def relative_drift(reference: pd.Series, run: pd.Series) -> pd.Series:
    """|run - reference| / |reference| (the absolute drift where the reference is 0); 0 where both agree,
    NaN included."""
    difference = (run - reference).abs()
    scale = reference.abs().where(reference != 0, 1.0)
    same = (run == reference) | (run.isna() & reference.isna())
    return (difference / scale).where(~same, 0.0)


def compare_claims(reference: pd.DataFrame, run: pd.DataFrame) -> pd.DataFrame:
    """One row per check of either run: both values, drift, and whether its outcome and verdict changed."""
    both = reference.merge(run, on=CHECK_KEYS, how="outer", suffixes=("_reference", "_run"), indicator=True,
                           sort=False)
    return both.assign(
        drift=relative_drift(both["value_reference"], both["value_run"]),
        only_in=both["_merge"].map({"left_only": "reference", "right_only": "run", "both": ""}).astype(str),
        holds_changed=(both["holds_reference"] != both["holds_run"]) & (both["_merge"] == "both"),
        verdict_changed=(both["verdict_reference"] != both["verdict_run"]) & (both["_merge"] == "both"),
    ).drop(columns="_merge")


def is_open(holds_fraction: pd.Series) -> pd.Series:
    """Whether the seed bootstrap leaves a check's outcome open (neither share of resamples decides)."""
    return (holds_fraction < DECIDED_FRACTION) & (holds_fraction > 1 - DECIDED_FRACTION)


def with_spread(claims: pd.DataFrame, spread: pd.DataFrame) -> pd.DataFrame:
    """``claims`` with ``open``: whether its seed bootstrap leaves the check open (row for row, as rule
    all_claims writes both tables)."""
    return claims.assign(open=is_open(spread["holds_fraction"]).to_numpy())


def compare_classes(reference: pd.DataFrame, run: pd.DataFrame) -> pd.DataFrame:
    """The (pe, offset) cells of the variants experiment whose class differs between the runs."""
    both = reference.merge(run, on=["pe", "offset"], how="outer", suffixes=("_reference", "_run"))
    return both[both["category_reference"] != both["category_run"]]


def compare_summaries(reference: pd.DataFrame, run: pd.DataFrame) -> pd.DataFrame:
    """One row per (experiment, pe, offset, length) of both runs: both mean accuracies and their difference."""
    both = reference.merge(run, on=SUMMARY_KEYS, suffixes=("_reference", "_run"))
    return both.assign(difference=(both["mean_run"] - both["mean_reference"]).abs())


def drift_report(claims: pd.DataFrame, summaries: pd.DataFrame) -> str:
    lines = ["| experiment | claim | statistic | reference | run | relative drift | holds (reference -> run) |",
             "|---|---|---|---|---|---|---|"]
    for row in claims.itertuples():
        holds = f"{_yes_no(row.holds_reference)} -> {_yes_no(row.holds_run)}"
        lines.append(f"| {row.experiment} | {row.claim} | {row.statistic} | {row.value_reference:.6g} | "
                     f"{row.value_run:.6g} | {row.drift:.2e} | {holds}{' CHANGED' if row.holds_changed else ''} |")
    common = claims[claims["only_in"] == ""]
    moved = common[common["drift"] > 0]
    lines += ["", f"checks: {len(common)} in both runs, {int((claims['only_in'] != '').sum())} in one only; "
                  f"{len(moved)} values drifted (largest relative drift {common['drift'].max():.2e}); "
                  f"{int(common['holds_changed'].sum())} outcomes and "
                  f"{common.loc[common['verdict_changed'], 'experiment'].nunique()} verdicts changed"]
    if len(summaries):
        worst = summaries.loc[summaries["difference"].idxmax()]
        lines.append(f"accuracy summary: {len(summaries)} cells in both runs; largest drift of a mean accuracy "
                     f"{worst['difference']:.4f} ({worst['pe']}, K={worst['offset']}, n={worst['length']}: "
                     f"{worst['mean_reference']:.4f} -> {worst['mean_run']:.4f})")
    return "\n".join(lines)


def changes_markdown(previous: pd.DataFrame, current: pd.DataFrame, note: str | None) -> str:
    """RESULTS.md's account of what moved since the previous committed run (``report.previous_claims``):
    every verdict that changed, and every check whose outcome changed or that only one run has, with
    both values; ``note`` says why the runs differ."""
    claims = compare_claims(previous, current)
    common = claims[claims["only_in"] == ""]
    verdicts = common.drop_duplicates("experiment")[["experiment", "verdict_reference", "verdict_run"]]
    moved = verdicts[verdicts["verdict_reference"] != verdicts["verdict_run"]]
    lines = ["## Changes since the previous run", *([note.strip()] if note else []),
             f"Checks in both runs: {len(common)}; outcomes changed: {int(common['holds_changed'].sum())}; "
             f"checks in one run only: {int((claims['only_in'] != '').sum())}. Verdicts that moved: "
             + ("; ".join(f"`{row.experiment}` {row.verdict_reference} -> {row.verdict_run}" for row in moved.itertuples())
                or "none") + "."]
    flipped = claims[claims["holds_changed"]]
    if len(flipped):
        table = ["| experiment | claim | statistic | previous | now | holds (previous -> now) |", "|---|---|---|---|---|---|"]
        table += [f"| {row.experiment} | {row.claim} | {row.statistic} | {row.value_reference:.4g} | {row.value_run:.4g} "
                  f"| {_yes_no(row.holds_reference)} -> {_yes_no(row.holds_run)} |" for row in flipped.itertuples()]
        lines.append("\n".join(table))
    return "\n\n".join(lines)


def _yes_no(value) -> str:
    return "-" if pd.isna(value) else "yes" if value else "no"


def read_claims(folder: Path, with_open: bool) -> pd.DataFrame:
    claims = read_table(folder / "tables" / "claims.parquet", ALL_CLAIMS)
    return with_spread(claims, read_table(folder / "tables" / "claim_spread.parquet", CLAIM_SPREAD)) if with_open else claims


def compare_runs(reference: Path, run: Path, open_may_differ: bool = False) -> tuple[str, bool]:
    """(the report, whether every check has the same outcome, every verdict and every variants class is
    the same). ``open_may_differ``: a check whose outcome differs counts as the same where the seed
    bootstrap of either run leaves it open; a verdict may then differ too."""
    claims = compare_claims(*(read_claims(folder, open_may_differ) for folder in (reference, run)))
    summary_paths = [folder / "tables" / "accuracy_summary.parquet" for folder in (reference, run)]
    summaries = (compare_summaries(*(read_table(path, ACCURACY_SUMMARY) for path in summary_paths))
                 if all(path.exists() for path in summary_paths) else pd.DataFrame())
    class_paths = [folder / "tables" / "variants_classes.parquet" for folder in (reference, run)]
    classes = (compare_classes(*(read_table(path, VARIANTS_CLASSES) for path in class_paths))
               if all(path.exists() for path in class_paths) else pd.DataFrame())
    changed = claims["holds_changed"]
    if open_may_differ:
        changed = changed & ~(claims["open_reference"].fillna(False) | claims["open_run"].fillna(False)).astype(bool)
    same_outcomes = not (changed.any() or (claims["verdict_changed"].any() and not open_may_differ)
                         or (claims["only_in"] != "").any() or len(classes))
    report = drift_report(claims, summaries)
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
                        help="forgive an outcome that differs where either run's seed bootstrap leaves the check open")
    args = parser.parse_args(argv)
    try:
        report, same_outcomes = compare_runs(args.reference, args.run, args.open_may_differ)
    except TableError as error:
        parser.error(str(error))  # a folder without a finished run: the message, exit status 2
    print(report)
    return 0 if same_outcomes else 1


if __name__ == "__main__":
    sys.exit(main())
