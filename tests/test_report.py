"""The report's code version: writing or committing the workflow's outputs does not change it (the pages themselves are
tests/test_results_pages.py)."""

import subprocess

from lengthgen.report.provenance import code_version


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
