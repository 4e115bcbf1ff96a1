"""Statistics of per-seed sums: checks the seed bootstrap resamples as numbers, without recomputing them.

Most checked statistics are a function of sums over a run's rows: a mean is a sum over a count, an MAE a sum of
absolute errors over a count, a share of runs a count over a count, and the largest of several means or the
difference of two is a function of those sums. Each seed's sums are computed once (``SeedSums.sums``, a row per seed,
a column per sum); a seed resample that draws seed s w_s times has the totals sum_s w_s sums_s, and the statistic is
a function of the totals (``SeedSums.of``). Every resample's value then comes from one (resamples x seeds) by
(seeds x sums) product: ``lengthgen.checks.bootstrap`` evaluates a check whose value is a ``SeedSums`` (``claims.check``)
that way, and one seed alone is the weight vector of that seed.

A statistic of seed sums is one of the multiset of seeds drawn: it cannot read a seed's number, which the
recomputation relabels (0, 1, ... in the order drawn); every statistic a check makes of its rows' values is one.
The value on all seeds is the same function at unit weights. It equals the rows' own mean up to rounding (the sum
is taken in another order: a few units in the last place), not bit for bit. A group a seed has no rows in adds
nothing to the totals, as its rows would add nothing to a mean; a mean over no rows is NaN, and the largest and
smallest of several means skip NaN as pandas does (``largest``, ``smallest``).
pandas and numpy only (scipy where a t-interval is asked for).
"""

import operator
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd


@dataclass(frozen=True, eq=False)  # compared by identity: sums are frames
class SeedSums:
    """A statistic ``of(totals)`` of per-seed sums: ``sums`` is indexed by seed, one float column per sum (named
    0, 1, ...); ``of`` maps totals (resamples, sums) to values (resamples,)."""

    sums: pd.DataFrame
    of: Callable[[np.ndarray], np.ndarray]

    def at(self, weights: np.ndarray, seeds: list[int]) -> np.ndarray:
        """The statistic's value per row of ``weights`` (resamples, len(seeds)): seed ``seeds[i]`` counted
        ``weights[:, i]`` times; a seed the sums have no row of adds nothing."""
        totals = np.asarray(weights, float) @ self.sums.reindex(seeds, fill_value=0.0).to_numpy(float)
        with np.errstate(divide="ignore", invalid="ignore"):  # a mean over no rows is NaN, as pandas gives it
            return np.asarray(self.of(totals), float)

    def value(self) -> float:
        """The statistic on every seed once."""
        return float(self.at(np.ones((1, len(self.sums))), list(self.sums.index))[0])

    def _binary(self, other, function) -> "SeedSums":
        if isinstance(other, SeedSums):
            return combine(function, self, other)
        return combine(lambda values: function(values, other), self)

    def __sub__(self, other):
        return self._binary(other, operator.sub)

    def __mul__(self, other):
        return self._binary(other, operator.mul)

    def __abs__(self):
        return combine(np.abs, self)


def combine(function: Callable[..., np.ndarray], *parts: SeedSums) -> SeedSums:
    """``function`` of the values of ``parts`` (each (resamples,)), as one statistic of all their sums."""
    sums = pd.concat([part.sums for part in parts], axis=1).fillna(0.0).sort_index()
    sums.columns = range(sums.shape[1])
    ends = np.cumsum([part.sums.shape[1] for part in parts])
    spans = list(zip(ends - [part.sums.shape[1] for part in parts], ends))
    return SeedSums(sums, lambda totals: function(*(part.of(totals[:, start:end])
                                                    for part, (start, end) in zip(parts, spans))))


def mean(frame: pd.DataFrame, column: str) -> SeedSums:
    """The mean of ``frame[column]`` over its rows (every seed's, in a resample as often as the seed is drawn)."""
    by_seed = frame[column].astype(float).groupby(frame["seed"])
    sums = pd.DataFrame({0: by_seed.sum(), 1: by_seed.count()})  # count: a NaN row is no row, as in pandas' mean
    return SeedSums(sums.astype(float), lambda totals: totals[:, 0] / totals[:, 1])


def total(frame: pd.DataFrame, column: str) -> SeedSums:
    """The sum of ``frame[column]`` over its rows (every seed's, in a resample as often as the seed is drawn)."""
    sums = pd.DataFrame({0: frame[column].astype(float).groupby(frame["seed"]).sum()})
    return SeedSums(sums, lambda totals: totals[:, 0])


def means_by(frame: pd.DataFrame, by: list[str], column: str) -> dict[tuple, SeedSums]:
    """``mean`` of ``frame[column]`` in each group of ``by`` that has rows, by the group's key."""
    return {key: mean(group, column) for key, group in frame.groupby(by)}


def constant(value: float) -> SeedSums:
    """``value`` in every resample: a number with no seed sums behind it, in a statistic of seed sums."""
    return SeedSums(pd.DataFrame(index=pd.Index([], name="seed")), lambda totals: np.full(len(totals), value))


NOTHING = constant(np.nan)  # the mean of a group with no rows: NaN, which ``largest`` and ``smallest`` skip


def largest(parts: list[SeedSums]) -> SeedSums:
    """The largest of the values of ``parts``, NaN ones skipped (NaN when all are, or there are none)."""
    return _reduced(np.fmax, parts)


def smallest(parts: list[SeedSums]) -> SeedSums:
    """The smallest of the values of ``parts``, NaN ones skipped (NaN when all are, or there are none)."""
    return _reduced(np.fmin, parts)


def _reduced(function: np.ufunc, parts: list[SeedSums]) -> SeedSums:
    if not parts:  # as pandas' max of an empty series
        return NOTHING
    return combine(lambda *values: function.reduce(np.stack(values)), *parts)


def minimum(frame: pd.DataFrame, column: str) -> SeedSums:
    """The smallest of ``frame[column]`` over the rows of the seeds drawn, NaN skipped as pandas' min does (NaN when
    no drawn seed has a value). Not a function of sums of the values: its sums are one column per seed that counts
    the draws of that seed, and it takes the smallest of each drawn seed's own smallest value."""
    return _over_drawn_seeds(frame, column, "min", np.fmin)


def maximum(frame: pd.DataFrame, column: str) -> SeedSums:
    """The largest of ``frame[column]`` over the rows of the seeds drawn (``minimum``'s counterpart)."""
    return _over_drawn_seeds(frame, column, "max", np.fmax)


def _over_drawn_seeds(frame: pd.DataFrame, column: str, per_seed: str, across: np.ufunc) -> SeedSums:
    values = frame[column].astype(float).groupby(frame["seed"]).agg(per_seed)  # a seed with no value: NaN
    draws = pd.DataFrame(np.eye(len(values)), index=values.index)  # totals[:, i]: the draws of seed values.index[i]

    def of(totals: np.ndarray) -> np.ndarray:
        drawn = np.where(totals > 0, values.to_numpy(), np.nan)
        return across.reduce(np.column_stack([drawn, np.full(len(totals), np.nan)]), axis=1)  # none drawn: NaN

    return SeedSums(draws, of)


@dataclass(frozen=True, eq=False)
class MadeWhere(SeedSums):
    """A statistic of a check the experiment makes only where a condition holds on the seeds drawn (a seed with a
    step drawn): ``made`` is nonzero on those resamples. The bootstrap leaves the check out of the others, as
    recomputing does (``bootstrap.summed_checks``); ``made_where`` makes one."""

    made: SeedSums

    def made_at(self, weights: np.ndarray, seeds: list[int]) -> np.ndarray:
        """Whether the check is made, per row of ``weights`` (as ``at``)."""
        return self.made.at(weights, seeds) != 0


def made_where(statistic: SeedSums, made: SeedSums) -> MadeWhere:
    """``statistic``, of a check made only on the resamples where ``made`` is nonzero (``MadeWhere``)."""
    return MadeWhere(statistic.sums, statistic.of, made)
