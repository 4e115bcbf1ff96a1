"""RESULTS.md: its code version (writing or committing the workflow's outputs does not change it), its verdict table, and
the order of its opening sections."""

import datetime
import subprocess

import pandas as pd

from conftest import markdown_rows
from lengthgen.claims import check, with_keys
from lengthgen.report import code_version, render_results, verdict_table


def git(repository, *args):
    subprocess.run(["git", "-C", str(repository), *args], check=True, capture_output=True)


def test_code_version_ignores_the_results_folders(tmp_path):
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "test@example.com")
    git(tmp_path, "config", "user.name", "test")
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "RESULTS.md").write_text("old\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "code and results")
    version = code_version(str(tmp_path), exclude=["results"])
    assert len(version) == 40

    (tmp_path / "results" / "RESULTS.md").write_text("regenerated\n")
    assert code_version(str(tmp_path), exclude=["results"]) == version
    git(tmp_path, "commit", "-q", "-am", "regenerated results")
    assert code_version(str(tmp_path), exclude=["results"]) == version

    (tmp_path / "code.py").write_text("x = 2\n")
    assert code_version(str(tmp_path), exclude=["results"]) == version + "-dirty"
    git(tmp_path, "commit", "-q", "-am", "new code")
    assert code_version(str(tmp_path), exclude=["results"]) not in (version, version + "-dirty")


def test_code_version_outside_git(tmp_path):
    assert code_version(str(tmp_path), exclude=["results"]).startswith("unknown")


def test_the_verdict_table_counts_evidence_and_gives_each_section_its_experiments_replication():
    claims = pd.DataFrame({"experiment": ["generalization", "shift", "shift", "shift"],
                           "section": ["generalization", "shift_K1", "shift_K1", "shift_K2"],
                           "holds": [True, True, False, False], "kind": ["evidence", "evidence", "sanity", "evidence"]})
    table = verdict_table(claims, {"shift": "partly"})  # the replication table's experiment -> replication
    rows = {cells[0]: cells[1:] for cells in ([cell.strip() for cell in line.strip("|").split("|")]
                                              for line in table.splitlines()[2:])}
    assert rows == {"generalization": ["1/1", "0/0", "confirmed", "not tested"],
                    "shift_K1": ["1/1", "0/1", "confirmed", "partly"],
                    "shift_K2": ["0/1", "0/0", "not confirmed", "partly"]}


def test_the_report_opens_after_its_setup_with_what_this_reproduction_finds():
    claims = with_keys([check("graceful decay follows the dilution law", "MAE past the range", 0.3, "<=", 0.1,
                              offset=1)], "prop1", "prop1")
    report = render_results({"task": {"vocab_size": 16}}, {"prop1": "## prop1\n\ntext"}, claims, "abc",
                            datetime.date(2026, 1, 1), "a machine", "## Training\n\nfits", left_out={})
    headings = [line for line in report.splitlines() if line.startswith("## ")]
    assert headings[:4] == ["## Setup", "## What this reproduction finds", "## Training", "## Verdicts"]
    findings = report.split("## What this reproduction finds")[1].split("## Training")[0]
    rows = {row[0].split(":")[0]: row[1:] for row in markdown_rows(findings, "|thepaperclaims|testedby|verdict|")}
    assert rows["**the dilution law**"][-1].startswith("The data contradict the paper")
    assert rows["**the linear control**"][-1].startswith("Not tested under this config")
