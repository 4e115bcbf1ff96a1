"""The mechanics claim's headlines, asked of every run by the multiseed experiment (``lengthgen/checks/headlines.py``):
the claim's primary number, whether the modal position lies inside the training range at every length past it, and
beside it how many sequences attend there."""

from lengthgen.experiments.mechanics.thresholds import MIN_MODAL_FRACTION
from lengthgen.checks.headlines import UNIT, Headline, by_run


def learned_past_range(frame):
    return frame[(frame["pe"] == "learned") & frame["past_training_range"]]


HEADLINES = [
    Headline("mechanics: learned share of lengths past the range with the modal position inside the training range",
             ("mechanics_by_length",), ">=", lambda s: 1.0,
             lambda f, s: by_run(learned_past_range(f), "modal_in_training_range", "mean"), bounds=UNIT),
    Headline("mechanics: learned fraction of sequences at the modal position (min over lengths)",
             ("mechanics_by_length",), ">=", lambda s: MIN_MODAL_FRACTION,
             lambda f, s: by_run(learned_past_range(f), "modal_fraction", "min"), bounds=UNIT),
]
