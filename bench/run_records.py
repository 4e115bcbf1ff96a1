"""What a finished run cost, read from what it left: each job's cost line, the lengthgen files each job ran (its
params in Snakemake's records), the shape of its DAG, and the least the run could have cost. It reads files and times nothing.
"""

import datetime
import json
import re
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from lengthgen.runtime.device import TORCH_STARTED
from lengthgen.runtime.job import read_cost

# The training rules' prefix (train_sweep, train_variants, ...; not training_summary, which reads tables).
TRAINING = "train_"
# A lengthgen file as a rule's params name it (lengthgen/pipeline/sources.py: fingerprints), quoted as Snakemake's
# record of the params writes it: 'lengthgen/models/head.py@0123456789abcdef'.
FINGERPRINT = re.compile(r"^'(lengthgen/[^@']+\.py)@[0-9a-f]+'$")


def job_costs(logs: Path) -> pd.DataFrame:
    """Every job's cost under ``logs`` (a results folder's ``logs/``, read recursively): the cost line each job writes
    at the end of its log (``lengthgen.runtime.job.read_cost``), one row per job. Columns: log (the log's resolved
    path), stage (the rule, the first path part below ``logs/``: ``train_sweep/pe~rope/offset~1.log``,
    ``report.log``), wall_s, cpu_s, max_rss_mb, and torch: whether the job started torch (its log has
    ``runtime.configure_torch``'s line). A log without a cost (a job killed mid-way) is left out."""
    costs = [{"log": str(path.resolve()), "stage": path.relative_to(logs).parts[0].removesuffix(".log"), **cost,
              "torch": TORCH_STARTED in text}
             for path in sorted(logs.rglob("*.log")) if (cost := read_cost(text := path.read_text()))]
    return pd.DataFrame(costs, columns=["log", "stage", "wall_s", "cpu_s", "max_rss_mb", "torch"])


def stage_table(logs: Path) -> pd.DataFrame:
    """Every job's cost under ``logs`` (``job_costs``) summed by stage. Columns: jobs, wall s (summed over the jobs),
    CPU s (summed), max RSS MB (the largest job's); one row per stage, sorted by CPU s, largest first. Jobs overlap,
    so wall s summed is busy time, not the run's wall time."""
    table = job_costs(logs).groupby("stage").agg(**{
        "jobs": ("cpu_s", "size"), "wall s": ("wall_s", "sum"), "CPU s": ("cpu_s", "sum"), "max RSS MB": ("max_rss_mb", "max")})
    return table.sort_values("CPU s", ascending=False)


def run_folders(results: Path) -> dict[str, Path]:
    """The logs folder of the run in ``results`` ("main") and of every run in a folder of its own below it: the
    confirmation runs (``confirm/<name>``, lengthgen/studies/confirmation/runs.py) and the robustness points
    (``robustness/<name>``)."""
    folders = sorted(folder for folder in [*results.glob("confirm/*"), *results.glob("robustness/*")]
                     if (folder / "logs").is_dir())
    return {"main": results / "logs", **{folder.relative_to(results).as_posix(): folder / "logs" for folder in folders}}


def run_stages(results: Path) -> dict[str, pd.DataFrame]:
    """The stage table of every run in ``results`` (``run_folders``)."""
    return {run: stage_table(logs) for run, logs in run_folders(results).items()}


def all_job_costs(results: Path) -> pd.DataFrame:
    """``job_costs`` of every run in ``results`` (``run_folders``), in one frame."""
    return pd.concat([job_costs(logs) for logs in run_folders(results).values()], ignore_index=True)


class Floor(NamedTuple):
    """What a run's jobs cost (``run_floor``), and the least they could cost with its training as it is."""

    training_cpu: float
    other_jobs: int
    other_torch_jobs: int  # of them, those that started torch
    other_cpu: float  # what the other jobs cost
    other_floor_cpu: float  # what they would cost if they only imported what they run
    cores: int

    @property
    def wall_s(self) -> float:
        """Every core busy from the first job to the last, and nothing else running."""
        return (self.training_cpu + self.other_floor_cpu) / self.cores


def run_floor(costs: pd.DataFrame, start_cpu: dict[str, float], cores: int) -> Floor:
    """A lower bound on a run's jobs (``job_costs``): its training jobs at the CPU they took, every other job at
    ``start_cpu[its log]`` (what a fresh Python takes to import what the job runs; nothing for a log not in it),
    and never at more than it took. Snakemake's own process counts nothing. What stays above a goal here cannot be
    brought under it by any change to the jobs after training, short of running fewer of them."""
    training = costs["stage"].str.startswith(TRAINING)
    others = costs[~training]
    start = others["log"].map(start_cpu).fillna(0.0).astype(float)
    return Floor(costs.loc[training, "cpu_s"].sum(), len(others), int(others["torch"].sum()), others["cpu_s"].sum(),
                 start.clip(upper=others["cpu_s"]).sum(), cores)


def job_records(workdir: Path) -> list[dict]:
    """Snakemake's record of every output file of the run in ``workdir`` (``.snakemake/metadata``): the rule, the
    job's inputs, log, params and job_hash, among others. An error names the folder if the run left none."""
    folder = workdir / ".snakemake" / "metadata"
    records = [json.loads(path.read_text()) for path in sorted(folder.glob("*"))]
    if not records:
        raise FileNotFoundError(f"{folder}: no records of finished jobs; is {workdir} the folder of a finished run?")
    return records


def module_names(files) -> list[str]:
    """The dotted module of each lengthgen ``.py`` file (paths relative to the repository), in order; other files
    (data a module reads at import) are left out."""
    return [".".join(Path(path).with_suffix("").parts).removesuffix(".__init__") for path in files
            if Path(path).suffix == ".py"]


def job_imports(workdir: Path) -> dict[str, tuple[str, ...]]:
    """The lengthgen modules each job of the run in ``workdir`` runs, by its log's resolved path: the files its
    params name (each rule lists the lengthgen files its script runs, lengthgen/pipeline/sources.py)."""
    imports = {}
    for record in job_records(workdir):
        files = sorted(match[1] for param in record["params"] if (match := FINGERPRINT.match(param)))
        for log in record["log"]:
            imports[str((workdir / log).resolve())] = tuple(module_names(files))
    return imports


def dag_shape(workdir: Path) -> dict[str, int]:
    """The size of the finished run's DAG in ``workdir``, as a synthetic workflow of that size takes it (bench/
    benchmark.py: SYNTHETIC_WORKFLOW): its jobs that wrote files, and per job, rounded, its output files, inputs and
    params."""
    records = job_records(workdir)
    jobs = {record["job_hash"]: record for record in records}.values()
    return {"jobs": len(jobs), "outputs": round(len(records) / len(jobs)),
            "inputs": round(sum(len(job["input"]) for job in jobs) / len(jobs)),
            "params": round(sum(len(job["params"]) for job in jobs) / len(jobs))}


def log_span_seconds(log_text: str) -> float:
    """Seconds from the first to the last timestamp of a Snakemake log: the run's wall time."""
    stamps = [datetime.datetime.strptime(stamp, "%a %b %d %H:%M:%S %Y")
              for stamp in re.findall(r"^\[(\w{3} \w{3} [ \d]\d [\d:]{8} \d{4})\]$", log_text, flags=re.MULTILINE)]
    return (max(stamps) - min(stamps)).total_seconds()
