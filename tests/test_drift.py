"""Comparing a run's checked numbers with another run's (python -m lengthgen.drift)."""

import pandas as pd
import pytest

from lengthgen.drift import main
from lengthgen.schemas.core import ACCURACY_SUMMARY, ALL_CLAIMS
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.schemas.variants import VARIANTS_CLASSES
from lengthgen.tables import write_table


def write_run(folder, values, holds, accuracy, holds_fraction=(1.0, 1.0, 1.0), classes=None):
    claims = pd.DataFrame({"experiment": ["base", "base", "shift_K1"], "claim": ["K=1", "K=1", "K=1: rope"],
                           "statistic": ["rope at n=32", "learned past range", "max change"], "value": values,
                           "rule": ">= 0.5", "holds": holds})
    claims["verdict"] = claims.groupby("experiment")["holds"].transform(
        lambda h: "confirmed" if h.all() else "not confirmed" if not h.any() else "mixed")
    write_table(claims, folder / "tables" / "claims.parquet", ALL_CLAIMS)
    summary = pd.DataFrame({"experiment": "base", "pe": ["rope", "learned"], "offset": 1, "length": 32,
                            "in_training_range": False, "n_seeds": 2, "mean": accuracy, "ci_low": 0.0, "ci_high": 1.0})
    write_table(summary, folder / "tables" / "accuracy_summary.parquet", ACCURACY_SUMMARY)
    spread = claims[["experiment", "claim", "statistic"]].assign(n_seeds=5, resamples=200, spread_low=0.0,
                                                                 spread_high=1.0, holds_fraction=holds_fraction)
    write_table(spread, folder / "tables" / "claim_spread.parquet", CLAIM_SPREAD)
    if classes:
        cells = pd.DataFrame([{"pe": pe, "offset": 2, "lowest_in_range": 1.0, "far_length": 128, "far_mean": 0.5,
                               "far_ci_low": 0.4, "far_ci_high": 0.6, "longest_length": 1024, "longest_mean": 0.3,
                               "category": category, "n_seeds": 5, "n_fitted": 5} for pe, category in classes.items()])
        write_table(cells, folder / "tables" / "variants_classes.parquet", VARIANTS_CLASSES)
    return folder


def test_identical_runs_have_no_drift(tmp_path, capsys):
    run = write_run(tmp_path / "a", [0.7, 0.01, 1e-11], [True, True, True], [0.7, 0.12])
    assert main([str(run), str(run)]) == 0
    out = capsys.readouterr().out
    assert "3 in both runs, 0 in one only; 0 values drifted" in out and "0 outcomes and 0 verdicts changed" in out


def test_drifted_numbers_are_reported_and_changed_outcomes_fail(tmp_path, capsys):
    reference = write_run(tmp_path / "committed", [0.709, 0.01, 1e-11], [True, True, True], [0.709, 0.12])
    drifted = write_run(tmp_path / "mine", [0.683, 0.01, 1e-11], [True, True, True], [0.683, 0.12])
    assert main([str(reference), str(drifted)]) == 0  # numbers moved, every outcome the same
    out = capsys.readouterr().out
    assert "| base | K=1 | rope at n=32 | 0.709 | 0.683 | 3.67e-02 | yes -> yes |" in out
    assert "1 values drifted (largest relative drift 3.67e-02)" in out
    assert "largest drift of a mean accuracy 0.0260 (rope, K=1, n=32: 0.7090 -> 0.6830)" in out
    flipped = write_run(tmp_path / "flipped", [0.3, 0.01, 1e-11], [False, True, True], [0.3, 0.12])
    assert main([str(reference), str(flipped)]) == 1
    out = capsys.readouterr().out
    assert "yes -> no CHANGED" in out and "1 outcomes and 1 verdicts changed" in out


def test_a_folder_without_claims_fails_naming_the_file(tmp_path, capsys):
    run = write_run(tmp_path / "a", [0.7, 0.01, 1e-11], [True, True, True], [0.7, 0.12])
    with pytest.raises(SystemExit) as exit:
        main([str(tmp_path / "empty"), str(run)])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "empty" / "tables" / "claims.parquet") in err and "Traceback" not in err


def test_an_outcome_may_differ_only_where_the_seed_bootstrap_leaves_it_open(tmp_path, capsys):
    """The CPU-path comparison: outcomes may part where the seeds do not decide them, nowhere else."""
    reference = write_run(tmp_path / "portable", [0.709, 0.01, 1e-11], [True, True, True], [0.709, 0.12],
                          holds_fraction=(0.6, 1.0, 1.0))
    open_flip = write_run(tmp_path / "native", [0.49, 0.01, 1e-11], [False, True, True], [0.49, 0.12],
                          holds_fraction=(0.4, 1.0, 1.0))
    assert main(["--open-may-differ", str(reference), str(open_flip)]) == 0
    assert "outcomes that differ where the seed bootstrap leaves the check open: 1" in capsys.readouterr().out
    assert main([str(reference), str(open_flip)]) == 1  # without the flag every change counts
    decided = write_run(tmp_path / "decided", [0.709, 0.01, 1e-11], [True, True, True], [0.709, 0.12])
    decided_flip = write_run(tmp_path / "decided_flip", [0.3, 0.01, 1e-11], [False, True, True], [0.3, 0.12],
                             holds_fraction=(0.0, 1.0, 1.0))
    assert main(["--open-may-differ", str(decided), str(decided_flip)]) == 1


def test_a_variants_class_that_differs_fails(tmp_path, capsys):
    reference = write_run(tmp_path / "a", [0.7, 0.01, 1e-11], [True, True, True], [0.7, 0.12],
                          classes={"fire": "decays gracefully", "alibi": "fails in range"})
    other = write_run(tmp_path / "b", [0.7, 0.01, 1e-11], [True, True, True], [0.7, 0.12],
                      classes={"fire": "fails in range", "alibi": "fails in range"})
    assert main(["--open-may-differ", str(reference), str(other)]) == 1
    assert "variants classes that differ: fire K=2: decays gracefully -> fails in range" in capsys.readouterr().out
    assert main([str(reference), str(reference)]) == 0


def test_changes_since_the_previous_run_name_moved_verdicts_and_flipped_checks(tmp_path):
    from lengthgen.drift import changes_markdown
    from lengthgen.tables import read_table
    previous = write_run(tmp_path / "previous", [0.709, 0.01, 1e-11], [True, False, True], [0.709, 0.12])
    current = write_run(tmp_path / "current", [0.8, 0.02, 1e-11], [True, True, True], [0.8, 0.12])
    text = changes_markdown(*(read_table(run / "tables" / "claims.parquet", ALL_CLAIMS) for run in (previous, current)),
                            "Ten seeds instead of five.")
    assert "Ten seeds instead of five." in text
    assert "outcomes changed: 1" in text and "`base` mixed -> confirmed" in text and "shift_K1" not in text.split("|")[0]
    assert "| base | K=1 | learned past range | 0.01 | 0.02 | no -> yes |" in text
