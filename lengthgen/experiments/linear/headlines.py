"""The linear control's headlines, read in every run by the multiseed experiment (``lengthgen/checks/headlines.py``):
arm 2's accuracy at 4x, its matched softmax head's lead over it there and own accuracy there, and both heads' fit of
the range."""

import pandas as pd

from lengthgen.experiments.linear.summaries import HEAD, MATCHED
from lengthgen.experiments.linear.tables import ARMS
from lengthgen.experiments.linear.thresholds import CHANCE_MULTIPLE, LINEAR_HEAD_FIT_ACCURACY, MIN_SOFTMAX_ADVANTAGE
from lengthgen.checks.headlines import DIFFERENCE, UNIT, Headline, accuracy_at_four_x, lowest_in_range, statistic


def softmax_advantage(frame: pd.DataFrame, settings: dict) -> pd.Series:
    """Per run, the matched softmax head's accuracy at 4x minus arm 2's of the same (offset, seed): the linear
    section's check "the softmax's, not the base's" asks it of the seeds' means per offset; a run one of them lacks
    has none."""
    matched, head = (accuracy_at_four_x("arm", arm)(frame, settings) for arm in (MATCHED, HEAD))
    return (matched - head).dropna()


# Arm 2 and its matched softmax head only: arm 1's extrapolation is set by its width and base (analysis.py,
# control_checks). A head that learned nothing does not extrapolate either: paired with arm 2's fit of the range,
# the precondition of linear's own checks.
HEADLINES = [
    Headline("linear: linear-attention head's accuracy at 4x the training length", ("linear_by_length",), "<=",
             lambda s: CHANCE_MULTIPLE / s["vocab_size"], accuracy_at_four_x("arm", HEAD), bounds=UNIT),
    Headline(f"linear, {ARMS[HEAD]}: lowest accuracy in the training range", ("linear_by_length",), ">=",
             lambda s: LINEAR_HEAD_FIT_ACCURACY, lowest_in_range("arm", HEAD), bounds=UNIT),
    Headline("linear: matched softmax head's lowest accuracy in the training range", ("linear_by_length",), ">=",
             lambda s: LINEAR_HEAD_FIT_ACCURACY, lowest_in_range("arm", MATCHED), bounds=UNIT),
    Headline("linear: matched softmax head's accuracy at 4x the training length minus the linear head's",
             ("linear_by_length",), ">=", lambda s: MIN_SOFTMAX_ADVANTAGE, softmax_advantage, bounds=DIFFERENCE),
    # how far the softmax head itself extrapolates at the linear control's base, shown beside its lead
    statistic("linear: matched softmax head's accuracy at 4x the training length", ("linear_by_length",),
              accuracy_at_four_x("arm", MATCHED), bounds=UNIT),
]
