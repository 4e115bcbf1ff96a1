"""The cures claim's headlines, read in every run by the multiseed experiment (``lengthgen/checks/headlines.py``):
the share of rope's lost accuracy past the range that log-length scaling wins back, and the hard-attention limit
beside it (what logit scaling wins back as its scale grows)."""

import pandas as pd

from lengthgen.checks.headlines import DIFFERENCE, Headline, statistic
from lengthgen.experiments.cures.thresholds import MIN_RECOVERED_FRACTION


def won_back(frame: pd.DataFrame, settings: dict, cured_column: str, cure: str) -> pd.Series:
    """Per run, mean(cured - uncured) / mean(1 - uncured) of rope's accuracy past the range: the cured accuracy is
    ``cured_column`` of the rows of ``cure``."""
    past = frame[(frame["head"] == "rope") & (frame["length"] > settings["train_length_max"])]
    keys = ["offset", "seed", "length"]
    uncured = past[past["cure"] == "none"].set_index(keys)["accuracy"]
    cured = past[past["cure"] == cure].set_index(keys)[cured_column]
    runs = pd.DataFrame({"gain": cured - uncured, "lost": 1 - uncured}).groupby(["offset", "seed"]).mean()
    return runs["gain"] / runs["lost"].where(runs["lost"] > 0)


HEADLINES = [
    Headline("cures: share of rope's lost accuracy won back by log-length scaling", ("cures_by_length",), ">=",
             lambda s: MIN_RECOVERED_FRACTION, lambda f, s: won_back(f, s, "accuracy", "log_length"),
             bounds=DIFFERENCE),
    statistic("cures: share of rope's lost accuracy won back by hard attention (the limit of logit scaling)",
              ("cures_by_length",), lambda f, s: won_back(f, s, "hard_accuracy", "none"), bounds=DIFFERENCE),
]
