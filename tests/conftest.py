"""Shared fixtures: tiny models and the tiny end-to-end workflow run."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lengthgen.jobs import PORTABLE_CPU_ENV

# The tests run the CPU kernels the workflow's jobs run (set before torch's first kernel), so a
# test of bit-for-bit behaviour tests what the jobs do.
for name, value in PORTABLE_CPU_ENV.items():
    os.environ.setdefault(name, value)

REPO = Path(__file__).resolve().parents[1]
SMOKE_CONFIG = REPO / "tests" / "smoke_config.yaml"
# The config schema, as the workflow validates against it (workflow/rules/common.smk).
SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())


def snakemake_command(workdir: Path, *args: str, configfile: Path = SMOKE_CONFIG) -> list[str]:
    """The command line of the repository's workflow in ``workdir``, as a user would type it."""
    return [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
            "--directory", str(workdir), "--configfile", str(configfile), "--cores", "2", *args]


def snakemake(workdir: Path, *args: str, configfile: Path = SMOKE_CONFIG, check: bool = True,
              env: dict | None = None):
    """Run the repository's workflow in ``workdir``, as a user would from the command line (``env``: its
    environment, by default this process's)."""
    result = subprocess.run(snakemake_command(workdir, *args, configfile=configfile), capture_output=True, text=True,
                            env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def write_config(path: Path, **changes) -> Path:
    """The smoke config with ``section={key: value}`` changes (or ``key=value`` for a key that is not a
    section, or a new section), written to ``path``."""
    config = yaml.safe_load(SMOKE_CONFIG.read_text())
    for name, value in changes.items():
        if isinstance(value, dict) and isinstance(config.get(name), dict):
            config[name].update(value)
        else:
            config[name] = value
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def parquet_files(results: Path) -> dict[str, bytes]:
    """Every parquet table under a results folder, by path relative to it: what two runs compare."""
    return {str(path.relative_to(results)): path.read_bytes() for path in sorted(results.rglob("*.parquet"))}


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """A complete run of the tiny config; tests read its outputs and dry-run changes on it."""
    workdir = tmp_path_factory.mktemp("smoke_run")
    snakemake(workdir)
    return workdir


@pytest.fixture
def smoke_copy(smoke_run, tmp_path) -> Path:
    """A private copy of the complete run, for tests that change or delete its files."""
    workdir = tmp_path / "run"
    shutil.copytree(smoke_run, workdir, symlinks=True)
    return workdir
