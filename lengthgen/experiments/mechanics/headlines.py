"""The mechanics claim's headline, asked of every run by the multiseed experiment (``lengthgen/checks/headlines.py``)."""

from lengthgen.experiments.mechanics.thresholds import MIN_MODAL_FRACTION
from lengthgen.checks.headlines import UNIT, Headline, by_run

HEADLINES = [
    Headline("mechanics: learned fraction of sequences at the modal position (min over lengths)",
             ("mechanics_by_length",), ">=", lambda s: MIN_MODAL_FRACTION,
             lambda f, s: by_run(f[(f["pe"] == "learned") & f["past_training_range"]], "modal_fraction", "min"),
             bounds=UNIT),
]
