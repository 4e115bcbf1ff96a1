"""The errors claim's headlines, read in every run by the multiseed experiment (``lengthgen/checks/headlines.py``):
the share of rope's wrong answers past the range that are dilution errors (the paper's account), the ranking
errors' share beside it (the rival's), and where the ranking errors' winning keys lie."""

import pandas as pd

from lengthgen.checks.headlines import UNIT, Headline, statistic
from lengthgen.experiments.errors.thresholds import MIN_DILUTION_SHARE


def share_of(frame: pd.DataFrame, settings: dict, part: str, whole: str) -> pd.Series:
    """Per run, rope's ``part`` over its ``whole`` past the training range, pooled over lengths."""
    past = frame[(frame["pe"] == "rope") & frame["past_training_range"]]
    sums = past.groupby(["offset", "seed"])[[part, whole]].sum()
    return sums[part] / sums[whole].where(sums[whole] > 0)


HEADLINES = [
    Headline("errors: rope's share of wrong answers past the range that are dilution errors", ("errors_by_length",),
             ">=", lambda s: MIN_DILUTION_SHARE, lambda f, s: share_of(f, s, "n_dilution_error", "n_wrong"),
             bounds=UNIT),
    statistic("errors: rope's share of wrong answers past the range that are ranking errors", ("errors_by_length",),
              lambda f, s: share_of(f, s, "n_ranking_error", "n_wrong"), bounds=UNIT),
    statistic("errors: share of rope's ranking errors won by a key at an offset never trained", ("errors_by_length",),
              lambda f, s: share_of(f, s, "n_winning_unseen", "n_ranking_error"), bounds=UNIT),
]
