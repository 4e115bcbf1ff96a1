"""The transformer claim's headlines, read in every run by the multiseed experiment (``lengthgen/checks/headlines.py``):
the rope transformer's accuracy in the last window at 4x the training length, the learned one's beside it, and the
rope transformer's fit of its training range (the claim's precondition)."""

from lengthgen.checks.headlines import UNIT, Headline, at_four_x, by_run, statistic
from lengthgen.checks.shared_rules import ABOVE_CHANCE_FACTOR, NEAR_PERFECT

HEADLINES = [
    Headline("transformer: rope accuracy at 4x the training length", ("transformer_windows",), ">=",
             lambda s: ABOVE_CHANCE_FACTOR / s["vocab_size"],
             lambda f, s: by_run(at_four_x(f[f["pe"] == "rope"], s), "accuracy", "mean"), bounds=UNIT),
    statistic("transformer: learned accuracy at 4x the training length", ("transformer_windows",),
              lambda f, s: by_run(at_four_x(f[f["pe"] == "learned"], s), "accuracy", "mean"), bounds=UNIT),
    Headline("transformer: rope lowest accuracy in the training range", ("transformer_windows",), ">=",
             lambda s: NEAR_PERFECT,
             lambda f, s: by_run(f[(f["pe"] == "rope") & f["in_training_range"]], "accuracy", "min"), bounds=UNIT),
]
