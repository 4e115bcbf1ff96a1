"""Which runs a statistic past the training range reads: those whose model fits its range (the range-fit
table, by the rules of ``lengthgen.training.range_fit``), cell by cell, and the means over them as seed sums."""

import numpy as np
import pandas as pd

from lengthgen.checks import seed_sums
from lengthgen.checks.seed_sums import SeedSums


def runs_that_fit(evaluations: pd.DataFrame, fits: pd.DataFrame, keys=("pe", "offset")) -> pd.DataFrame:
    """The rows of ``evaluations`` whose model fits its training range, in every cell of ``keys`` where
    most of the seeds do; a cell where most do not keeps every seed (its failure to fit is the finding).
    A statistic of what happens past the range presupposes a fitted range, so it reads these rows."""
    frame = evaluations.assign(_fitted=fitted_rows(evaluations, fits))
    seeds = frame.drop_duplicates(["pe", "offset", "seed"])
    mostly_fitted = mostly(seeds.groupby(list(keys))["_fitted"].mean())
    keep = frame["_fitted"] | ~mostly_fitted.reindex(pd.MultiIndex.from_frame(frame[list(keys)])).to_numpy()
    return frame[keep].drop(columns="_fitted")


def fitted_rows(evaluations: pd.DataFrame, fits: pd.DataFrame) -> np.ndarray:
    """Per row of ``evaluations``: whether its model (pe, offset, seed) fits its training range (``fits``)."""
    fitted = fits.set_index(["pe", "offset", "seed"])["fitted"]
    return fitted.reindex(pd.MultiIndex.from_frame(evaluations[["pe", "offset", "seed"]])).to_numpy().astype(bool)


def fit_shares(evaluations: pd.DataFrame, fits: pd.DataFrame, keys=("pe", "offset")) -> dict[tuple, SeedSums]:
    """Per cell of ``keys``: the share of its seeds whose model fits its range, as seed sums (a seed counts once,
    whatever its rows; a seed drawn twice counts twice)."""
    seeds = evaluations.assign(_fitted=fitted_rows(evaluations, fits)).drop_duplicates(["pe", "offset", "seed"])
    return seed_sums.means_by(seeds, list(keys), "_fitted")


def mostly(shares):
    """Whether most of a cell's seeds fit the range, from the share of them that does."""
    return shares > 0.5


def fitted_means(evaluations: pd.DataFrame, fits: pd.DataFrame, by: list[str], column: str,
                 keys=("pe", "offset")) -> dict[tuple, SeedSums]:
    """The mean of ``column`` over ``runs_that_fit`` per group of ``keys`` + ``by``, by the group's key, as seed
    sums (``lengthgen.checks.seed_sums``). Which seeds a cell keeps depends on the seeds drawn, so each is the mean over
    the fitted runs where the drawn seeds mostly fit, else the mean over all: three means of seed sums (the share of
    a cell's seeds that fit, the group's mean over its fitted runs and over all), a seed drawn twice counting twice
    as in the recomputation."""
    keys = list(keys)
    frame = evaluations.assign(_fitted=fitted_rows(evaluations, fits))
    shares = fit_shares(evaluations, fits, keys)
    fitted = seed_sums.means_by(frame[frame["_fitted"]], keys + by, column)
    return {key: seed_sums.combine(_kept_mean, shares[key[:len(keys)]], fitted.get(key, seed_sums.NOTHING), every)
            for key, every in seed_sums.means_by(frame, keys + by, column).items()}


def _kept_mean(share: np.ndarray, fitted: np.ndarray, every: np.ndarray) -> np.ndarray:
    return np.where(mostly(share), fitted, every)


def fit_counts(fits: pd.DataFrame, keys=("pe", "offset")) -> pd.DataFrame:
    """Per cell of ``keys``: how many models were trained and how many fit their range."""
    return fits.groupby(list(keys), as_index=False).agg(n_seeds=("fitted", "size"), n_fitted=("fitted", "sum"))
