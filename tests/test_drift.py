"""Comparing a run's checked numbers with another run's (python -m lengthgen.studies.drift)."""

import pandas as pd
import pytest

from conftest import markdown_rows
from lengthgen.checks.check import check, with_keys
from lengthgen.studies.drift import changes_markdown, main, previous_changes_markdown
from lengthgen.tables.core import ACCURACY_SUMMARY, CLAIMS
from lengthgen.tables.spread import CLAIM_SPREAD
from lengthgen.experiments.variants.tables import VARIANTS_CLASSES
from lengthgen.tables.io import read_table, write_table
from lengthgen.studies.judgments.tables import CLAIM_JUDGMENTS


DRIFT_HEADER = "|experiment|claim|statistic|K|reference|run|relativedrift|holds(reference->run)|"


def run_claims(values, holds_fraction=(1.0, 1.0, 1.0), kinds=("evidence", "evidence", "sanity"), leave_out=()):
    """Three checks: two of generalization at K=1, one of shift_K1 pooled over shifts; each holds when its value >= 0.5.
    ``leave_out``: indices of checks the run does not make."""
    checks = [("generalization", "generalization",
               check("rope stays above chance", "rope: mean accuracy far out", values[0], ">=", 0.5, offset=1,
                     rule=">= 0.5 (n=32)", kind=kinds[0])),
              ("generalization", "generalization",
               check("learned at chance", "learned: distance from chance", values[1], ">=", 0.5, offset=1,
                     kind=kinds[1])),
              ("shift", "shift_K1", check("rope is shift invariant", "largest float64 change", values[2], ">=", 0.5,
                                          kind=kinds[2]))]
    kept = [(index, entry) for index, entry in enumerate(checks) if index not in leave_out]
    claims = pd.concat([with_keys([entry], experiment, section) for _, (experiment, section, entry) in kept],
                       ignore_index=True)
    spread = claims[["experiment", "section", "claim", "statistic", "offset"]].assign(
        n_seeds=5, resamples=200, spread_low=0.0, spread_high=1.0,
        holds_fraction=[holds_fraction[index] for index, _ in kept], seeds_checked=5, seeds_failing=0)
    return claims, spread


def write_run(folder, values, accuracy, classes=None, **claim_options):
    claims, spread = run_claims(values, **claim_options)
    write_table(claims, folder / "tables" / "claims.parquet", CLAIMS)
    write_table(spread, folder / "tables" / "claim_spread.parquet", CLAIM_SPREAD)
    summary = pd.DataFrame({"experiment": "generalization", "pe": ["rope", "learned"], "offset": 1, "length": 32,
                            "in_training_range": False, "n_seeds": 2, "mean": accuracy, "ci_low": 0.0, "ci_high": 1.0})
    write_table(summary, folder / "tables" / "accuracy_summary.parquet", ACCURACY_SUMMARY)
    if classes:
        cells = pd.DataFrame([{"pe": pe, "offset": 2, "lowest_in_range": 1.0, "far_length": 128, "far_mean": 0.5,
                               "far_ci_low": 0.4, "far_ci_high": 0.6, "longest_length": 1024, "longest_mean": 0.3,
                               "category": category, "n_seeds": 5, "n_fitted": 5} for pe, category in classes.items()])
        write_table(cells, folder / "tables" / "variants_classes.parquet", VARIANTS_CLASSES)
    return folder


def test_identical_runs_have_no_drift(tmp_path, capsys):
    run = write_run(tmp_path / "a", [0.7, 0.6, 0.9], [0.7, 0.12])
    assert main([str(run), str(run)]) == 0
    out = capsys.readouterr().out
    assert "3 in both runs, 0 in the reference only, 0 in the run only; 0 values drifted" in out
    assert "0 outcomes and 0 kinds changed" in out
    pooled = ["shift", "rope is shift invariant", "largest float64 change", "all", "0.9", "0.9", "0.00e+00",
              "yes -> yes"]
    assert pooled in markdown_rows(out, DRIFT_HEADER)


def test_drifted_numbers_are_reported_and_changed_outcomes_fail(tmp_path, capsys):
    reference = write_run(tmp_path / "committed", [0.709, 0.6, 0.9], [0.709, 0.12])
    drifted = write_run(tmp_path / "mine", [0.683, 0.6, 0.9], [0.683, 0.12])
    assert main([str(reference), str(drifted)]) == 0  # numbers moved, every outcome the same
    out = capsys.readouterr().out
    assert (["generalization", "rope stays above chance", "rope: mean accuracy far out", "1", "0.709", "0.683", "3.67e-02",
             "yes -> yes"] in markdown_rows(out, DRIFT_HEADER))
    assert "1 values drifted (largest relative drift 3.67e-02)" in out
    assert "largest drift of a mean accuracy 0.0260 (rope, K=1, n=32: 0.7090 -> 0.6830)" in out
    flipped = write_run(tmp_path / "flipped", [0.3, 0.6, 0.9], [0.3, 0.12])
    assert main([str(reference), str(flipped)]) == 1
    out = capsys.readouterr().out
    assert "yes -> no CHANGED" in out and "1 outcomes and 0 kinds changed" in out


def test_a_check_in_one_run_only_is_a_difference(tmp_path, capsys):
    reference = write_run(tmp_path / "reference", [0.7, 0.6, 0.9], [0.7, 0.12])
    fewer = write_run(tmp_path / "fewer", [0.7, 0.6, 0.9], [0.7, 0.12], leave_out=(1,))
    for flags in ([], ["--open-may-differ"]):  # whatever the seed bootstrap says
        assert main([*flags, str(reference), str(fewer)]) == 1
        out = capsys.readouterr().out
        assert (["generalization", "learned at chance", "learned: distance from chance", "1", "0.6", "-", "-",
                 "yes -> - ONLY IN REFERENCE"] in markdown_rows(out, DRIFT_HEADER))
        assert "2 in both runs, 1 in the reference only, 0 in the run only" in out
    assert main([str(fewer), str(reference)]) == 1
    assert "ONLY IN RUN" in capsys.readouterr().out


def test_a_check_of_another_kind_is_a_difference(tmp_path, capsys):
    reference = write_run(tmp_path / "reference", [0.7, 0.6, 0.9], [0.7, 0.12])
    other = write_run(tmp_path / "other", [0.7, 0.6, 0.9], [0.7, 0.12], kinds=("evidence", "evidence", "evidence"))
    assert main(["--open-may-differ", str(reference), str(other)]) == 1
    out = capsys.readouterr().out
    assert "yes -> yes KIND sanity -> evidence |" in out
    assert "0 outcomes and 1 kinds changed" in out


def test_a_folder_without_claims_fails_naming_the_file(tmp_path, capsys):
    run = write_run(tmp_path / "a", [0.7, 0.6, 0.9], [0.7, 0.12])
    with pytest.raises(SystemExit) as exit:
        main([str(tmp_path / "empty"), str(run)])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "empty" / "tables" / "claims.parquet") in err and "Traceback" not in err


@pytest.mark.parametrize("flags", [[], ["--open-may-differ"]])
def test_a_claims_table_without_a_column_fails_naming_the_file_and_the_column(tmp_path, capsys, flags):
    run = write_run(tmp_path / "run", [0.7, 0.6, 0.9], [0.7, 0.12])
    other = write_run(tmp_path / "other", [0.7, 0.6, 0.9], [0.7, 0.12])
    path = other / "tables" / "claims.parquet"
    pd.read_parquet(path).drop(columns="kind").to_parquet(path)
    for folders in ([other, run], [run, other]):
        with pytest.raises(SystemExit) as exit:
            main([*flags, *map(str, folders)])
        assert exit.value.code == 2
        err = capsys.readouterr().err
        assert f"{path}: does not have the claims schema: missing column 'kind'" in err and "Traceback" not in err


def test_an_outcome_may_differ_only_where_the_seed_bootstrap_leaves_it_open(tmp_path, capsys):
    """The CPU-path comparison: outcomes may part where the seeds do not decide them, nowhere else."""
    reference = write_run(tmp_path / "portable", [0.709, 0.6, 0.9], [0.709, 0.12], holds_fraction=(0.6, 1.0, 1.0))
    open_flip = write_run(tmp_path / "native", [0.49, 0.6, 0.9], [0.49, 0.12], holds_fraction=(0.4, 1.0, 1.0))
    assert main(["--open-may-differ", str(reference), str(open_flip)]) == 0
    assert "outcomes that differ where the seed bootstrap leaves the check open: 1" in capsys.readouterr().out
    assert main([str(reference), str(open_flip)]) == 1  # without the flag every change counts
    decided = write_run(tmp_path / "decided", [0.709, 0.6, 0.9], [0.709, 0.12])
    decided_flip = write_run(tmp_path / "decided_flip", [0.3, 0.6, 0.9], [0.3, 0.12], holds_fraction=(0.0, 1.0, 1.0))
    assert main(["--open-may-differ", str(decided), str(decided_flip)]) == 1


def test_a_variants_class_that_differs_fails(tmp_path, capsys):
    reference = write_run(tmp_path / "a", [0.7, 0.6, 0.9], [0.7, 0.12],
                          classes={"fire": "decays gracefully", "alibi": "fails in range"})
    other = write_run(tmp_path / "b", [0.7, 0.6, 0.9], [0.7, 0.12],
                      classes={"fire": "fails in range", "alibi": "fails in range"})
    assert main(["--open-may-differ", str(reference), str(other)]) == 1
    assert "variants classes that differ: fire K=2: decays gracefully -> fails in range" in capsys.readouterr().out
    assert main([str(reference), str(reference)]) == 0


def test_changes_since_the_previous_run_name_every_differing_check(tmp_path):
    previous = write_run(tmp_path / "previous", [0.709, 0.3, 0.9], [0.709, 0.12], leave_out=(2,))
    current = write_run(tmp_path / "current", [0.8, 0.6, 0.9], [0.8, 0.12])
    text = changes_markdown(*(read_table(run / "tables" / "claims.parquet", CLAIMS) for run in (previous, current)),
                            "Ten seeds instead of five.")
    assert "Ten seeds instead of five." in text
    assert "outcomes changed: 1" in text and "checks in one run only: 1" in text
    assert "erdict" not in text  # the checks' sections are judged by no verdict: the claims are, per condition
    rows = {line.split("|")[3].strip(): [cell.strip() for cell in line.split("|")[4:-1]]
            for line in text.splitlines() if line.startswith("| ") and "---" not in line}
    assert rows["learned: distance from chance"] == ["1", "0.3", "0.6", "no -> yes", "evidence -> evidence", ""]
    assert rows["largest float64 change"] == ["all", "-", "0.9", "- -> yes", "- -> sanity", "now"]
    assert "rope: mean accuracy far out" not in rows  # only its number moved


# --- Mutation testing (docs/mutation.md): behaviour the tests above left open ------------------------------------

def claims_of(*entries):
    """A claims table from (experiment, section, check) entries."""
    return pd.concat([with_keys([entry], experiment, section) for experiment, section, entry in entries],
                     ignore_index=True)


def table_cells(text: str) -> tuple[list[str], str, list[list[str]]]:
    """(header, separator row, body rows) of the one markdown table in ``text``."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    split = [[cell.strip() for cell in line.strip()[1:-1].split("|")] for line in lines]
    return split[0], lines[1], split[2:]


def test_changes_name_every_check_that_differs():
    previous = claims_of(("base", "base", check("a", "s1", 0.3, ">=", 0.5, offset=1)),
                         ("base", "base", check("b", "s2", 0.7, ">=", 0.5, offset=2)),
                         ("base", "base", check("e", "s5", 0.1, ">=", 0.5, offset=4)),
                         ("shift", "shift_K1", check("c", "s3", 0.9, ">=", 0.5, kind="sanity")))
    current = claims_of(("base", "base", check("a", "s1", 0.6, ">=", 0.5, offset=1)),
                        ("base", "base", check("b", "s2", 0.8, ">=", 0.5, offset=2)),
                        ("base", "base", check("d", "s4", 0.7, ">=", 0.5, offset=3)),
                        ("shift", "shift_K1", check("c", "s3", 0.9, ">=", 0.5)))
    text = changes_markdown(previous, current, "  Ten seeds.\n")
    parts = text.split("\n\n")
    assert parts[:3] == [
        "## Changes since the previous run", "Ten seeds.",
        "Checks in both runs: 3; values moved: 2; outcomes changed: 1; kinds changed: 1; checks in one run only: 2."]
    header, separator, rows = table_cells(parts[3])
    assert len(parts) == 4
    assert header == ["experiment", "claim", "statistic", "K", "previous", "now", "holds (previous -> now)",
                      "kind (previous -> now)", "only in"]
    assert sorted(rows) == sorted([
        ["base", "a", "s1", "1", "0.3", "0.6", "no -> yes", "evidence -> evidence", ""],
        ["base", "e", "s5", "4", "0.1", "-", "no -> -", "evidence -> -", "previous"],
        ["base", "d", "s4", "3", "-", "0.7", "- -> yes", "- -> evidence", "now"],
        ["shift", "c", "s3", "all", "0.9", "0.9", "yes -> yes", "sanity -> evidence", ""]])


def test_changes_without_note_and_numbers_stay_text():
    previous = claims_of(("base", "base", check("a", "s1", 0.25, ">=", 0.5, offset=1)),
                         ("base", "base", check("b", "s2", 0.75, ">=", 0.5, offset=2)))
    current = claims_of(("base", "base", check("a", "s1", 0.75, ">=", 0.5, offset=1)),
                        ("base", "base", check("b", "s2", 0.25, ">=", 0.5, offset=2)))
    text = changes_markdown(previous, current, None)
    parts = text.split("\n\n")
    assert parts[0] == "## Changes since the previous run"
    assert parts[1] == ("Checks in both runs: 2; values moved: 2; outcomes changed: 2; kinds changed: 0; checks in one "
                        "run only: 0.")
    header, separator, rows = table_cells(parts[2])
    # Every cell is text, left-aligned, numbers too (no column is read as numbers and right-aligned).
    assert separator.replace(" ", "").strip("|").split("|") == [":" + "-" * (len(cell) - 1) for cell in
                                                               separator.replace(" ", "").strip("|").split("|")]
    assert [row[3:6] for row in sorted(rows)] == [["1", "0.25", "0.75"], ["2", "0.75", "0.25"]]
    # Nothing differs: no table.
    assert changes_markdown(previous, previous, "") == ("## Changes since the previous run\n\nChecks in both runs: 2; "
                                                        "values moved: 0; outcomes changed: 0; kinds changed: 0; "
                                                        "checks in one run only: 0.")


def test_a_variants_class_in_one_run_only_differs():
    from lengthgen.studies.drift import compare_classes
    reference = pd.DataFrame({"pe": ["fire", "alibi"], "offset": 2, "category": ["decays gracefully", "fails"]})
    run = pd.DataFrame({"pe": ["fire"], "offset": 2, "category": ["decays gracefully"]})
    differing = compare_classes(reference, run)
    assert differing["pe"].tolist() == ["alibi"] and pd.isna(differing["category_run"].iloc[0])
    assert compare_classes(run, run).empty


def test_the_previous_runs_changes_are_read_from_its_claims_file(tmp_path):
    previous = write_run(tmp_path / "previous", [0.3, 0.6, 0.9], [0.7, 0.12]) / "tables" / "claims.parquet"
    current, _ = run_claims([0.7, 0.6, 0.9])
    assert previous_changes_markdown(previous, current, "why") == changes_markdown(
        read_table(previous, CLAIMS), current, "why")


def test_a_check_is_open_strictly_between_the_decided_shares():
    from lengthgen.studies.drift import is_open
    from lengthgen.checks.shared_rules import DECIDED_FRACTION
    shares = pd.Series([0.0, 1 - DECIDED_FRACTION, 1 - DECIDED_FRACTION + 0.01, 0.5, DECIDED_FRACTION - 0.01,
                        DECIDED_FRACTION, 1.0])
    assert is_open(shares).tolist() == [False, False, True, True, True, False, False]


def test_relative_drift_is_relative_to_the_reference_absolute_at_zero_and_zero_where_both_agree():
    from lengthgen.studies.drift import relative_drift
    reference = pd.Series([2.0, -4.0, 0.0, float("nan"), float("nan"), 1.0, 3.0])
    run = pd.Series([2.5, -3.0, 0.25, float("nan"), 1.0, float("nan"), 3.0])
    drift = relative_drift(reference, run)
    assert drift.iloc[:4].tolist() == [0.25, 0.25, 0.25, 0.0] and drift.iloc[6] == 0.0
    assert drift.iloc[4:6].isna().all()  # a value in one run only has no drift


def test_compare_runs_forgives_nothing_unless_asked(tmp_path):
    from lengthgen.studies.drift import compare_runs
    reference = write_run(tmp_path / "portable", [0.709, 0.6, 0.9], [0.709, 0.12], holds_fraction=(0.6, 1.0, 1.0))
    open_flip = write_run(tmp_path / "native", [0.49, 0.6, 0.9], [0.49, 0.12], holds_fraction=(0.4, 1.0, 1.0))
    assert compare_runs(reference, open_flip)[1] is False
    assert compare_runs(reference, open_flip, open_may_differ=True)[1] is True


@pytest.mark.parametrize("open_in", ["reference", "run"])
def test_an_outcome_open_in_either_run_alone_may_differ(tmp_path, capsys, open_in):
    fractions = {"reference": ((0.6, 1.0, 1.0), (0.0, 1.0, 1.0)), "run": ((1.0, 1.0, 1.0), (0.4, 1.0, 1.0))}[open_in]
    reference = write_run(tmp_path / "a", [0.709, 0.6, 0.9], [0.709, 0.12], holds_fraction=fractions[0])
    flipped = write_run(tmp_path / "b", [0.3, 0.6, 0.9], [0.3, 0.12], holds_fraction=fractions[1])
    assert main(["--open-may-differ", str(reference), str(flipped)]) == 0
    assert "outcomes that differ where the seed bootstrap leaves the check open: 1" in capsys.readouterr().out


def test_a_check_without_a_spread_row_is_not_open(tmp_path):
    # A spread table that lacks a check says nothing about it: its changed outcome is not forgiven.
    from lengthgen.studies.drift import compare_runs
    reference = write_run(tmp_path / "a", [0.709, 0.6, 0.9], [0.709, 0.12])
    flipped = write_run(tmp_path / "b", [0.3, 0.6, 0.9], [0.3, 0.12])
    for folder in (reference, flipped):
        path = folder / "tables" / "claim_spread.parquet"
        spread = read_table(path, CLAIM_SPREAD)
        write_table(spread[spread["claim"] != "rope stays above chance"], path, CLAIM_SPREAD)
    assert compare_runs(reference, flipped, open_may_differ=True)[1] is False


def test_runs_without_accuracy_summaries_compare_their_checks_alone(tmp_path, capsys):
    reference = write_run(tmp_path / "a", [0.7, 0.6, 0.9], [0.7, 0.12])
    run = write_run(tmp_path / "b", [0.7, 0.6, 0.9], [0.7, 0.12])
    (run / "tables" / "accuracy_summary.parquet").unlink()
    assert main([str(reference), str(run)]) == 0
    out = capsys.readouterr().out
    assert "3 in both runs" in out and "accuracy summary" not in out


def test_every_differing_variants_class_is_listed_after_the_checks(tmp_path, capsys):
    reference = write_run(tmp_path / "a", [0.7, 0.6, 0.9], [0.7, 0.12],
                          classes={"fire": "decays gracefully", "alibi": "fails in range"})
    other = write_run(tmp_path / "b", [0.7, 0.6, 0.9], [0.7, 0.12],
                      classes={"fire": "fails in range", "alibi": "decays gracefully"})
    assert main([str(reference), str(other)]) == 1
    out = capsys.readouterr().out
    assert markdown_rows(out, DRIFT_HEADER)  # the checks' table is still there
    classes = out.split("variants classes that differ: ")[1].strip().split("; ")
    assert sorted(classes) == ["alibi K=2: fails in range -> decays gracefully",
                               "fire K=2: decays gracefully -> fails in range"]


def test_a_check_in_the_run_only_is_counted_under_the_checks_table(tmp_path, capsys):
    reference = write_run(tmp_path / "fewer", [0.7, 0.6, 0.9], [0.7, 0.12], leave_out=(1,))
    run = write_run(tmp_path / "all", [0.7, 0.6, 0.9], [0.75, 0.12])
    assert main([str(reference), str(run)]) == 1
    lines = capsys.readouterr().out.rstrip("\n").split("\n")
    # The checks' table (header, separator, three checks), a blank line, the counts, the accuracy summary.
    assert (["generalization", "learned at chance", "learned: distance from chance", "1", "-", "0.6", "-",
             "- -> yes ONLY IN RUN"] in markdown_rows("\n".join(lines[:5]), DRIFT_HEADER))
    assert lines[5:] == [
        "", "checks: 2 in both runs, 0 in the reference only, 1 in the run only; 0 values drifted (largest relative "
            "drift 0.00e+00); 0 outcomes and 0 kinds changed",
        "accuracy summary: 2 cells in both runs; largest drift of a mean accuracy 0.0500 (rope, K=1, n=32: "
        "0.7000 -> 0.7500)"]


@pytest.mark.parametrize("without_row", ["reference", "run"])
def test_a_check_open_in_one_run_is_forgiven_where_the_other_has_no_spread_row(tmp_path, capsys, without_row):
    # The other run's bootstrap says nothing about the check: the one that calls it open decides.
    open_fractions = (0.6, 1.0, 1.0) if without_row == "run" else (0.4, 1.0, 1.0)
    reference = write_run(tmp_path / "a", [0.709, 0.6, 0.9], [0.709, 0.12], holds_fraction=open_fractions)
    flipped = write_run(tmp_path / "b", [0.3, 0.6, 0.9], [0.3, 0.12], holds_fraction=open_fractions)
    path = {"reference": reference, "run": flipped}[without_row] / "tables" / "claim_spread.parquet"
    spread = read_table(path, CLAIM_SPREAD)
    write_table(spread[spread["claim"] != "rope stays above chance"], path, CLAIM_SPREAD)
    assert main(["--open-may-differ", str(reference), str(flipped)]) == 0
    assert "outcomes that differ where the seed bootstrap leaves the check open: 1" in capsys.readouterr().out
    assert main([str(reference), str(flipped)]) == 1


def test_help_says_what_the_command_and_each_argument_are(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--help"])
    assert exit.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines to the terminal's width
    assert ("How far one run's checked numbers and claim verdicts drifted from another's, e.g. yours from the "
            "committed run." in text)
    for argument, meaning in [
            ("reference", "results folder to compare against, e.g. results (committed)"),
            ("run", "results folder of the run to check"),
            ("--open-may-differ", "forgive an outcome that differs where either run's seed bootstrap leaves the check "
                                  "open, and a claim verdict where either run's is inconclusive")]:
        assert f" {argument} {meaning}" in text


def test_with_spread_adds_only_whether_each_check_is_open_matched_on_its_whole_key():
    from lengthgen.studies.drift import with_spread
    claims, _ = run_claims([0.7, 0.6, 0.9])
    spread = pd.DataFrame({"experiment": ["generalization", "generalization", "shift"],
                           "claim": ["rope stays above chance", "learned at chance", "rope is shift invariant"],
                           "statistic": ["rope: mean accuracy far out", "learned: distance from chance",
                                         "largest float64 change"],
                           "offset": [2, 1, None], "holds_fraction": [0.5, 1.0, 0.5]})
    marked = with_spread(claims, spread)
    pd.testing.assert_frame_equal(marked.drop(columns="open"), claims)  # the claims as they were, offset Int64
    assert pd.isna(marked["open"].iloc[0])  # the spread's row at K=2 is another check
    assert marked["open"].iloc[1:].tolist() == [False, True]
    # A spread of pooled checks only: pandas holds its all-null offset column as objects, still matched.
    pooled = with_spread(claims, spread.tail(1).assign(offset=None))
    assert pooled["open"].isna().tolist() == [True, True, False] and bool(pooled["open"].iloc[2])


def write_judgments(folder, verdicts):
    """A claim_judgments table of one claim in this run at K = 1, 2 with ``verdicts`` and means 0.5, 0.6."""
    rows = pd.DataFrame({"claim": "gap", "condition": "this run", "kind": "run", "seen": True, "changes": "", "settings": "",
                         "offset": [1, 2], "n_seeds": 10, "mean": [0.5, 0.6], "ci_low": 0.4, "ci_high": 0.7,
                         "seeds_clearing": 8, "comparison": ">=", "threshold": 0.3, "baseline": 0.06,
                         "verdict": verdicts})
    write_table(rows, folder / "tables" / "claim_judgments.parquet", CLAIM_JUDGMENTS)


def test_a_claim_verdict_that_moves_is_named_and_fails_the_comparison(tmp_path, capsys):
    reference = write_run(tmp_path / "a", [0.7, 0.6, 0.9], [0.7, 0.12])
    run = write_run(tmp_path / "b", [0.7, 0.6, 0.9], [0.7, 0.12])
    write_judgments(reference, ["holds", "holds"])
    write_judgments(run, ["holds", "does not hold"])
    assert main([str(reference), str(run)]) == 1
    assert "claim verdicts that differ: gap (this run, K=2): holds -> does not hold (mean 0.6 -> 0.6)" in (
        capsys.readouterr().out)
    write_judgments(run, ["holds", "holds"])
    assert main([str(reference), str(run)]) == 0
    assert "claim verdicts that differ: none" in capsys.readouterr().out


def test_an_inconclusive_claim_verdict_may_differ_only_when_asked(tmp_path):
    from lengthgen.studies.drift import compare_runs
    reference = write_run(tmp_path / "a", [0.7, 0.6, 0.9], [0.7, 0.12])
    run = write_run(tmp_path / "b", [0.7, 0.6, 0.9], [0.7, 0.12])
    write_judgments(reference, ["holds", "inconclusive"])
    write_judgments(run, ["holds", "holds"])
    assert compare_runs(reference, run)[1] is False
    assert compare_runs(reference, run, open_may_differ=True)[1] is True
    write_judgments(run, ["holds", "does not hold"])
    write_judgments(reference, ["holds", "holds"])
    assert compare_runs(reference, run, open_may_differ=True)[1] is False
