"""Every lengthgen file a job runs is among its code params: proved from the jobs of the tiny run themselves.

Each job of the smoke run records the lengthgen modules it loaded (``sys.modules`` at exit, written to its log
because ``LENGTHGEN_RECORD_MODULES`` is set; lengthgen/runtime/job.py). Snakemake's record of the job
(``.snakemake/metadata``) holds its params, among them ``path@digest`` of every lengthgen file the rule names
(lengthgen/pipeline/sources.py: ``fingerprints``). A file loaded but not named would let an edit to it leave the job's
outputs stale: loading by name (``importlib``: schema modules, the runner's and the plot dispatcher's lookups) is
invisible to the import scan of lengthgen/pipeline/sources.py, so the rules must name those files themselves.
"""

import json
import os
import re
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from conftest import REPO, SMOKE_CONFIG, snakemake, write_config
from lengthgen.pipeline.sources import runs_something

LOADED = "loaded: "
FINGERPRINT = re.compile(r"'([^'@ ]+)@[0-9a-f]{16}'")  # lengthgen/pipeline/sources.py: fingerprints


def job_records(workdir: Path) -> list[tuple[str, set[str], set[str]]]:
    """(job, the files of its code params, the lengthgen files it loaded) for every job of the run in ``workdir`` that logged them."""
    records = {}
    for file in (workdir / ".snakemake" / "metadata").iterdir():
        meta = json.loads(file.read_text())
        for log in meta.get("log") or []:
            log_path = workdir / log
            if log in records or not log_path.is_file():
                continue
            loaded = {line[len(LOADED):].strip() for line in log_path.read_text().splitlines() if line.startswith(LOADED)}
            job = f"{meta['rule']} ({log})"
            records[log] = (job, code_files(" ".join(meta["params"])), loaded)
    return list(records.values())


def code_files(text: str) -> set[str]:
    """The files of every ``'path@digest'`` fingerprint in ``text`` (paths relative to the repository)."""
    return {str((REPO / path).resolve()) for path in FINGERPRINT.findall(text)}


def unlisted(records) -> list[str]:
    """Every (job, file) where the job loaded a lengthgen file that is not among its code params (a package that is a
    docstring only runs nothing, ``sources.runs_something``, and need not be one)."""
    return [f"{job} loaded {path}, which is not among its code params"
            for job, inputs, loaded in records for path in sorted(loaded)
            if str(Path(path).resolve()) not in inputs and runs_something(Path(path))]


def test_every_lengthgen_file_a_job_loads_is_among_its_code_params(smoke_run):
    records = job_records(smoke_run)
    assert len(records) > 40 and all(loaded for _, _, loaded in records)  # every job recorded what it loaded
    rules = {job.split(" ")[0] for job, _, _ in records}
    assert {"analyze_prop1", "plot_prop1", "train_sweep", "report"} <= rules
    assert unlisted(records) == []


def test_a_schema_module_dropped_from_a_rules_code_fails_naming_the_job_and_the_file(smoke_run):
    records = job_records(smoke_run)
    schema = str((REPO / "lengthgen" / "experiments" / "prop1" / "tables.py").resolve())
    job, inputs, loaded = next(record for record in records if record[0].startswith("analyze_prop1 "))
    assert schema in inputs and schema in loaded
    assert unlisted([(job, inputs - {schema}, loaded)]) == [f"{job} loaded {schema}, which is not among its code params"]


@contextmanager
def appended_comment(path: Path):
    """``path`` with a comment line appended, as an edit that changes no behaviour; restored byte for byte (and its
    times) after, so the finished smoke run is up to date again."""
    original, times = path.read_bytes(), path.stat()
    path.write_bytes(original + b"\n# an edit\n")
    try:
        yield
    finally:
        path.write_bytes(original)
        os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))


def scheduled_jobs(dry_run: str) -> dict[tuple[str, str], set[str]]:
    """Every job a dry run schedules, as (rule, log), with the files whose changed fingerprint is among its reasons
    (Snakemake's "Params have changed", which lists the params before and now: the new fingerprints are after
    "now: ")."""
    jobs, job = {}, None
    for line in dry_run.splitlines():
        line = line.strip()
        if re.fullmatch(r"(local)?rule \w+:", line):
            job = [line.split()[1].rstrip(":"), None]
        elif line.startswith("log: ") and job:
            job[1] = line.removeprefix("log: ")
        elif line.startswith("reason: ") and job:
            changed = line.partition("Params have changed since last execution: ")[2].partition(" now: ")[2]
            jobs[tuple(job)] = code_files(changed)
    return jobs


PROP1 = REPO / "lengthgen" / "experiments" / "prop1"
# What an edit to a file of prop1 must rerun by name, and what it must not: the section text is written by the
# figure job (no analysis reruns); the schemas are read by the analysis that writes them and the figure job that
# reads them; the headlines by the multiseed experiment alone.
EXPECTED = {"section.py": ("plot_prop1", "analyze_"), "tables.py": ("analyze_prop1", None),
            "headlines.py": ("analyze_multiseed", "analyze_prop1")}


@pytest.mark.parametrize("module", sorted(path.name for path in PROP1.glob("*.py") if runs_something(path)))
def test_an_edit_to_a_file_of_prop1_schedules_every_job_that_runs_it_and_no_other(smoke_run, module):
    """Every job that loaded the file is scheduled, and every job scheduled because of the file (not because a job
    upstream reruns) loaded it."""
    path = (PROP1 / module).resolve()
    running = {(job.split(" ")[0], job.split(" (")[1].rstrip(")")) for job, _, loaded in job_records(smoke_run)
               if str(path) in {str(Path(file).resolve()) for file in loaded}}
    with appended_comment(path):
        scheduled = scheduled_jobs(snakemake(smoke_run, "-n").stdout)
    by_the_edit = {job for job, updated in scheduled.items() if str(path) in updated}
    assert running and running <= set(scheduled)
    assert by_the_edit and by_the_edit <= running
    rules = {rule for rule, _ in scheduled}
    reruns, keeps = EXPECTED.get(module, (None, None))
    assert (reruns is None or reruns in rules) and (keeps is None or not any(keeps in rule for rule in rules))
    if module == "tables.py":
        assert "plot_prop1" in rules


# --- encodings: one module each, and a job names the modules of the encodings it builds -------------------------

ENCODINGS_FOLDER = REPO / "lengthgen" / "models" / "encodings"
GUIDE = REPO / "docs" / "adding-an-encoding.md"


def worked_example() -> tuple[str, str]:
    """(file name, text) of the worked example of docs/adding-an-encoding.md: the first Python block, whose first
    line names its file, then its folder."""
    block = GUIDE.read_text().split("```python\n", 1)[1].split("```", 1)[0]
    first, _, text = block.partition("\n")
    return first.removeprefix("# ").split(",")[0], text


@contextmanager
def added_file(path: Path, text: str):
    assert not path.exists()
    path.write_text(text)
    try:
        yield
    finally:
        path.unlink()


def model_jobs(scheduled) -> set[tuple[str, str]]:
    """The scheduled jobs that train or evaluate models (the confirmation's and robustness points' too)."""
    return {(rule, log) for rule, log in scheduled if re.search(r"(^|_)(train|evaluate)_", rule)}


def test_adding_an_encoding_schedules_its_own_training_and_evaluation_and_the_variants_and_no_other_model(
        smoke_run, tmp_path):
    """The guide's worked example, added to a finished tiny run: a module alone schedules no model, analysis or
    figure; listed in variants.pe, it trains and evaluates only itself, and reruns the variants analysis, figures
    and report."""
    name, text = worked_example()
    encoding = name.removesuffix(".py")
    variants = yaml.safe_load(SMOKE_CONFIG.read_text())["variants"]
    listed = write_config(tmp_path / "config.yaml", variants={**variants, "pe": [*variants["pe"], encoding]})
    with added_file(ENCODINGS_FOLDER / name, text):
        unlisted_run = snakemake(smoke_run, "-n").stdout
        scheduled = scheduled_jobs(snakemake(smoke_run, "-n", configfile=listed).stdout)
    assert not any(re.search(r"(^|_)(train|evaluate|analyze|plot)_", rule) for rule, _ in scheduled_jobs(unlisted_run))
    models = model_jobs(scheduled)
    assert {rule for rule, _ in models} == {"train_variants", "evaluate_variants"}
    assert all(f"pe~{encoding}/" in log for _, log in models), sorted(models)
    assert {"analyze_variants", "plot_variants", "report"} <= {rule for rule, _ in scheduled}


def test_an_edit_to_one_encoding_s_module_reruns_the_models_of_its_encodings_and_no_other(smoke_run):
    """A comment in fire.py retrains fire_fixed (the tiny run's one FIRE) for the edit itself, and evaluates it
    again because its model is new: no other model."""
    path = (ENCODINGS_FOLDER / "fire.py").resolve()
    with appended_comment(path):
        scheduled = scheduled_jobs(snakemake(smoke_run, "-n").stdout)
    models = model_jobs(scheduled)
    assert models and all("pe~fire_fixed/" in log for _, log in models), sorted(models)
    trained = {(rule, log) for rule, log in models if "train_" in rule}
    assert trained and all(str(path) in scheduled[job] for job in trained)
