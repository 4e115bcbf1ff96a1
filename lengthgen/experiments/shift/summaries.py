"""The logit changes summarized per shift: torch-free, shared by the shift checks (``analysis.py``) and their section
text (``section.py``, which the figure job writes without loading a model)."""

import pandas as pd


def summary_by_shift(changes: pd.DataFrame, offset: int, column: str = "attention_logit_change") -> pd.DataFrame:
    """Max over seeds and lengths of ``column`` (a logit change), per (pe, dtype) row and shift column.

    NaN where the shift is undefined for every seed and length (max() skips NaN), or not run.
    """
    cells = changes[changes["offset"] == offset]
    return cells.groupby(["pe", "dtype", "shift"])[column].max().unstack("shift")
