"""The transformer claim's headlines, read in every run by the multiseed experiment (``lengthgen/checks/headlines.py``):
the rope transformer's accuracy in the last window at 4x the training length, the learned one's beside it, the rope
transformer's fit of its training range (the claim's precondition), and its largest step down past the range."""

import pandas as pd

from lengthgen.checks.headlines import UNIT, Headline, accuracy_at_four_x, lowest_in_range, statistic
from lengthgen.checks.shared_rules import ABOVE_CHANCE_FACTOR, NEAR_PERFECT


def largest_step(frame: pd.DataFrame, settings: dict) -> pd.Series:
    """Per rope run, its largest step down in accuracy past the training range (a drop of at least the step rule's
    between the windows before and after a position, ``transformer_steps``); 0 where it has none."""
    rope = frame[frame["pe"] == "rope"]
    runs = rope[rope["source"] == "transformer_windows"].groupby(["offset", "seed"]).size().index
    steps = rope[(rope["source"] == "transformer_steps") & (rope["position"] > settings["train_length_max"])]
    drops = (steps["accuracy_before"] - steps["accuracy_after"]).groupby([steps["offset"], steps["seed"]]).max()
    return drops.reindex(runs, fill_value=0.0)


HEADLINES = [
    Headline("transformer: rope accuracy at 4x the training length", ("transformer_windows",), ">=",
             lambda s: ABOVE_CHANCE_FACTOR / s["vocab_size"],
             accuracy_at_four_x("pe", "rope"), bounds=UNIT),
    statistic("transformer: learned accuracy at 4x the training length", ("transformer_windows",),
              accuracy_at_four_x("pe", "learned"), bounds=UNIT),
    Headline("transformer: rope lowest accuracy in the training range", ("transformer_windows",), ">=",
             lambda s: NEAR_PERFECT, lowest_in_range("pe", "rope"), bounds=UNIT),
    statistic("transformer: rope's largest step down in accuracy past the range (0: none)",
              ("transformer_windows", "transformer_steps"), largest_step, bounds=UNIT),
]
