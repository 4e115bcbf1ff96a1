"""Adding an experiment is one folder (its analysis, section text and figures) and one catalog entry
(docs/adding-an-experiment.md): a toy experiment, added to a copy of the repository exactly so (the entry
is the one the guide shows), runs through the real workflow on the tiny config, by its own target, and
shows in the HTML report without a caption of its own."""

import ast
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, SMOKE_CONFIG
from test_html_report import script_json

TOY_MODULE = '''"""A toy experiment: the sweep's mean accuracy in the training range."""
import pandas as pd

from lengthgen.checks.check import check

CHECKED = ("accuracy_by_length",)


def analyze(inputs, settings):
    return {}


def checks(tables, settings):
    accuracy = tables["accuracy_by_length"]
    in_range = accuracy.loc[accuracy["in_training_range"], "accuracy"].mean()
    chance = 1 / settings["task"]["vocab_size"]
    return [check("heads beat chance in range", "mean accuracy in training range", in_range, ">=", 2 * chance)]
'''
TOY_PROSE = '''"""The toy experiment's section."""
from lengthgen.checks.check import checks_markdown


def section(tables, checks, settings):
    rows = len(tables["accuracy_by_length"])
    return f"## toy: accuracy in range\\n\\nRead {rows} evaluations.\\n\\n" + checks_markdown(checks)
'''
TOY_PLOT = '''"""The toy experiment's figure: mean accuracy by length."""
import matplotlib.pyplot as plt


def draw(tables, settings):
    by_length = tables["accuracy_by_length"].groupby("length")["accuracy"].mean()
    fig, ax = plt.subplots()
    ax.plot(by_length.index, by_length.to_numpy())
    return {"toy": fig}
'''
GUIDE = REPO / "docs" / "adding-an-experiment.md"


def documented_entry() -> str:
    """The catalog entry the guide shows: its one Python block that is an ``Experiment(...)`` call (the other is
    the claim it declares)."""
    blocks = [textwrap.dedent(block) for block in re.findall(r"```python\n(.*?)```", GUIDE.read_text(),
                                                             flags=re.DOTALL)]
    entries = [block for block in blocks if block.startswith("Experiment(")]
    assert len(entries) == 1, f"{GUIDE}: {len(entries)} Experiment(...) blocks, one expected (the catalog entry)"
    assert isinstance(ast.parse(entries[0], mode="eval").body, ast.Call)
    return entries[0]


def with_entry(catalog: str, entry: str) -> str:
    """The source of catalog.py with ``entry`` added as the last element of the list ``CATALOG``."""
    lists = [node.value for node in ast.parse(catalog).body if isinstance(node, ast.Assign)
             and [target.id for target in node.targets if isinstance(target, ast.Name)] == ["CATALOG"]]
    assert len(lists) == 1 and isinstance(lists[0], ast.List)
    lines = catalog.splitlines(keepends=True)
    end = sum(len(line) for line in lines[:lists[0].end_lineno - 1]) + lists[0].end_col_offset - 1  # at its "]"
    separator = "" if catalog[:end].rstrip().endswith(("[", ",")) else ","
    return catalog[:end] + separator + entry.rstrip() + "\n" + catalog[end:]


def repository_copy(destination: Path) -> Path:
    """The checkout's files (tracked and new, not ignored), copied: what a researcher's fork holds."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-co", "--exclude-standard"], capture_output=True,
                            text=True, check=True).stdout.split()
    for name in listed:
        if (REPO / name).is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, destination / name)
    return destination


@pytest.mark.workflow
def test_a_toy_experiment_added_as_documented_runs_through_the_workflow(tmp_path):
    fork = repository_copy(tmp_path / "fork")
    (fork / "lengthgen/experiments/toy").mkdir()
    (fork / "lengthgen/experiments/toy/analysis.py").write_text(TOY_MODULE)
    (fork / "lengthgen/experiments/toy/section.py").write_text(TOY_PROSE)
    (fork / "lengthgen/experiments/toy/figures.py").write_text(TOY_PLOT)
    catalog = fork / "lengthgen/experiments/catalog.py"
    catalog.write_text(with_entry(catalog.read_text(), documented_entry()))
    results = tmp_path / "work" / "results"
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(fork / "Snakefile"), "--directory",
               str(tmp_path / "work"), "--configfile", str(SMOKE_CONFIG), "--cores", "2"]
    # The workflow (and its jobs) import the fork's lengthgen, as they would in a fork's checkout.
    environment = {**os.environ, "PYTHONPATH": str(fork)}
    dry_run = subprocess.run([*command, "-n"], capture_output=True, text=True, env=environment, cwd=fork)
    assert "analyze_toy" in dry_run.stdout and "plot_toy" in dry_run.stdout  # part of the default target
    # `snakemake toy`: the target named like the experiment, its section and figure and what they need, no more.
    run = subprocess.run([*command, "toy"], capture_output=True, text=True, env=environment, cwd=fork)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (results / "RESULTS.md").exists() and not (results / "figures/generalization.png").exists()
    claims = pd.read_parquet(results / "claims/toy.parquet")
    accuracy = pd.read_parquet(results / "tables/accuracy_by_length.parquet")
    in_range = accuracy.loc[accuracy["in_training_range"], "accuracy"].mean()
    assert claims[["experiment", "claim", "value"]].values.tolist() == [
        ["toy", "heads beat chance in range", in_range]]
    assert f"Read {len(accuracy)} evaluations." in (results / "sections/toy.md").read_text()
    assert (results / "figures/toy.png").read_bytes()[:4] == b"\x89PNG"

    # A caption is optional: without lengthgen/experiments/toy/caption.rst the HTML report holds the figure, uncaptioned.
    report = tmp_path / "report.html"
    made = subprocess.run([*command, "--report", str(report), "toy"], capture_output=True, text=True,
                          env=environment, cwd=fork)
    assert made.returncode == 0, made.stdout + made.stderr
    entry = script_json(report.read_text(), "results")["results/figures/toy.png"]
    assert entry["caption"].strip() == ""
