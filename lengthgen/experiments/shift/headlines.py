"""The shift claim's headlines, read in every run by the multiseed experiment (``lengthgen/checks/headlines.py``):
rope's logit change under a position shift, and the learned head's beside it (the contrast that shows the test
can fail)."""

from lengthgen.experiments.shift.thresholds import ROPE_MAX_CHANGE
from lengthgen.checks.headlines import Headline, by_run, statistic


def largest_change(frame, pe):
    return by_run(frame[(frame["pe"] == pe) & (frame["dtype"] == "float64") & frame["trained"]],
                  "attention_logit_change", "max")


HEADLINES = [
    # RoPE's attention logits depend on the relative offset alone, by the rotation's algebra: an identity
    # of the encoding, which only a bug (or more than float64 rounding) breaks.
    Headline("shift: rope float64 attention-logit change (max over shifts)", ("shift_changes",), "<=",
             lambda s: ROPE_MAX_CHANGE, lambda f, s: largest_change(f, "rope"), log_scale=True, kind="sanity"),
    statistic("shift: learned float64 attention-logit change (max over shifts)", ("shift_changes",),
              lambda f, s: largest_change(f, "learned"), log_scale=True),
]
