"""The linear control's arms, its sweep's cut-off and the lengths it compares: torch-free, shared by its checks
(``analysis.py``) and its section text (``section.py``, which the figure job writes without loading a model)."""

from lengthgen.experiments.linear.tables import ARMS
from lengthgen.experiments.linear.thresholds import LINEAR_CUTOFFS

CONTROL, HEAD, MATCHED = ARMS
SWEEP_CUTOFF = min(LINEAR_CUTOFFS)  # no-op on a well-conditioned basis; keeps an ill-posed one finite


def comparison_lengths(lengths, train_length_max: int) -> tuple[int, int]:
    """(reference, far): the first evaluation length >= 2 L, whose last octave lies past the training
    offsets, and the longest one."""
    lengths = sorted(set(lengths))
    past = [length for length in lengths if length >= 2 * train_length_max]
    if not past or past[0] == lengths[-1]:
        raise ValueError(f"need two evaluation lengths >= 2 x train_length_max = {2 * train_length_max}, got {lengths}")
    return past[0], lengths[-1]
