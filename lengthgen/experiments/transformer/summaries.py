"""The transformer's findings and rope's accuracy floor by length: torch-free, shared by its checks (``analysis.py``)
and its section text (``section.py``, which the figure job writes without loading a model)."""

import math

import pandas as pd

PAPER_FINDINGS = ("phenomenon", "equivariance", "carrier")  # what the paper claims transfers
FINDINGS = (*PAPER_FINDINGS, "steps")


def rope_floor_by_length(windows: pd.DataFrame) -> pd.DataFrame:
    """Per (offset, length): rope's lowest last-window accuracy over seeds, the statistic the phenomenon's
    checks judge at 4x and at every length past the range."""
    rope = windows[windows["pe"] == "rope"]
    return rope.groupby(["offset", "length"], as_index=False)["accuracy"].min()


def prediction_factor(predicted, found) -> float:
    """How many times the larger of the predicted and found step positions is the smaller; inf without a
    prediction."""
    return math.inf if pd.isna(predicted) else max(predicted, found) / min(predicted, found)
