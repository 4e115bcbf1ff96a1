"""The report's one verdict vocabulary: grading and the precondition gate."""

import pandas as pd
import pytest

from lengthgen.checks.verdicts import DOES_NOT_HOLD, HOLDS, IN_PART, UNTESTABLE, gated, graded


@pytest.mark.parametrize("holds, expected", [((True, True), HOLDS), ((True, False), IN_PART),
                                             ((False, False), DOES_NOT_HOLD), ((), UNTESTABLE)])
def test_a_set_of_outcomes_is_graded_by_how_many_hold(holds, expected):
    assert graded(pd.Series(holds, dtype=bool)) == expected


def test_a_failing_precondition_makes_the_verdict_untestable_and_holding_ones_add_nothing():
    evidence = pd.Series([True, False])
    assert gated(evidence, pd.Series([True, False])) == UNTESTABLE
    assert gated(evidence, pd.Series([True, True])) == gated(evidence, pd.Series([], dtype=bool)) == IN_PART
    assert gated(pd.Series([False]), pd.Series([True])) == DOES_NOT_HOLD  # a precondition is no evidence for it

