"""Comparing a run's checked numbers with another run's (python -m lengthgen.drift)."""

import pandas as pd
import pytest

from conftest import markdown_rows
from lengthgen.claims import check, with_keys, with_verdicts
from lengthgen.drift import changes_markdown, main, previous_changes_markdown
from lengthgen.table_schemas.core import ACCURACY_SUMMARY, ALL_CLAIMS
from lengthgen.table_schemas.spread import CLAIM_SPREAD
from lengthgen.table_schemas.variants import VARIANTS_CLASSES
from lengthgen.tables import read_table, write_table


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
    claims = with_verdicts(pd.concat([with_keys([entry], experiment, section)
                                      for _, (experiment, section, entry) in kept], ignore_index=True))
    spread = claims[["experiment", "section", "claim", "statistic", "offset"]].assign(
        n_seeds=5, resamples=200, spread_low=0.0, spread_high=1.0,
        holds_fraction=[holds_fraction[index] for index, _ in kept], seeds_checked=5, seeds_failing=0)
    return claims, spread


def write_run(folder, values, accuracy, classes=None, **claim_options):
    claims, spread = run_claims(values, **claim_options)
    write_table(claims, folder / "tables" / "claims.parquet", ALL_CLAIMS)
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
    assert "0 outcomes, 0 kinds and 0 verdicts changed" in out
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
    assert "yes -> no CHANGED" in out and "1 outcomes, 0 kinds and 1 verdicts changed" in out


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
    assert "0 outcomes, 1 kinds and 1 verdicts changed" in out  # shift_K1: no evidence -> confirmed


def test_a_folder_without_claims_fails_naming_the_file(tmp_path, capsys):
    run = write_run(tmp_path / "a", [0.7, 0.6, 0.9], [0.7, 0.12])
    with pytest.raises(SystemExit) as exit:
        main([str(tmp_path / "empty"), str(run)])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "empty" / "tables" / "claims.parquet") in err and "Traceback" not in err


def write_old_format(folder):
    """claims.parquet as written before structured checks: the rule's text only, no section, offset, kind."""
    old = pd.DataFrame({"experiment": ["base"], "claim": ["K=1"], "statistic": ["rope: mean accuracy at n=32"],
                        "value": [0.7], "rule": [">= 5 x chance = 0.312"], "holds": [True], "verdict": ["confirmed"]})
    (folder / "tables").mkdir(parents=True)
    old.to_parquet(folder / "tables" / "claims.parquet")
    return folder


@pytest.mark.parametrize("flags", [[], ["--open-may-differ"]])
def test_a_claims_table_older_than_structured_checks_fails_naming_the_file(tmp_path, capsys, flags):
    old, new = write_old_format(tmp_path / "old"), write_run(tmp_path / "new", [0.7, 0.6, 0.9], [0.7, 0.12])
    for folders in ([old, new], [new, old]):
        with pytest.raises(SystemExit) as exit:
            main([*flags, *map(str, folders)])
        assert exit.value.code == 2
        err = capsys.readouterr().err
        assert f"{old / 'tables' / 'claims.parquet'}: predates structured checks" in err and "regenerate it" in err
        assert "lacks the columns section, offset, comparison, threshold, kind" in err and "Traceback" not in err


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


def test_changes_since_the_previous_run_name_moved_verdicts_and_every_differing_check(tmp_path):
    previous = write_run(tmp_path / "previous", [0.709, 0.3, 0.9], [0.709, 0.12], leave_out=(2,))
    current = write_run(tmp_path / "current", [0.8, 0.6, 0.9], [0.8, 0.12])
    text = changes_markdown(*(read_table(run / "tables" / "claims.parquet", ALL_CLAIMS) for run in (previous, current)),
                            "Ten seeds instead of five.")
    assert "Ten seeds instead of five." in text
    assert "outcomes changed: 1" in text and "checks in one run only: 1" in text
    assert "`generalization` mixed -> confirmed" in text and "shift_K1" not in text.split("|")[0]
    rows = {line.split("|")[3].strip(): [cell.strip() for cell in line.split("|")[4:-1]]
            for line in text.splitlines() if line.startswith("| ") and "---" not in line}
    assert rows["learned: distance from chance"] == ["1", "0.3", "0.6", "no -> yes", "evidence -> evidence", ""]
    assert rows["largest float64 change"] == ["all", "-", "0.9", "- -> yes", "- -> sanity", "now"]
    assert "rope: mean accuracy far out" not in rows  # only its number moved


def renamed(folder):
    """The run at ``folder`` as it was written before ``generalization`` was renamed from ``base``."""
    for name, kind in (("claims", ALL_CLAIMS), ("claim_spread", CLAIM_SPREAD), ("accuracy_summary", ACCURACY_SUMMARY)):
        path = folder / "tables" / f"{name}.parquet"
        table = read_table(path, kind)
        for column in ("experiment", "section"):
            if column in table.columns:
                table[column] = table[column].replace({"generalization": "base"})
        write_table(table, path, kind)
    return folder


def test_a_run_written_before_an_experiment_was_renamed_matches_under_the_new_name(tmp_path, capsys):
    """catalog.RENAMED_EXPERIMENTS: an older run's checks of base are this code's checks of generalization."""
    old = renamed(write_run(tmp_path / "old", [0.709, 0.6, 0.9], [0.709, 0.12]))
    new = write_run(tmp_path / "new", [0.683, 0.6, 0.9], [0.683, 0.12])
    assert set(read_table(old / "tables" / "claims.parquet", ALL_CLAIMS)["experiment"]) == {"base", "shift"}
    for flags in ([], ["--open-may-differ"]):
        assert main([*flags, str(old), str(new)]) == 0
        out = capsys.readouterr().out
        assert "3 in both runs, 0 in the reference only, 0 in the run only" in out and "ONLY IN" not in out
        assert "largest drift of a mean accuracy 0.0260 (rope, K=1, n=32: 0.7090 -> 0.6830)" in out
    # report.previous_claims: RESULTS.md's changes since the previous run.
    current = read_table(new / "tables" / "claims.parquet", ALL_CLAIMS)
    text = previous_changes_markdown(old / "tables" / "claims.parquet", current, None)
    assert "checks in one run only: 0" in text and "`base`" not in text
    # One older still, before structured checks: its verdicts are set beside this run's by section.
    text = previous_changes_markdown(write_old_format(tmp_path / "older") / "tables" / "claims.parquet", current, None)
    assert "| generalization | confirmed" in text and "not run" not in text and "base" not in text
