"""What the workflow costs around its training, each against a yardstick timed beside it: a job's fixed cost
against a bare ``import torch``, a no-op dry run against Snakemake's own on a synthetic DAG of the same size, and
the tiny config's wall time against the least it could take. Every figure here is a child process's CPU or wall
time, so what this process has loaded does not count.
"""

import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import yaml

from lengthgen.pipeline.sources import lengthgen_files
from run_records import (TRAINING, all_job_costs, dag_shape, job_imports, module_names, run_floor, run_stages)
from speed_ratios import Ratio, paired_ratio

REPO = Path(__file__).resolve().parents[1]
SMOKE_CONFIG = REPO / "tests" / "smoke_config.yaml"
SCRIPTS = REPO / "workflow" / "scripts"
# Each goal, an upper bound on a cost over its yardstick.
FIXED_COST_GOAL = 1.2
DRY_RUN_GOAL = 1.5
TINY_WALL_GOAL = 1.5
SHARE_AFTER_TRAINING_GOAL = 0.20
PAIRS = 5  # interleaved pairs per ratio: single timings of a fresh process vary by a fifth on a busy machine
DRY_RUN_PAIRS = 3  # a dry run of the tiny config takes seconds; its spread is smaller


def child_seconds(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of running ``command`` to its end, CPU as the OS counts the finished children."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    finished = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if finished.returncode:
        raise RuntimeError(f"{' '.join(command)} (in {cwd}) failed with status {finished.returncode}:\n"
                           f"{finished.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def interleaved_cpu(commands: list[tuple[list[str], Path]], repeats: int) -> list[list[float]]:
    """CPU seconds of each (command, folder) run ``repeats`` times, in turn (a, b, a, b, ...): one list per command,
    its i-th timing run under the same load as the others' i-th."""
    timings = [[] for _ in commands]
    for _ in range(repeats):
        for timing, (command, cwd) in zip(timings, commands):
            timing.append(child_seconds(command, cwd)[1])
    return timings


@contextmanager
def scratch_folder():
    folder = Path(tempfile.mkdtemp(prefix="lengthgen-bench-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def script_modules(script: str) -> list[str]:
    """The lengthgen modules a workflow script runs (lengthgen/pipeline/sources.py: lengthgen_files)."""
    return module_names(path.relative_to(REPO) for path in lengthgen_files(REPO, SCRIPTS / script))


def import_command(modules) -> list[str]:
    """A fresh Python that imports ``modules`` and ends."""
    return [sys.executable, "-c", "; ".join(f"import {name}" for name in modules) or "pass"]


def cheapest_torch_job() -> tuple[str, list[str]]:
    """The workflow script that starts torch (runs lengthgen.runtime.device) with the fewest lengthgen modules, and
    those modules: the least any job that runs a model imports."""
    scripts = {path.name: script_modules(path.name) for path in sorted(SCRIPTS.glob("*.py"))}
    starting = {script: modules for script, modules in scripts.items() if "lengthgen.runtime.device" in modules}
    script = min(starting, key=lambda name: len(starting[name]))
    return script, starting[script]


# What a job does besides its work: its log, torch's threads and flags, its cost line, its exit without teardown.
JOB_FRAME = ("from lengthgen.runtime.job import start_job; from lengthgen.runtime.device import configure_torch; "
             "job = start_job({log!r}); configure_torch(1); job.finish()")


def fixed_cost_ratio(pairs: int = PAIRS) -> Ratio:
    """The CPU of the cheapest job that starts torch, doing no work, over a bare ``import torch``; each a fresh
    Python, timed in ``pairs`` interleaved pairs."""
    script, modules = cheapest_torch_job()
    with scratch_folder() as folder:
        job = import_command(modules)
        job[-1] += "; " + JOB_FRAME.format(log=str(folder / "job.log"))
        job_cpu, bare_cpu = interleaved_cpu([(job, REPO), (import_command(["torch"]), REPO)], pairs)
    return Ratio("a job's fixed cost", paired_ratio(job_cpu, bare_cpu), FIXED_COST_GOAL,
                 f"a `{script}` job doing no work (its {len(modules)} lengthgen modules, `start_job`, "
                 f"`configure_torch(1)`, `finish`), {statistics.median(job_cpu):.2f} CPU s, over `python -c \"import "
                 f"torch\"`, {statistics.median(bare_cpu):.2f}; median of {pairs} interleaved pairs")


def workflow_command(workdir: Path, cores: int, *args: str) -> list[str]:
    """Snakemake running this checkout's workflow in ``workdir`` on ``cores`` cores."""
    return [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
            "--cores", str(cores), *args]


def snakemake(workdir: Path, *args: str, cores: int = 8) -> float:
    """Run the workflow in ``workdir``; return the wall seconds."""
    return child_seconds(workflow_command(workdir, cores, *args), REPO)[0]


# A synthetic workflow for Snakemake's own floor: JOBS jobs that touch their OUTPUTS files, each reading INPUTS
# files (outputs of two earlier jobs: a wide, shallow DAG) and holding PARAMS short params, as the rules' code
# fingerprints are. Nothing in it runs lengthgen; a no-op dry run of it is what Snakemake needs for a DAG this size.
SYNTHETIC_WORKFLOW = """
JOBS, OUTPUTS, INPUTS, PARAMS = (int(config[key]) for key in ("jobs", "outputs", "inputs", "params"))


def parents_outputs(wildcards):
    job = int(wildcards.job)
    if job == 0:
        return [f"source/{k}" for k in range(INPUTS)]
    parents = ((job - 1) // 2, (job - 1) // 3)
    return [f"out/{parents[k // OUTPUTS % 2]}/{k % OUTPUTS}" for k in range(INPUTS)]


rule all:
    input: [f"out/{job}/0" for job in range(JOBS)]


rule job:
    input: parents_outputs
    output: [f"out/{{job}}/{k}" for k in range(OUTPUTS)]
    params: *[f"lengthgen/module_{k}.py@0123456789abcdef" for k in range(PARAMS)]
    shell: "touch {output}"
"""


def write_synthetic_workflow(folder: Path, shape: dict[str, int]) -> list[str]:
    """``SYNTHETIC_WORKFLOW`` and the source files its first job reads, in ``folder``; the command that runs it at
    this ``shape`` there."""
    (folder / "Snakefile").write_text(SYNTHETIC_WORKFLOW)
    (folder / "source").mkdir()
    for k in range(shape["inputs"]):
        (folder / "source" / str(k)).touch()
    return [sys.executable, "-m", "snakemake", "--cores", "2", "--quiet", "all",
            "--config", *(f"{key}={value}" for key, value in shape.items())]


def dry_run_ratio(workdir: Path, dry_run: list[str], pairs: int = DRY_RUN_PAIRS) -> Ratio:
    """The CPU of ``dry_run``, a no-op dry run of the finished run in ``workdir``, over Snakemake's own: a no-op dry
    run of ``SYNTHETIC_WORKFLOW`` at the run's DAG shape, after one real run (so that Snakemake reads every output's
    record, as on a finished run); interleaved pairs."""
    shape = dag_shape(workdir)
    with scratch_folder() as folder:
        synthetic = write_synthetic_workflow(folder, shape)
        subprocess.run(synthetic, check=True, cwd=folder, capture_output=True)
        workflow_cpu, floor_cpu = interleaved_cpu([(dry_run, REPO), (synthetic + ["-n"], folder)], pairs)
    size = ", ".join(f"{value} {key}" + (" a job" if key != "jobs" else "") for key, value in shape.items())
    return Ratio("a no-op dry run", paired_ratio(workflow_cpu, floor_cpu), DRY_RUN_GOAL,
                 f"`snakemake -n` on the finished tiny run, {statistics.median(workflow_cpu):.2f} CPU s, over the same "
                 f"on a synthetic DAG of its size ({size}; nothing of lengthgen), "
                 f"{statistics.median(floor_cpu):.2f}; median of {pairs} interleaved pairs")


def import_costs(imports: dict[str, tuple[str, ...]]) -> dict[str, float]:
    """CPU seconds of a fresh Python importing what each job runs (``run_records.job_imports``), by log: one timing
    per distinct set of modules, which the jobs sharing it share."""
    seconds = {modules: child_seconds(import_command(modules), REPO)[1] for modules in set(imports.values())}
    return {log: seconds[modules] for log, modules in imports.items()}


def share_after_training_ratio(costs: pd.DataFrame, run: str) -> Ratio:
    """The jobs other than training's share of all jobs' CPU in ``costs`` (``run_records.job_costs``) of ``run``."""
    if costs.empty:
        raise ValueError(f"{run}: no job wrote a cost line under its logs/ folders; is it the results folder of a "
                         "finished run?")
    training = costs.loc[costs["stage"].str.startswith(TRAINING), "cpu_s"].sum()
    total = costs["cpu_s"].sum()
    return Ratio("jobs after training, share of all jobs' CPU", (total - training) / total, SHARE_AFTER_TRAINING_GOAL,
                 f"{total - training:.0f} of {total:.0f} CPU s, the cost lines of the {len(costs)} jobs of {run}",
                 share=True)


def stage_lines(table: pd.DataFrame, run: str) -> list[str]:
    """Markdown rows of a stage table, the run named in the first column."""
    return [table_line([run, stage, str(int(row["jobs"])), f"{row['wall s']:.0f}", f"{row['CPU s']:.0f}",
                        "" if pd.isna(row["max RSS MB"]) else f"{row['max RSS MB']:.0f}"])
            for stage, row in table.iterrows()]


def table_line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def stage_section(results: Path, heading: str) -> str:
    """The jobs' CPU by stage of the run in ``results``, from the costs in its jobs' logs."""
    lines = [f"## {heading}", "", table_line(["run", "stage", "jobs", "wall s", "CPU s", "max RSS MB"]), "|---" * 6 + "|"]
    for run, table in run_stages(results).items():
        lines += stage_lines(table, run)
    return "\n".join(lines)


def tiny_run(workdir: Path, cores: int, results_dir: str) -> tuple[list[str], list[Ratio]]:
    """The tiny config run from scratch in ``workdir`` on ``cores`` cores: its wall time over its floor (training
    as run, every other job at the CPU of importing what it runs, every core busy), its jobs after training's share
    of their CPU, and a no-op dry run of it over Snakemake's own. Returns its sections and the three ratios."""
    command = workflow_command(workdir, cores, "--configfile", str(SMOKE_CONFIG))
    wall = child_seconds(command, REPO)[0]
    results = workdir / (yaml.safe_load(SMOKE_CONFIG.read_text()).get("results_dir") or results_dir)
    costs = all_job_costs(results)
    floor = run_floor(costs, import_costs(job_imports(workdir)), cores)
    wall_ratio = Ratio(
        "the tiny config's wall time", wall / floor.wall_s, TINY_WALL_GOAL,
        f"{wall:.0f} s from scratch on {cores} cores, over its floor {floor.wall_s:.0f} s: training "
        f"{floor.training_cpu:.0f} CPU s as run, the other {floor.other_jobs} jobs ({floor.other_torch_jobs} start "
        f"torch) at what importing their modules takes, {floor.other_floor_cpu:.0f} CPU s (as run "
        f"{floor.other_cpu:.0f}), every core busy")
    ratios = [share_after_training_ratio(costs, "the tiny run"), dry_run_ratio(workdir, command + ["-n"]), wall_ratio]
    return [stage_section(results, f"The tiny run by stage ({len(costs)} jobs)")], ratios
