"""The checks of lengthgen.checks.check, on hand-made checks (unit tier)."""

import math
import re
import operator

import pandas as pd
import pytest

from lengthgen.checks import check as claims
from lengthgen.checks.check import check, checks_markdown, with_keys
from lengthgen.report.markdown import row_cells

# Each comparison as Python's own operators read it, for the values below, above and at the threshold.
PYTHON = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq}


@pytest.mark.parametrize("comparison", sorted(PYTHON))
@pytest.mark.parametrize("value", [0.5, 1.0, 1.5])
def test_a_check_holds_exactly_when_its_comparison_does(comparison, value):
    row = check("c", "s", value, comparison, 1.0)
    assert row["holds"] is PYTHON[comparison](value, 1.0)
    assert (row["value"], row["threshold"], row["comparison"]) == (value, 1.0, comparison)


@pytest.mark.parametrize("comparison", sorted(PYTHON))
def test_a_nan_value_never_holds(comparison):
    assert check("c", "s", math.nan, comparison, 1.0)["holds"] is False


def test_a_check_keeps_its_names_offset_kind_and_rule():
    row = check("claim A", "stat B", 3, ">=", 2, offset=7, rule="at least two", kind="sanity")
    assert list(row) == claims.CHECK_COLUMNS
    assert row == {"claim": "claim A", "statistic": "stat B", "offset": 7, "value": 3.0, "comparison": ">=",
                   "threshold": 2.0, "rule": "at least two", "holds": True, "kind": "sanity", "per_seed": True}
    assert isinstance(row["value"], float) and isinstance(row["threshold"], float)


def test_the_default_rule_is_the_comparison_and_the_threshold_and_the_kind_is_evidence():
    row = check("c", "s", 0.0, "<", 0.15625)
    assert row["rule"] == "< 0.1562"  # 4 significant digits
    assert row["kind"] == "evidence"
    assert row["offset"] is None
    assert row["per_seed"] is True  # a minimum, a mean or a share over seeds: counted seed by seed


def test_a_check_declared_pooled_only_keeps_the_declaration_in_its_table():
    # One seed's value set against another's (a trained minimum less an untrained maximum) has no per-seed count.
    rows = [check("a", "x", 1, ">=", 0), check("a", "margin", 0.1, ">", 0, per_seed=False)]
    assert rows[1]["per_seed"] is False
    table = with_keys(rows, "e", "S")
    assert table["per_seed"].tolist() == [True, False]
    assert with_keys(pd.DataFrame(rows), "e", "S")["per_seed"].tolist() == [True, False]


@pytest.mark.parametrize("options, message", [({"comparison": "=>"}, "unknown comparison '=>'; one of >=, <=,"),
                                              ({"kind": "proof"}, "unknown check kind 'proof'; one of evidence, sanity")])
def test_an_unknown_comparison_or_kind_is_refused_by_name(options, message):
    arguments = {"comparison": ">=", **options}
    with pytest.raises(ValueError, match=message):
        check("c", "s", 1.0, arguments.pop("comparison"), 0.0, **arguments)


def test_with_keys_puts_experiment_and_section_in_front_and_keeps_the_order():
    rows = [check("a", "x", 1, ">=", 0, offset=3), check("a", "x", 1, ">=", 2), check("b", "y", 0, "<", 1, offset=5)]
    table = with_keys(rows, "prop1", "Proposition 1")
    assert list(table.columns) == ["experiment", "section", *claims.CHECK_COLUMNS]
    assert table["experiment"].tolist() == ["prop1"] * 3 and table["section"].tolist() == ["Proposition 1"] * 3
    assert table["claim"].tolist() == ["a", "a", "b"] and table["holds"].tolist() == [True, False, True]
    assert str(table["offset"].dtype) == "Int64" and table["offset"].isna().tolist() == [False, True, False]
    assert table["offset"].dropna().tolist() == [3, 5]
    assert table.index.tolist() == [0, 1, 2]
    # A table is taken as its rows.
    pd.testing.assert_frame_equal(with_keys(pd.DataFrame(rows), "prop1", "Proposition 1"), table)


def test_a_repeated_key_is_refused_naming_every_repeated_check():
    rows = [check("a", "x", 1, ">=", 0, offset=3), check("a", "x", 2, ">=", 0, offset=3),
            check("b", "y", 1, ">=", 0), check("b", "y", 0, ">=", 0), check("a", "x", 1, ">=", 0, offset=4)]
    with pytest.raises(ValueError) as error:
        with_keys(rows, "prop1", "S")
    assert str(error.value) == "experiment prop1 has checks with the same key: a | x | K=3; b | y | K=None"
    # A pooled check (no offset) read back from a table (NaN) is the same key as another pooled one.
    table = pd.DataFrame([check("b", "y", 1, ">=", 0), check("b", "y", 0, ">=", 0)]).astype({"offset": float})
    with pytest.raises(ValueError, match=re.escape("b | y | K=None")):
        with_keys(table, "e", "S")


def test_markdown_shows_evidence_then_the_sanity_checks_apart():
    rows = [check("big", "ratio", 2.0, ">=", 1.5, offset=4), check("pooled", "mean", 0.123456, "<", 0.5),
            check("identity", "error", 1.0, "<=", 0.0, kind="sanity")]
    text = checks_markdown(with_keys(rows, "e", "S"))
    evidence, title, sanity = text.split("\n\n")
    assert title == "Sanity checks (tests of the code; in no verdict):"
    lines = evidence.split("\n")
    assert [cell.strip() for cell in lines[0].strip("|").split("|")] == ["claim", "K", "statistic", "value", "rule",
                                                                        "holds"]
    assert [cell.strip() for cell in lines[2].strip("|").split("|")] == ["big", "4", "ratio", "2", ">= 1.5", "yes"]
    assert [cell.strip() for cell in lines[3].strip("|").split("|")] == ["pooled", "all", "mean", "0.1235", "< 0.5",
                                                                        "yes"]
    assert len(lines) == 4
    sanity_lines = sanity.split("\n")
    assert [cell.strip() for cell in sanity_lines[2].strip("|").split("|")] == ["identity", "all", "error", "1",
                                                                               "<= 0", "no"]
    assert len(sanity_lines) == 3


def test_markdown_without_sanity_checks_has_no_sanity_title_and_without_evidence_no_evidence_table():
    only_evidence = checks_markdown(with_keys([check("a", "x", 1, ">=", 0)], "e", "S"))
    assert "Sanity" not in only_evidence and "\n\n" not in only_evidence
    only_sanity = checks_markdown(with_keys([check("a", "x", 1, ">=", 0, kind="sanity")], "e", "S"))
    assert only_sanity.startswith("Sanity checks (tests of the code; in no verdict):\n\n|")
    assert checks_markdown(with_keys([], "e", "S")) == ""


def test_repeated_keys_with_and_without_an_offset_are_all_named():
    # The same claim and statistic repeated pooled and at an offset: both keys are named, in a stable order.
    rows = [check("a", "x", 1, ">=", 0), check("a", "x", 1, ">=", 0, offset=3), check("a", "x", 2, ">=", 0),
            check("a", "x", 2, ">=", 0, offset=3)]
    with pytest.raises(ValueError) as error:
        with_keys(rows, "e", "S")
    assert str(error.value) == "experiment e has checks with the same key: a | x | K=3; a | x | K=None"


def test_a_check_of_seed_sums_keeps_its_statistic_for_the_bootstrap_and_plain_checks_have_no_such_column():
    from lengthgen.checks import seed_sums

    runs = pd.DataFrame({"seed": [0, 0, 1], "value": [0.2, 0.4, 0.9]})
    summed = check("c", "mean", seed_sums.mean(runs, "value"), ">=", 0.5)
    assert summed["value"] == pytest.approx(0.5) and summed["holds"] is True  # (0.2 + 0.4 + 0.9) / 3, on all seeds
    assert summed["seed_sums"][1] == 0.5  # the threshold, kept as given
    assert "seed_sums" not in check("c", "mean", 0.5, ">=", 0.5)
    assert "seed_sums" in with_keys([summed, check("c", "plain", 1, ">=", 0)], "e", "S")
    assert list(with_keys([check("c", "plain", 1, ">=", 0)], "e", "S").columns) == ["experiment", "section",
                                                                                   *claims.CHECK_COLUMNS]


def test_a_float_value_with_its_statistic_as_seed_sums_keeps_the_float_and_gives_the_bootstrap_the_sums():
    from lengthgen.checks import seed_sums

    runs = pd.DataFrame({"seed": [0, 1, 2], "value": [0.1, 0.2, 0.6]})
    as_computed = runs["value"].mean()  # pandas' mean, which the seed sums give only up to rounding
    kept = check("c", "mean", as_computed, "<=", 0.3, resampled=seed_sums.mean(runs, "value"))
    assert kept["value"] == as_computed and kept["holds"] is True
    assert kept["seed_sums"][0].value() == pytest.approx(as_computed) and kept["seed_sums"][1] == 0.3
    with pytest.raises(ValueError, match="resampled itself"):
        check("c", "mean", seed_sums.mean(runs, "value"), "<=", 0.3, resampled=seed_sums.mean(runs, "value"))


def test_a_bar_in_a_statistics_name_stays_in_its_cell():
    """``mean |weight|``: an unescaped bar would end the cell and shift every later column of the row."""
    text = checks_markdown(with_keys([check("a|b", "mean |weight| per key", 0.9, ">=", 0.5, rule="|x| >= 0.5")],
                                     "e", "S"))
    assert row_cells(text.split("\n")[2]) == ["a\\|b", "all", "mean \\|weight\\| per key", "0.9", "\\|x\\| >= 0.5",
                                              "yes"]
