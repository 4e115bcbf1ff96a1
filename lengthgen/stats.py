"""Statistics over seeds: mean and a two-sided 95% Student-t interval."""

import numpy as np
import pandas as pd
from scipy import stats


def mean_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of the mean of ``values``; one value gives a zero-width interval."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    standard_error = stats.sem(values) if len(values) > 1 else 0.0
    if standard_error == 0:  # one value, or all equal: scipy's interval is undefined at scale 0
        return mean, mean, mean
    low, high = stats.t.interval(confidence, len(values) - 1, loc=mean, scale=standard_error)
    return mean, float(low), float(high)


def summarize_over_seeds(frame: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """One row per group of ``by``: n_seeds, mean, ci_low, ci_high of ``value``."""
    rows = []
    for key, group in frame.groupby(by, sort=True):
        mean, low, high = mean_interval(group[value])
        rows.append(dict(zip(by, key), n_seeds=len(group), mean=mean, ci_low=low, ci_high=high))
    return pd.DataFrame(rows)
