"""The slow tier: the default configuration's generalization experiment, run from scratch, reproduces the
committed results bit for bit; and the exploratory run on the machine's native CPU kernels reaches
the committed (portable-kernel) verdicts.

Run with ``pytest -m slow``. It checks that the committed numbers are what the code computes, not
that the claim holds: whether it holds is the run's finding, reported in RESULTS.md.
"""

import pandas as pd
import pytest

from conftest import REPO, snakemake
from lengthgen.studies.drift import main as drift


@pytest.mark.slow
def test_default_config_reproduces_the_committed_generalization_checks(tmp_path):
    snakemake(tmp_path, "results/claims/generalization.parquet", "--config", "cpu_kernels=portable",
              configfile=REPO / "config.yaml")  # the kernels the committed run used
    checks = pd.read_parquet(tmp_path / "results/claims/generalization.parquet")
    committed = pd.read_parquet(REPO / "results" / "tables" / "claims.parquet")
    committed = committed.query("experiment == 'generalization'")
    columns = ["claim", "statistic", "value", "rule", "holds"]
    assert len(checks) == len(committed) > 0
    pd.testing.assert_frame_equal(checks[columns].reset_index(drop=True), committed[columns].reset_index(drop=True),
                                  check_exact=True)


@pytest.mark.slow
def test_verdicts_and_variants_classes_do_not_depend_on_the_cpu_path(tmp_path, capsys):
    """The exploratory default run on the native kernels against the committed run (portable kernels):
    no check outcome and no variants class differs, except a check the seed bootstrap leaves open
    (about 15 minutes on 2 cores)."""
    snakemake(tmp_path, "--config", "cpu_kernels=native", configfile=REPO / "configs" / "exploratory.yaml")
    log = (tmp_path / "results/logs/train_sweep/pe~rope/offset~1.log").read_text()
    assert "torch CPU kernels: default" not in log  # the run did take the native path
    status = drift(["--open-may-differ", str(REPO / "results"), str(tmp_path / "results")])
    print(capsys.readouterr().out)
    assert status == 0
