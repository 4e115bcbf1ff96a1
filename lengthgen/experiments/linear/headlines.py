"""The linear control's headlines, asked of every run by the multiseed experiment (``lengthgen/checks/headlines.py``)."""

from lengthgen.experiments.linear.tables import ARMS
from lengthgen.experiments.linear.thresholds import CHANCE_MULTIPLE, LINEAR_HEAD_FIT_ACCURACY
from lengthgen.checks.headlines import UNIT, Headline, at_four_x, by_run

_, HEAD = ARMS  # arm 2, the test of the claim

# Arm 2 only: arm 1's extrapolation is set by its width and base (analysis.py, control_checks).
# A head that learned nothing does not extrapolate either: paired with arm 2's fit of the range, the
# precondition of linear's own checks.
HEADLINES = [
    Headline(f"linear, {ARMS[HEAD]}: accuracy at 4x the training length", ("linear_by_length",), "<=",
             lambda s: CHANCE_MULTIPLE / s["vocab_size"],
             lambda f, s: by_run(at_four_x(f[f["arm"] == HEAD], s), "accuracy", "mean"), bounds=UNIT),
    Headline(f"linear, {ARMS[HEAD]}: lowest accuracy in the training range", ("linear_by_length",), ">=",
             lambda s: LINEAR_HEAD_FIT_ACCURACY,
             lambda f, s: by_run(f[(f["arm"] == HEAD) & f["in_training_range"]], "accuracy", "min"),
             bounds=UNIT),
]
