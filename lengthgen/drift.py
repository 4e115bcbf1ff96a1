"""How far one run's checked numbers drifted from another's, e.g. yours from the committed run.

    python -m lengthgen.drift results my_results

compares ``<folder>/tables/claims.parquet`` (every check: its value, whether it holds, its
experiment's verdict) and ``<folder>/tables/accuracy_summary.parquet`` (mean accuracy per
encoding, offset and length) of two results folders. It prints every check with both values
and their drift, then the largest drift of the accuracy table, and exits with status 1 when a
check's outcome or a verdict differs (or a check is in one run only), 0 when only numbers drifted.
"""

import argparse
import sys
from pathlib import Path

import pandas as pd

from lengthgen.schemas.core import ACCURACY_SUMMARY, ALL_CLAIMS
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


def _yes_no(value) -> str:
    return "-" if pd.isna(value) else "yes" if value else "no"


def compare_runs(reference: Path, run: Path) -> tuple[str, bool]:
    """(the report, whether every check has the same outcome and every verdict is the same)."""
    claims = compare_claims(*(read_table(folder / "tables" / "claims.parquet", ALL_CLAIMS) for folder in (reference, run)))
    summary_paths = [folder / "tables" / "accuracy_summary.parquet" for folder in (reference, run)]
    summaries = (compare_summaries(*(read_table(path, ACCURACY_SUMMARY) for path in summary_paths))
                 if all(path.exists() for path in summary_paths) else pd.DataFrame())
    same_outcomes = not (claims["holds_changed"].any() or claims["verdict_changed"].any()
                         or (claims["only_in"] != "").any())
    return drift_report(claims, summaries), bool(same_outcomes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", type=Path, help="results folder to compare against, e.g. results (committed)")
    parser.add_argument("run", type=Path, help="results folder of the run to check")
    args = parser.parse_args(argv)
    try:
        report, same_outcomes = compare_runs(args.reference, args.run)
    except TableError as error:
        parser.error(str(error))  # a folder without a finished run: the message, exit status 2
    print(report)
    return 0 if same_outcomes else 1


if __name__ == "__main__":
    sys.exit(main())
