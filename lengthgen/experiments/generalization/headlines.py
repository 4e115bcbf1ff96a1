"""The generalization claim's headlines, read in every run by the multiseed experiment (``lengthgen/checks/headlines.py``)."""

from lengthgen.checks.headlines import (UNIT, Headline, accuracy_at_four_x, by_run, lowest_in_range, past_range,
                                        statistic)
from lengthgen.checks.shared_rules import ABOVE_CHANCE_FACTOR, CHANCE_TOLERANCE, NEAR_PERFECT

LONGEST_FACTOR = 32  # the evaluation span reaches 32x the longest training length at every point of the study


def at_longest(frame, settings):
    return frame[frame["length"] == LONGEST_FACTOR * settings["train_length_max"]]


HEADLINES = [
    Headline("generalization: rope accuracy at 4x the training length", ("accuracy_by_length",), ">=",
             lambda s: ABOVE_CHANCE_FACTOR / s["vocab_size"],
             accuracy_at_four_x("pe", "rope"), bounds=UNIT),
    statistic("generalization: learned accuracy at 4x the training length", ("accuracy_by_length",),
              accuracy_at_four_x("pe", "learned"), bounds=UNIT),
    statistic("generalization: rope accuracy at 32x the training length", ("accuracy_by_length",),
              lambda f, s: by_run(at_longest(f[f["pe"] == "rope"], s), "accuracy", "mean"), bounds=UNIT),
    Headline("generalization: rope lowest accuracy in the training range", ("accuracy_by_length",), ">=",
             lambda s: NEAR_PERFECT, lowest_in_range("pe", "rope"), bounds=UNIT),
    # A head that learned nothing is at chance too: the distance is paired with the fit of the range, as the
    # generalization checks pair them.
    Headline("generalization: learned distance from chance past the range (max over lengths)", ("accuracy_by_length",),
             "<=",
             lambda s: CHANCE_TOLERANCE,
             lambda f, s: by_run(past_range(f[f["pe"] == "learned"], s).assign(
                 distance=lambda g: (g["accuracy"] - 1 / s["vocab_size"]).abs()), "distance", "max")),
    Headline("generalization: learned lowest accuracy in the training range", ("accuracy_by_length",), ">=",
             lambda s: NEAR_PERFECT, lowest_in_range("pe", "learned"), bounds=UNIT),
]
