"""The one verdict vocabulary of the report, defined once.

A claim, a check over its offsets and a replication are all graded in the same four words:

- *holds*: every evidence check holds;
- *holds in part*: some evidence checks hold and some do not;
- *does not hold*: no evidence check holds;
- *untestable*: a precondition failed (the heads did not fit their training range, say), or nothing was
  measured, so the evidence cannot be read.

A precondition gates a verdict: when one fails the verdict is *untestable*, and when all hold they add nothing
to it (``graded``). Sanity checks (tests of the code: an identity, an impossibility) are in no verdict either.
"""

import pandas as pd

HOLDS, IN_PART, DOES_NOT_HOLD, UNTESTABLE = VERDICTS = ("holds", "holds in part", "does not hold", "untestable")

DEFINITION = (
    "**Verdicts.** *holds*: every evidence check holds; *holds in part*: some do; *does not hold*: none does; "
    "*untestable*: a precondition failed (the heads did not fit their training range) or nothing was measured. "
    "A precondition gates a verdict and never counts as evidence for it; sanity checks (tests of the code) are "
    "shown apart and count in no verdict.")


def graded(holds: pd.Series) -> str:
    """The verdict of a set of outcomes (True where a check holds): holds, holds in part, does not hold;
    untestable when there are none."""
    if holds.empty:
        return UNTESTABLE
    if holds.all():
        return HOLDS
    return DOES_NOT_HOLD if not holds.any() else IN_PART


def gated(evidence: pd.Series, preconditions: pd.Series) -> str:
    """``graded(evidence)``, unless a precondition fails: then the evidence cannot be read, *untestable*."""
    return UNTESTABLE if not preconditions.all() else graded(evidence)
