"""Shared fixtures: tiny models and the tiny end-to-end workflow run."""

import atexit
import inspect
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import pytest
import yaml

from lengthgen.runtime.job import PORTABLE_CPU_ENV, RECORD_MODULES

# The tests run the CPU kernels the workflow's jobs run (set before torch's first kernel), so a
# test of bit-for-bit behaviour tests what the jobs do.
for name, value in PORTABLE_CPU_ENV.items():
    os.environ.setdefault(name, value)

# Caches (matplotlib's font cache, Snakemake's source cache) go to a folder of this test session, removed at its
# end, not to the user's ~/.cache: the test command writes nothing outside the checkout and the temp folder.
_CACHE = tempfile.mkdtemp(prefix="lengthgen-test-cache-")
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
os.environ["XDG_CACHE_HOME"] = _CACHE
os.environ["MPLCONFIGDIR"] = os.path.join(_CACHE, "matplotlib")

REPO = Path(__file__).resolve().parents[1]
_running: pytest.Item | None = None    # the test being run (for snakemake_command's check of its marker)
SMOKE_CONFIG = REPO / "tests" / "smoke_config.yaml"
# The config schema, as the workflow validates against it (workflow/rules/common.smk).
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"  # the config schema's file


def snakemake_command(workdir: Path, *args: str, configfile: Path = SMOKE_CONFIG) -> list[str]:
    """The command line of the repository's workflow in ``workdir``, as a user would type it."""
    if _running is not None and _running.get_closest_marker("workflow") is None:
        raise AssertionError(f"{_running.nodeid} starts Snakemake but is not marked `workflow`, so the unit tier "
                             "(docs/testing.md) would run it: mark it @pytest.mark.workflow")
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


def markdown_rows(text: str, header: str) -> list[list[str]]:
    """The cells, stripped of their padding, of the markdown table whose header row starts with ``header`` (written
    without spaces). A cell's escaped pipe (``\\|``) stays in its cell, as written."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.replace(" ", "").startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip()[1:-1])])
    return rows


def bootstrap_both_ways(claims_of, tables: dict, resamples: int = 200) -> list:
    """The seed bootstrap of ``claims_of(**tables)``'s checks (keyed, every one of seed sums) by seed sums and by
    recomputing the checks on every resample, as it did before seed sums, with the same draws."""
    from lengthgen.checks.bootstrap import seed_bootstrap

    assert claims_of(**tables)["seed_sums"].notna().all()  # none is recomputed
    return [seed_bootstrap(checks, tables, resamples=resamples, seed=0)
            for checks in (claims_of, lambda **resampled: claims_of(**resampled).assign(seed_sums=None))]


def parquet_files(results: Path) -> dict[str, bytes]:
    """Every parquet table under a results folder, by path relative to it: what two runs compare."""
    return {str(path.relative_to(results)): path.read_bytes() for path in sorted(results.rglob("*.parquet"))}


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """A complete run of the tiny config; tests read its outputs and dry-run changes on it."""
    workdir = tmp_path_factory.mktemp("smoke_run")
    # Every job writes the lengthgen files it loaded to its log (lengthgen/runtime/job.py): test_provenance checks them.
    snakemake(workdir, env={**os.environ, RECORD_MODULES: "1"})
    return workdir


@pytest.fixture
def smoke_copy(smoke_run, tmp_path) -> Path:
    """A private copy of the complete run, for tests that change or delete its files."""
    workdir = tmp_path / "run"
    shutil.copytree(smoke_run, workdir, symlinks=True)
    return workdir


# --- The `workflow` marker: every test that starts Snakemake ------------------------------------
# The unit tier (docs/testing.md) deselects it. A test gets it when it uses the `smoke_run` fixture
# (directly or through `smoke_copy`), or when its function, a fixture it uses, or a function of the
# same module that they call refers to a function named `snakemake` or `snakemake_command` (the
# helpers above, or a module's own). A test that starts Snakemake some other way needs an explicit
# @pytest.mark.workflow; the helpers refuse to run for a test without the marker, so a test this
# detection misses fails loudly instead of slowing the unit tier.

STARTS_SNAKEMAKE = {"snakemake", "snakemake_command"}


def _starts_snakemake(function, seen: set) -> bool:
    """Whether ``function`` refers to a Snakemake helper, itself or through functions of its module."""
    function = inspect.unwrap(function)
    if not isinstance(function, types.FunctionType) or function in seen:
        return False
    seen.add(function)
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        codes.extend(const for const in code.co_consts if isinstance(const, types.CodeType))  # lambdas, comprehensions
        for name in code.co_names:
            value = function.__globals__.get(name)
            if not isinstance(value, types.FunctionType):
                continue
            if name in STARTS_SNAKEMAKE:
                return True
            if value.__module__ == function.__module__ and _starts_snakemake(value, seen):
                return True
    return False


def _fixture_function(item: pytest.Item, name: str):
    """The function of fixture ``name`` as ``item`` sees it: its module's, else this file's."""
    return getattr(item.module, name, None) or globals().get(name)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if not isinstance(item, pytest.Function) or item.get_closest_marker("workflow"):
            continue
        seen: set = set()
        if "smoke_run" in item.fixturenames or _starts_snakemake(item.function, seen) or any(
                _starts_snakemake(_fixture_function(item, name), seen) for name in item.fixturenames):
            item.add_marker(pytest.mark.workflow)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _running
    _running = item
    try:
        return (yield)
    finally:
        _running = None
