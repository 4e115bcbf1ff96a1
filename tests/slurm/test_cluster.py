"""The workflow on a real SLURM cluster, started by tests/slurm/run_cluster_test.sh (which sets
CLUSTER_TEST_DIR): the tiny config run through profiles/slurm gives the same tables as a local
run, in a few grouped SLURM jobs, and a GPU request reaches sbatch.

Deselected from the default `pytest` (marker `cluster`); the script runs it in .venv-slurm, the
environment that has the SLURM executor plugin."""

import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from conftest import REPO, SMOKE_CONFIG

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif("CLUSTER_TEST_DIR" not in os.environ, reason="needs the cluster of run_cluster_test.sh"),
]

SLURM_PROFILE = REPO / "profiles" / "slurm"
# Each workflow run's limit; the tiny config takes a few minutes on 2 cores. All the runs of
# this file stay within the 1800 s that run_cluster_test.sh gives to pytest.
RUN_LIMIT_S = 600


def snakemake(workdir: Path, *args: str, configfile: Path = SMOKE_CONFIG, limit_s: int = RUN_LIMIT_S):
    """Run the workflow in ``workdir``; output goes to ``workdir``.log. Bounded with one SIGINT
    (--foreground: to snakemake alone, as Ctrl-C would; a second one, to its process group,
    would interrupt its scancel), which it obeys while jobs run, unlike SIGTERM."""
    command = ["timeout", "--foreground", "-s", "INT", "-k", "60", str(limit_s),
               sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
               "--directory", str(workdir), "--configfile", str(configfile), *args]
    started = time.monotonic()
    # A shell without job control starts background commands with SIGINT ignored, and Python
    # then never sees it: give snakemake the default action back.
    result = subprocess.run(command, capture_output=True, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    output = result.stdout + result.stderr
    workdir.with_suffix(".log").write_text(output)
    return result.returncode, output, time.monotonic() - started


def on_cluster(workdir: Path, *args: str, **kwargs):
    # The executor's first status check waits 40 s by default, kind to a busy controller; this
    # one is idle, so check after 2 s (later checks back off by 10 s while nothing finishes).
    return snakemake(workdir, "--workflow-profile", str(SLURM_PROFILE), "--verbose",
                     "--slurm-init-seconds-before-status-checks", "2", *args, **kwargs)


def slurm_jobs(run_id: str) -> list[dict]:
    """Every SLURM job that a run submitted (they are named by its run ID), from accounting."""
    fields = ["JobID", "State", "AllocCPUS", "ReqMem", "Elapsed"]
    result = subprocess.run(["timeout", "30", "sacct", "--noheader", "--allocations", "--parsable2",
                             f"--name={run_id}", f"--format={','.join(fields)}"],
                            capture_output=True, text=True, check=True)
    return [dict(zip(fields, line.split("|"))) for line in result.stdout.splitlines() if line]


def tables(workdir: Path) -> dict[str, Path]:
    return {str(path.relative_to(workdir)): path for path in sorted((workdir / "results").rglob("*.parquet"))}


@pytest.fixture(scope="session")
def runs() -> dict:
    """The tiny config through the SLURM profile, then locally, into two folders."""
    base = Path(os.environ["CLUSTER_TEST_DIR"])
    status, output, seconds = on_cluster(base / "cluster")
    assert status == 0, f"cluster run failed ({status}):\n{output[-20000:]}"
    run_id = re.search(r"SLURM run ID: (\S+)", output).group(1)
    local_status, local_output, local_seconds = snakemake(base / "local", "--cores", "2")
    assert local_status == 0, f"local run failed ({local_status}):\n{local_output[-20000:]}"
    dry_status, dry_output, _ = snakemake(base / "dry", "-n", "--workflow-profile", str(SLURM_PROFILE), limit_s=120)
    assert dry_status == 0, dry_output
    jobs = slurm_jobs(run_id)
    print(f"\ncluster run: {len(jobs)} SLURM jobs, {seconds:.0f} s; local run: {local_seconds:.0f} s")
    for job in jobs:
        print("   ", "  ".join(f"{key}={value}" for key, value in job.items()))
    return {"cluster": base / "cluster", "local": base / "local", "output": output, "jobs": jobs,
            "dry_run": dry_output}


def test_cluster_tables_equal_the_local_run(runs):
    cluster, local = tables(runs["cluster"]), tables(runs["local"])
    assert cluster.keys() == local.keys()
    assert any(name.startswith("results/tables/") for name in local)
    assert any(name.startswith("results/claims/") for name in local)
    for name, path in local.items():
        assert pq.read_table(cluster[name]).equals(pq.read_table(path), check_metadata=True), name


def jobs_per_rule(dry_run: str) -> dict[str, int]:
    """The dry run's "Job stats" table: how many jobs of each rule."""
    table = dry_run[dry_run.index("Job stats:"):]
    return {name: int(count) for name, count in re.findall(r"^(\w+)\s+(\d+)$", table, flags=re.MULTILINE)}


def test_cluster_run_submits_one_slurm_job_per_group_job(runs):
    counts = jobs_per_rule(runs["dry_run"])
    group_jobs = len(re.findall(r"Group job \w+ ", runs["dry_run"]))
    # Each model chain (every seed of one (pe, offset), or of one offset of a modified head) is one `models`
    # group: it starts with one training job, train_<...> (or a confirmation run's copy, confirm_<name>_train_<...>,
    # or a robustness point's, robust_<point>_train_sweep).
    models = sum(count for rule, count in counts.items()
                 if re.sub(r"^(confirm|robust)_\w+?_(?=train_)", "", rule).startswith("train_"))
    assert models >= 8
    # eval_sets (one job), the models 8 to a job (profiles/slurm group-components), summary (one job)
    assert group_jobs == 1 + math.ceil(models / 8) + 1
    assert len(runs["jobs"]) == group_jobs < counts["total"] / 5
    assert {job["State"] for job in runs["jobs"]} == {"COMPLETED"}
    # The executor runs a group's members one after another, so each job asks for one core.
    assert {job["AllocCPUS"] for job in runs["jobs"]} == {"1"}
    sbatch_calls = re.findall(r"sbatch call: (.*)", runs["output"])
    assert len(sbatch_calls) == len(runs["jobs"])
    assert not any("--gres" in call or "--gpus" in call for call in sbatch_calls)  # device: cpu


def test_every_rule_log_is_written_on_the_cluster(runs):
    logs = {path.relative_to(runs["local"]) for path in (runs["local"] / "results" / "logs").rglob("*.log")}
    assert logs and logs == {path.relative_to(runs["cluster"])
                             for path in (runs["cluster"] / "results" / "logs").rglob("*.log")}


def test_a_cuda_config_asks_sbatch_for_a_gpu(tmp_path):
    """The test node has no GPU: with EnforcePartLimits=ALL, SLURM refuses the request at
    submission, and the executor's error shows the sbatch line that asked for one."""
    config = yaml.safe_load(SMOKE_CONFIG.read_text())
    config["device"] = "cuda"
    configfile = tmp_path / "cuda.yaml"
    configfile.write_text(yaml.safe_dump(config))
    status, output, _ = on_cluster(tmp_path / "gpu", "results/models/pe~rope/seed~0/offset~1/model.pt",
                                   configfile=configfile, limit_s=120)
    assert status != 0
    sbatch_calls = re.findall(r"sbatch call: (.*)", output)
    assert sbatch_calls and all("--gres=gpu:1" in call for call in sbatch_calls), output[-5000:]
    run_id = re.search(r"SLURM run ID: (\S+)", output).group(1)
    assert slurm_jobs(run_id) == []  # refused at submission: nothing queued, nothing ran
