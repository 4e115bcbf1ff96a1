"""The mechanics claim's headlines, read in every run by the multiseed experiment (``lengthgen/checks/headlines.py``):
the claim's primary number, the share of lengths past the range at which the modal position lies inside the
training range, the same for the heads untrained, and beside it how many sequences attend there."""

from lengthgen.experiments.mechanics.thresholds import MIN_MEAN_IN_RANGE_SHARE, MIN_MODAL_FRACTION
from lengthgen.checks.headlines import UNIT, Headline, by_run, statistic


def learned_past_range(frame):
    return frame[(frame["pe"] == "learned") & frame["past_training_range"]]


def in_range_share(frame):
    return by_run(learned_past_range(frame), "modal_in_training_range", "mean")


HEADLINES = [
    Headline("mechanics: learned share of lengths past the range with the modal position inside the training range",
             ("mechanics_by_length",), ">=", lambda s: MIN_MEAN_IN_RANGE_SHARE,
             lambda f, s: in_range_share(f), bounds=UNIT),
    statistic("mechanics: untrained share of lengths past the range with the modal position inside the training "
              "range", ("mechanics_untrained_by_length",), lambda f, s: in_range_share(f), bounds=UNIT),
    Headline("mechanics: learned fraction of sequences at the modal position (min over lengths)",
             ("mechanics_by_length",), ">=", lambda s: MIN_MODAL_FRACTION,
             lambda f, s: by_run(learned_past_range(f), "modal_fraction", "min"), bounds=UNIT),
]
