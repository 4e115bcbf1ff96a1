"""The seed bootstrap: how much each checked statistic moves when the seeds are resampled.

An experiment's checks are a pure function of tables with a ``seed`` column (``claims_of``), keyed
by ``claims.KEY``. One
resample draws as many seeds as the run has, with replacement, takes every table's rows of the
drawn seeds and relabels each draw with its own seed (0, 1, ...), so a seed drawn twice counts as
two seeds, as two runs with those results would; then it recomputes the checks. Tables are
resampled together, so rows that pair by seed (a head and its control, a prediction and its
measurement) stay paired. Per check: the percentile interval of its statistic over the resamples
(``thresholds.SPREAD_INTERVAL``) and the fraction of resamples in which it holds, which says whether
its outcome is decided by the data or could go either way with other seeds
(``thresholds.DECIDED_FRACTION``).

The same machinery with a one-seed "resample" per seed evaluates every check on each seed alone:
per check declared per seed (``claims.check``'s ``per_seed``), the seeds on which it has a value
(``seeds_checked``, n) and those of them on which it fails (``seeds_failing``, k), which replication
sets against another run's (``thresholds.CAUSE_RULE``). A check not declared per seed (one seed's
value set against another's, a t-interval, which can hold on all seeds and fail on each alone) has
neither (null), in every run: the declaration, not the run's outcome, says which checks are counted.

Where every check of an experiment is a statistic of per-seed sums (``lengthgen.checks.seed_sums``), the checks are not
recomputed: each draw is a row of seed counts, and one matrix product gives every resample's values (and the
per-seed values, from the identity), with the same draws as the recomputation, so the same interval up to
rounding. A check the experiment makes only where a condition holds on the seeds drawn says where
(``seed_sums.MadeWhere``), and is left out of the other resamples, as the recomputation leaves it out. An
experiment with any other check is recomputed on every resample, as before.
pandas and numpy only: every job that writes claims runs it.
"""

from typing import Callable

import numpy as np
import pandas as pd

from lengthgen.checks.check import COMPARISONS, KEY
from lengthgen.checks.seed_sums import MadeWhere, SeedSums
from lengthgen.checks.shared_rules import SPREAD_INTERVAL


def run_seeds(tables: dict[str, pd.DataFrame]) -> list[int]:
    """Every seed that occurs in a table with a ``seed`` column, sorted."""
    return sorted(set().union(*(set(table["seed"]) for table in tables.values() if "seed" in table)))


def resample_seeds(by_seed: dict[str, dict | pd.DataFrame], draw) -> dict[str, pd.DataFrame]:
    """Every table with the rows of the drawn seeds, the i-th draw relabelled seed i. ``by_seed`` maps a
    table's name to {seed: its rows} (a table without seeds to itself: it is taken whole)."""
    resampled = {}
    for name, groups in by_seed.items():
        if isinstance(groups, pd.DataFrame):
            resampled[name] = groups
            continue
        parts = [groups[seed].assign(seed=label) for label, seed in enumerate(draw) if seed in groups]
        empty = next(iter(groups.values())).iloc[:0]
        resampled[name] = pd.concat(parts, ignore_index=True) if parts else empty
    return resampled


def seed_bootstrap(claims_of: Callable[..., pd.DataFrame], tables: dict[str, pd.DataFrame], resamples: int,
                   seed: int) -> pd.DataFrame:
    """The ``claim_spread`` rows of ``claims_of(**tables)``'s checks, in their order, from ``resamples``
    seed resamples drawn by a generator seeded with ``seed`` (derived from the config by the workflow).

    A check missing from a resample (the experiment makes it only where a condition holds) counts in
    neither its interval nor its fraction; ``resamples`` says in how many it was made.
    """
    checks = claims_of(**tables)
    seeds = run_seeds(tables)
    generator = np.random.default_rng(seed)
    draws = [generator.choice(seeds, size=len(seeds), replace=True) for _ in range(resamples)]
    if len(checks) and "seed_sums" in checks and checks["seed_sums"].notna().all():
        redone, alone = (summed_checks(checks, seeds, weights) for weights in (seed_counts(draws, seeds),
                                                                              np.eye(len(seeds))))
    else:
        by_seed = {name: dict(iter(table.groupby("seed"))) if "seed" in table and len(table) else table
                   for name, table in tables.items()}
        redone, alone = ([claims_of(**resample_seeds(by_seed, draw))[KEY + ["value", "holds"]] for draw in chosen]
                         for chosen in (draws, [[seed] for seed in seeds]))
    empty = checks[KEY + ["value", "holds"]].iloc[:0]
    redone, alone = (pd.concat(frames) if len(frames) else empty for frames in (redone, alone))
    tail = (1 - SPREAD_INTERVAL) / 2
    spread = redone.groupby(KEY, dropna=False).agg(
        resamples=("holds", "size"), holds_fraction=("holds", "mean"),
        spread_low=("value", lambda values: values.quantile(tail)),
        spread_high=("value", lambda values: values.quantile(1 - tail)))
    rows = (checks.merge(spread.reset_index(), on=KEY, how="left")
            .merge(failing_seeds(alone, checks), on=KEY, how="left").assign(n_seeds=len(seeds)))
    return rows.assign(resamples=rows["resamples"].fillna(0).astype(int),
                       seeds_checked=rows["seeds_checked"].astype("Int64"),
                       seeds_failing=rows["seeds_failing"].astype("Int64"))[
        ["experiment", "section", *KEY[1:], "n_seeds", "resamples", "spread_low", "spread_high", "holds_fraction",
         "seeds_checked", "seeds_failing"]]


def seed_counts(draws: list[np.ndarray], seeds: list[int]) -> np.ndarray:
    """(draws, seeds): how often each draw holds each seed."""
    position = {seed: index for index, seed in enumerate(seeds)}
    counts = np.zeros((len(draws), len(seeds)))
    for row, draw in enumerate(draws):
        np.add.at(counts[row], [position[seed] for seed in draw], 1)
    return counts


def summed_checks(checks: pd.DataFrame, seeds: list[int], weights: np.ndarray) -> list[pd.DataFrame]:
    """Every check of ``checks`` (each with its ``seed_sums``) under each row of ``weights`` (seed counts): its
    value and whether it holds, the rows ``claims_of`` would give on those resamples (one frame); a check made only
    where a condition holds (``seed_sums.MadeWhere``) has no row where it does not."""
    values, holds, made = [], [], []
    for (value, threshold), comparison in zip(checks["seed_sums"], checks["comparison"]):
        values.append(value.at(weights, seeds))
        limits = threshold.at(weights, seeds) if isinstance(threshold, SeedSums) else threshold
        holds.append(~np.isnan(values[-1]) & COMPARISONS[comparison](values[-1], limits))
        made.append(value.made_at(weights, seeds) if isinstance(value, MadeWhere) else np.ones(len(weights), bool))
    keys = checks.loc[checks.index.repeat(len(weights)), KEY].reset_index(drop=True)
    rows = keys.assign(value=np.concatenate(values), holds=np.concatenate(holds))
    return [rows[np.concatenate(made)].reset_index(drop=True)]


def failing_seeds(alone: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    """Per check of ``checks`` (all seeds) declared per seed (``claims.check``'s ``per_seed``; ``KEY``): on how many
    seeds alone (``alone``: the checks' rows on each seed alone, one under the other) it has a value
    (``seeds_checked``) and on how many of those it fails (``seeds_failing``); 0 of 0 where no seed alone makes it
    or gives it a value (a NaN value: a statistic that needs two seeds). A check not declared per seed is not
    listed: it has no count, whatever its outcome."""
    made = alone[alone["value"].notna()].assign(fails=lambda frame: ~frame["holds"].astype(bool))
    counted = made.groupby(KEY, dropna=False).agg(seeds_checked=("fails", "size"), seeds_failing=("fails", "sum"))
    declared = checks.loc[checks["per_seed"].astype(bool), KEY]
    counts = declared.merge(counted.reset_index(), on=KEY, how="left")
    return counts.fillna({"seeds_checked": 0, "seeds_failing": 0})
