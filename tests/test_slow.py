"""The slow tier: the default configuration reproduces the base claim (about 10 minutes on 2 cores).

Run with ``pytest -m slow``.
"""

import pandas as pd
import pytest

from conftest import REPO, snakemake


@pytest.mark.slow
def test_default_config_reproduces_the_base_claim(tmp_path):
    snakemake(tmp_path, "results/claims/base.parquet", configfile=REPO / "config.yaml")
    checks = pd.read_parquet(tmp_path / "results/claims/base.parquet")
    assert checks["holds"].all(), checks.to_string()
