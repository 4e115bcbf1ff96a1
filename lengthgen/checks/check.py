"""Checks: each claim is a list of checks fixed in advance, each a row of plain columns.

A check is keyed by (experiment, claim, statistic, offset): the claim and the statistic are
names that stay the same in every run that measures them (no setting's number in them: the run's
numbers go in ``rule``, the text shown beside the threshold), and the offset is the one it is
measured at (null when pooled over offsets). Drift and replication match checks across runs on
that key. Each check also carries its comparison and threshold as numbers, whether it holds, and
its kind: *evidence* (a plausible world could fail it) or *sanity* (only a bug can fail it: an
identity of the code, an impossibility); a claim's judgment (``lengthgen.checks.judgment``) reads neither.

A check also declares whether it is computed *per seed* (``per_seed``, by default yes): whether the same check
on each seed alone asks that seed the question the check asks of all of them, as it does for a minimum, a mean or
a share over seeds. The seed bootstrap counts the seeds that fail it alone only where it is (a statistic that
sets one seed's value against another's, a t-interval whose width follows the number of runs, is not). The
declaration is the check's, the same in every run, so a check has a per-seed count in every run or in none.

A check's value (and its threshold, where the data set it) may be a ``seed_sums.SeedSums``: a function of
sums over each seed's rows. Its row then keeps the statistic (``seed_sums``; ``with_keys`` adds the column where a
check has one), and the seed bootstrap resamples the sums instead of recomputing the checks; the claims table has no
such column.
"""

import math
import operator

import pandas as pd

from lengthgen.checks.seed_sums import SeedSums

KEY = ["experiment", "claim", "statistic", "offset"]
KINDS = ("evidence", "sanity")
# A check's own columns (``check``); ``with_keys`` adds its experiment and section in front.
CHECK_COLUMNS = ["claim", "statistic", "offset", "value", "comparison", "threshold", "rule", "holds", "kind",
                 "per_seed"]
COMPARISONS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq}


def check(claim: str, statistic: str, value: float | SeedSums, comparison: str, threshold: float | SeedSums, *,
          offset: int | None = None, rule: str | None = None, kind: str = "evidence", per_seed: bool = True,
          resampled: SeedSums | None = None) -> dict:
    """One check: holds when ``value <comparison> threshold`` (never when the value is NaN). ``rule`` is the
    text shown for it (``>= 5 x chance = 0.156``); by default the comparison and threshold. ``per_seed=False``:
    the check on one seed alone is not this check on that seed, so the seed bootstrap counts no seeds for it.
    A ``SeedSums`` value (and threshold) is checked on all seeds and kept as ``seed_sums`` (value, threshold)
    for the bootstrap, a key only such a check has; a float threshold beside it is kept as it is. ``resampled``: the
    statistic of a float value as seed sums, where the value must stay as computed (a mean as pandas takes it, which
    seed sums give only up to rounding): the check keeps the value, the bootstrap resamples ``resampled``."""
    if comparison not in COMPARISONS:
        raise ValueError(f"unknown comparison {comparison!r}; one of {', '.join(COMPARISONS)}")
    if kind not in KINDS:
        raise ValueError(f"unknown check kind {kind!r}; one of {', '.join(KINDS)}")
    if isinstance(threshold, SeedSums) and not isinstance(value, SeedSums):
        raise ValueError(f"check {claim!r} | {statistic!r}: a threshold of seed sums needs a value of seed sums")
    if resampled is not None and isinstance(value, SeedSums):
        raise ValueError(f"check {claim!r} | {statistic!r}: a value of seed sums is resampled itself")
    summed = value if isinstance(value, SeedSums) else resampled
    for_bootstrap = {"seed_sums": (summed, threshold)} if summed is not None else {}
    value, threshold = (part.value() if isinstance(part, SeedSums) else float(part) for part in (value, threshold))
    holds = not math.isnan(value) and bool(COMPARISONS[comparison](value, threshold))
    return {"claim": claim, "statistic": statistic, "offset": offset, "value": value, "comparison": comparison,
            "threshold": threshold, "rule": rule or f"{comparison} {threshold:.4g}", "holds": holds, "kind": kind,
            "per_seed": bool(per_seed), **for_bootstrap}


def with_keys(checks: list[dict] | pd.DataFrame, experiment: str, section: str) -> pd.DataFrame:
    """An experiment's checks as a table with its experiment and section; a key that occurs twice is a bug
    of the experiment (two checks drift and replication could not tell apart), so it raises."""
    rows = checks.to_dict("records") if isinstance(checks, pd.DataFrame) else list(checks)
    keys = [(row["claim"], row["statistic"], None if pd.isna(row["offset"]) else int(row["offset"])) for row in rows]
    repeated = sorted({key for key in keys if keys.count(key) > 1}, key=str)
    if repeated:
        raise ValueError(f"experiment {experiment} has checks with the same key: "
                         + "; ".join(f"{claim} | {statistic} | K={offset}" for claim, statistic, offset in repeated))
    columns = {name: [row[name] for row in rows] for name in CHECK_COLUMNS}
    if any("seed_sums" in row for row in rows):  # for the bootstrap only: the claims table has no such column
        columns["seed_sums"] = [row.get("seed_sums") for row in rows]
    return pd.DataFrame({"experiment": experiment, "section": section, **columns},
                        index=range(len(rows))).astype({"offset": "Int64"})


def checks_markdown(checks: pd.DataFrame) -> str:
    """A section's checks as markdown tables: the evidence, then the sanity checks apart."""
    parts = []
    for kind, title in (("evidence", None), ("sanity", "Sanity checks (tests of the code; in no verdict):")):
        rows = checks[checks["kind"] == kind]
        if rows.empty:
            continue
        table = pd.DataFrame({
            "claim": cell_text(rows["claim"]),
            "K": rows["offset"].map(lambda offset: "all" if pd.isna(offset) else str(offset)),
            "statistic": cell_text(rows["statistic"]), "value": rows["value"].map(lambda value: f"{value:.4g}"),
            "rule": cell_text(rows["rule"]), "holds": rows["holds"].map({True: "yes", False: "no"})})
        parts += [title] if title else []
        parts.append(table.to_markdown(index=False))
    return "\n\n".join(parts)


def cell_text(texts: pd.Series) -> pd.Series:
    """Texts as markdown table cells: a bar in a text (``mean |weight|``) would end its cell and shift the row."""
    return texts.str.replace("|", "\\|", regex=False)
