"""The frequency claim's headlines, read in every run by the multiseed experiment (``lengthgen/checks/headlines.py``):
the energy share of the top D/16 blocks, the same heads' share untrained (the claim's baseline), the margin between
them and the blocks' alignment with K."""

import pandas as pd

from lengthgen.experiments.frequency.thresholds import MIN_SHARE_MARGIN_OVER_UNTRAINED, MIN_TOP_ALIGNMENT, MIN_TOP_SHARE
from lengthgen.checks.headlines import DIFFERENCE, UNIT, Headline, by_run, statistic


def share_over_untrained(frame: pd.DataFrame, settings: dict) -> pd.Series:
    """Per run, its top-blocks share minus the highest of the same heads at init at its offset: above 0 in every run
    is frequency's ``share_over_untrained`` check (every trained head above every untrained one)."""
    trained = frame[frame["source"] == "frequency_summary"].set_index(["offset", "seed"])["top_share"]
    highest_untrained = frame[frame["source"] == "frequency_untrained_summary"].groupby("offset")["top_share"].max()
    return trained - highest_untrained.reindex(trained.index.get_level_values("offset")).to_numpy()


HEADLINES = [
    # Untrained heads already hold 0.46-0.75 of their energy in their top 4 of 32 blocks (thresholds.py), so the
    # share is paired with its margin over the same heads untrained, as in frequency's checks.
    Headline("frequency: energy share of the top D/16 rotary blocks", ("frequency_summary",), ">=",
             lambda s: MIN_TOP_SHARE, lambda f, s: by_run(f, "top_share", "mean"), bounds=UNIT),
    statistic("frequency: energy share of the top D/16 rotary blocks, the same heads untrained",
              ("frequency_untrained_summary",), lambda f, s: by_run(f, "top_share", "mean"), bounds=UNIT),
    Headline("frequency: energy share of the top D/16 rotary blocks over the highest of the same heads untrained",
             ("frequency_summary", "frequency_untrained_summary"), ">",
             lambda s: MIN_SHARE_MARGIN_OVER_UNTRAINED, share_over_untrained, bounds=DIFFERENCE),
    Headline("frequency: alignment of the top D/16 blocks with K", ("frequency_summary",), ">=",
             lambda s: MIN_TOP_ALIGNMENT, lambda f, s: by_run(f, "top_alignment", "mean"), bounds=(-1, 1)),
]
