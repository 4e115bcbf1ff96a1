"""The error split's summaries over seeds and lengths: torch-free, shared by its checks (``analysis.py``) and its
section text (``section.py``, which the figure job writes without loading a model)."""

import pandas as pd


POOLED_COUNTS = ["n_sequences", "n_wrong", "n_ranking_error", "n_dilution_error", "n_winning_seen",
                 "n_winning_unseen"]


def past_range_cells(by_length: pd.DataFrame, pe: str) -> pd.DataFrame:
    """``pe``'s cells (rows: one run and length) past the training range, of every seed, offset and length."""
    return by_length[by_length["past_training_range"] & (by_length["pe"] == pe)]


def pooled_past_range(by_length: pd.DataFrame, pe: str) -> pd.DataFrame:
    """Per offset, the counts of ``pe``'s cells past the training range summed over seeds and lengths."""
    return past_range_cells(by_length, pe).groupby("offset")[POOLED_COUNTS].sum()
