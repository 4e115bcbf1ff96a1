"""The frequency claim's headlines, asked of every run by the multiseed experiment (``lengthgen/checks/headlines.py``)."""

import pandas as pd

from lengthgen.experiments.frequency.thresholds import MIN_SHARE_MARGIN_OVER_UNTRAINED, MIN_TOP4_ALIGNMENT, MIN_TOP4_SHARE
from lengthgen.checks.headlines import DIFFERENCE, UNIT, Headline, by_run


def share_over_untrained(frame: pd.DataFrame, settings: dict) -> pd.Series:
    """Per run, its top-4 share minus the highest of the same heads at init at its offset: above 0 in every run
    is frequency's ``share_over_untrained`` check (every trained head above every untrained one)."""
    trained = frame[frame["source"] == "frequency_summary"].set_index(["offset", "seed"])["top4_share"]
    highest_untrained = frame[frame["source"] == "frequency_untrained_summary"].groupby("offset")["top4_share"].max()
    return trained - highest_untrained.reindex(trained.index.get_level_values("offset")).to_numpy()


HEADLINES = [
    # Untrained heads already hold 0.46-0.75 of their energy in their top 4 blocks (thresholds.py), so the share
    # is paired with its margin over the same heads untrained, as in frequency's checks.
    Headline("frequency: energy share of the top 4 rotary blocks", ("frequency_summary",), ">=",
             lambda s: MIN_TOP4_SHARE, lambda f, s: by_run(f, "top4_share", "mean"), bounds=UNIT),
    Headline("frequency: energy share of the top 4 rotary blocks over the highest of the same heads untrained",
             ("frequency_summary", "frequency_untrained_summary"), ">",
             lambda s: MIN_SHARE_MARGIN_OVER_UNTRAINED, share_over_untrained, bounds=DIFFERENCE),
    Headline("frequency: alignment of the top 4 blocks with K", ("frequency_summary",), ">=",
             lambda s: MIN_TOP4_ALIGNMENT, lambda f, s: by_run(f, "top4_alignment", "mean"), bounds=(-1, 1)),
]
