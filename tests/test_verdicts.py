"""The report's one verdict vocabulary: grading, the precondition gate, and the older words read as the new."""

import pandas as pd
import pytest

from lengthgen.checks.verdicts import DOES_NOT_HOLD, HOLDS, IN_PART, LEGACY, UNTESTABLE, VERDICTS, gated, graded, normalized


@pytest.mark.parametrize("holds, expected", [((True, True), HOLDS), ((True, False), IN_PART),
                                             ((False, False), DOES_NOT_HOLD), ((), UNTESTABLE)])
def test_a_set_of_outcomes_is_graded_by_how_many_hold(holds, expected):
    assert graded(pd.Series(holds, dtype=bool)) == expected


def test_a_failing_precondition_makes_the_verdict_untestable_and_holding_ones_add_nothing():
    evidence = pd.Series([True, False])
    assert gated(evidence, pd.Series([True, False])) == UNTESTABLE
    assert gated(evidence, pd.Series([True, True])) == gated(evidence, pd.Series([], dtype=bool)) == IN_PART
    assert gated(pd.Series([False]), pd.Series([True])) == DOES_NOT_HOLD  # a precondition is no evidence for it


@pytest.mark.parametrize("old, new", [("confirmed", HOLDS), ("mixed", IN_PART), ("not confirmed", DOES_NOT_HOLD),
                                      ("replicated", HOLDS), ("partly", IN_PART), ("not replicated", DOES_NOT_HOLD),
                                      ("fails", DOES_NOT_HOLD), ("not tested", UNTESTABLE)])
def test_every_older_word_reads_as_the_verdict_it_meant(old, new):
    assert normalized(old) == new


def test_the_vocabulary_reads_as_itself_and_an_unknown_word_is_refused_by_name():
    assert [normalized(word) for word in VERDICTS] == list(VERDICTS)
    assert set(LEGACY.values()) <= set(VERDICTS)
    with pytest.raises(ValueError, match="'maybe'"):
        normalized("maybe")
