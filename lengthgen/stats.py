"""Statistics over seeds: mean and a two-sided 95% Student-t interval."""

import numpy as np
import pandas as pd
from scipy import stats


def mean_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of the mean of ``values``; one value gives a zero-width interval."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if len(values) < 2:
        return mean, mean, mean
    half_width = stats.t.ppf(0.5 + confidence / 2, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return mean, mean - half_width, mean + half_width


def summarize_over_seeds(frame: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """One row per group of ``by``: n_seeds, mean, ci_low, ci_high of ``value``."""
    rows = []
    for key, group in frame.groupby(by, sort=True):
        mean, low, high = mean_interval(group[value])
        rows.append(dict(zip(by, key), n_seeds=len(group), mean=mean, ci_low=low, ci_high=high))
    return pd.DataFrame(rows)
