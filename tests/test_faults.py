"""Faults lose nothing: a diverged run, a killed job, an interrupted or crashed Snakemake, a second
Snakemake on the same folder, and two configs side by side; and two runs give the same bytes."""

import signal
import subprocess
import time
from collections import Counter

import psutil
import pytest

from conftest import parquet_files, snakemake, snakemake_command, write_config
from test_workflow import scheduled_jobs

LOCKED = "Directory cannot be locked"


def test_a_diverged_run_fails_by_name_and_the_runs_that_do_not_need_it_finish(tmp_path):
    # One seed: the multiseed experiment, which every robustness point must run, needs two, so no study.
    config = write_config(tmp_path / "config.yaml", train={"lr": 1e12}, sweep={"seed": [0], "offset": [1]},
                          variants={"seeds": None, "offsets": None},  # they follow the sweep
                          robustness={"points": []})
    result = snakemake(tmp_path / "run", configfile=config, check=False)
    results = tmp_path / "run" / "results"
    assert result.returncode != 0
    for pe in ("rope", "learned"):
        log = (results / f"logs/train_sweep/pe~{pe}/offset~1.log").read_text()
        assert f"TrainingDiverged: training run pe={pe} seed=0 offset=1 diverged: loss nan at step 2" in log
        assert not (results / f"models/pe~{pe}").exists()  # nothing downstream can read its weights
    assert not list((results / "evaluations").glob("pe~*")) and not (results / "RESULTS.md").exists()
    # keep-going (the default profile): the linear control does not need the failed runs and finishes
    assert (results / "claims/linear.parquet").exists() and (results / "figures/linear_control.png").exists()


def test_two_runs_from_scratch_give_byte_identical_tables_side_by_side(smoke_run, smoke_copy, tmp_path):
    """Run A (the smoke run), run B (same config, its own results_dir) in the same folder, then A again:
    B's tables equal A's bit for bit, and neither run has anything left to do."""
    other = write_config(tmp_path / "other.yaml", results_dir="results_b")
    snakemake(smoke_copy, configfile=other)
    first, second = parquet_files(smoke_copy / "results"), parquet_files(smoke_copy / "results_b")
    assert len(first) > 30 and first.keys() == second.keys()
    assert [name for name in first if first[name] != second[name]] == []
    assert scheduled_jobs(snakemake(smoke_copy, "-n").stdout) == Counter()
    assert scheduled_jobs(snakemake(smoke_copy, "-n", configfile=other).stdout) == Counter()


def descendants(process: subprocess.Popen) -> list[psutil.Process]:
    try:
        return psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def wait_for_job(process: subprocess.Popen, script: str, timeout: float = 300) -> psutil.Process:
    """The first job process of ``process`` that runs ``script`` (e.g. 'train.py')."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in descendants(process):
            try:
                if any(part.endswith(script) for part in child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        if process.poll() is not None:
            raise AssertionError(f"snakemake ended before a {script} job started")
        time.sleep(0.2)
    raise AssertionError(f"no {script} job within {timeout} s")


def kill_a_running_job(process: subprocess.Popen, script: str, attempts: int = 50) -> None:
    """SIGKILL a job of ``process`` that runs ``script``; a job can end between being found and being
    killed (a head trains in about 2 s), so find another then."""
    for _ in range(attempts):
        try:
            wait_for_job(process, script).send_signal(signal.SIGKILL)
            return
        except psutil.NoSuchProcess:
            continue
    raise AssertionError(f"no {script} job stayed alive long enough to be killed")


@pytest.fixture(scope="module")
def interrupted_run(tmp_path_factory):
    """A run that goes through every fault in turn, recording what each step printed:

    1. a second snakemake while the first runs; 2. SIGKILL of a training job; 3. SIGINT of
    snakemake; 4. a new run, crashed (SIGKILL of snakemake and its jobs); 5. a plain rerun (refused:
    the crash left the lock); 6. --unlock; 7. a plain rerun, which completes.
    """
    workdir = tmp_path_factory.mktemp("interrupted")
    steps = {}
    first = subprocess.Popen(snakemake_command(workdir), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_for_job(first, "train.py")
    steps["second"] = snakemake(workdir, check=False)
    kill_a_running_job(first, "train.py")
    wait_for_job(first, "train.py")  # keep-going: the first run carries on with other jobs
    first.send_signal(signal.SIGINT)
    steps["interrupted"] = first.communicate(timeout=120)[0], first.returncode
    crashed = subprocess.Popen(snakemake_command(workdir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_job(crashed, ".py")
    for process in [psutil.Process(crashed.pid), *descendants(crashed)]:
        process.kill()
    crashed.wait()
    steps["after_crash"] = snakemake(workdir, check=False)
    steps["unlock"] = snakemake(workdir, "--unlock", check=False)
    steps["rerun"] = snakemake(workdir, check=False)
    return workdir, steps


@pytest.mark.slow
def test_a_second_snakemake_on_the_same_folder_is_refused(interrupted_run):
    _, steps = interrupted_run
    assert steps["second"].returncode != 0 and LOCKED in steps["second"].stdout + steps["second"].stderr


@pytest.mark.slow
def test_a_killed_job_and_an_interrupted_snakemake_resume_with_a_plain_rerun(interrupted_run, smoke_run):
    workdir, steps = interrupted_run
    output, returncode = steps["interrupted"]
    assert returncode != 0 and "Error in rule train" in output  # the SIGKILLed job was reported as failed
    assert steps["rerun"].returncode == 0, steps["rerun"].stdout + steps["rerun"].stderr
    assert parquet_files(workdir / "results") == parquet_files(smoke_run / "results")  # byte for byte


@pytest.mark.slow
def test_after_a_crash_the_lock_stays_until_unlock(interrupted_run):
    _, steps = interrupted_run
    refused = steps["after_crash"]
    assert refused.returncode != 0 and LOCKED in refused.stdout + refused.stderr
    assert steps["unlock"].returncode == 0 and steps["rerun"].returncode == 0
