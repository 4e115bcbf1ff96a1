"""Comparing a run's checked numbers with another run's (python -m lengthgen.drift)."""

import pandas as pd
import pytest

from lengthgen.drift import main
from lengthgen.schemas.core import ACCURACY_SUMMARY, ALL_CLAIMS
from lengthgen.tables import write_table


def write_run(folder, values, holds, accuracy):
    claims = pd.DataFrame({"experiment": ["base", "base", "shift_K1"], "claim": ["K=1", "K=1", "K=1: rope"],
                           "statistic": ["rope at n=32", "learned past range", "max change"], "value": values,
                           "rule": ">= 0.5", "holds": holds})
    claims["verdict"] = claims.groupby("experiment")["holds"].transform(
        lambda h: "confirmed" if h.all() else "not confirmed" if not h.any() else "mixed")
    write_table(claims, folder / "tables" / "claims.parquet", ALL_CLAIMS)
    summary = pd.DataFrame({"experiment": "base", "pe": ["rope", "learned"], "offset": 1, "length": 32,
                            "in_training_range": False, "n_seeds": 2, "mean": accuracy, "ci_low": 0.0, "ci_high": 1.0})
    write_table(summary, folder / "tables" / "accuracy_summary.parquet", ACCURACY_SUMMARY)
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
