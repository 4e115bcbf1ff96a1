"""Statistics over seeds: mean and a two-sided 95% Student-t interval (also its low end as seed sums)."""

import numpy as np
import pandas as pd
from scipy import stats

from lengthgen.checks.seed_sums import SeedSums


def mean_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of the mean of ``values``; one value gives a zero-width interval."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    standard_error = stats.sem(values) if len(values) > 1 else 0.0
    if standard_error == 0:  # one value, or all equal: scipy's interval is undefined at scale 0
        return mean, mean, mean
    low, high = stats.t.interval(confidence, len(values) - 1, loc=mean, scale=standard_error)
    return mean, float(low), float(high)


def mean_interval_low(frame: pd.DataFrame, column: str, confidence: float = 0.95) -> SeedSums:
    """The low end of ``mean_interval`` over the rows of ``frame[column]``, as seed sums (``lengthgen.checks.seed_sums``):
    each seed's sum, sum of squares and count of the values less their mean over all rows (the shift keeps the
    variance's subtraction from cancelling the digits that matter). One value gives the mean, as does a variance
    that is 0 or rounds below it; equal values give a variance of rounding, not 0, so the mean less about 1e-8 of
    the spread of the seeds' values around the mean of all rows (a few units in the 8th place)."""
    center = float(frame[column].mean()) if len(frame) else 0.0
    shifted = frame[column].astype(float) - center
    by_seed = pd.DataFrame({"seed": frame["seed"], 0: shifted, 1: shifted ** 2, 2: 1.0}).groupby("seed").sum()

    def low(totals: np.ndarray) -> np.ndarray:
        total, squares, n = totals.T
        variance = np.maximum(squares - total ** 2 / n, 0.0) / np.maximum(n - 1, 1)
        quantile = stats.t.ppf((1 - confidence) / 2, np.maximum(n - 1, 1))
        return center + total / n + np.where(n > 1, quantile * np.sqrt(variance / n), 0.0)

    return SeedSums(by_seed, low)


def summarize_over_seeds(frame: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """One row per group of ``by``: n_seeds, mean, ci_low, ci_high of ``value``."""
    rows = []
    for key, group in frame.groupby(by, sort=True):
        mean, low, high = mean_interval(group[value])
        rows.append(dict(zip(by, key), n_seeds=len(group), mean=mean, ci_low=low, ci_high=high))
    return pd.DataFrame(rows)
