"""The shift claim's headline, asked of every run by the multiseed experiment (``lengthgen/checks/headlines.py``)."""

from lengthgen.experiments.shift.thresholds import ROPE_MAX_CHANGE
from lengthgen.checks.headlines import Headline, by_run

HEADLINES = [
    # RoPE's attention logits depend on the relative offset alone, by the rotation's algebra: an identity
    # of the encoding, which only a bug (or more than float64 rounding) breaks.
    Headline("shift: rope float64 attention-logit change (max over shifts)", ("shift_changes",), "<=",
             lambda s: ROPE_MAX_CHANGE,
             lambda f, s: by_run(f[(f["pe"] == "rope") & (f["dtype"] == "float64")], "attention_logit_change", "max"),
             log_scale=True, kind="sanity"),
]
