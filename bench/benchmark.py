"""How fast lengthgen runs on this machine: prints a table and writes it to bench/RESULTS.md.

    python bench/benchmark.py              # per-run numbers: training, evaluation (about 2 minutes)
    python bench/benchmark.py --pipeline   # also the default pipeline, a no-op rerun and a figures-only rerun
    python bench/benchmark.py --last-run   # the same, for the run in this checkout (the costs in its jobs' logs)
    python bench/benchmark.py --per-model  # also CPU seconds per trained model, per family, alone and batched
    python bench/benchmark.py --per-model --steps 20 --quick --output /tmp/bench.md   # a quick try of it
    python bench/benchmark.py --speed      # only the speed figures of issue 26, side by side (a few minutes)

Training is timed on one CPU thread, in this process, for the table-based head that the
pipeline runs and for the plain per-sequence computation (``AttentionHead.reference_predict``,
the head's definition) in the same training loop; their ratio is what the tables buy. Every
time is the median of repeated runs. A lone seed trains beside a twin whose result is dropped
(``training.fit``), so "one seed" here costs what a one-seed job costs. Where CUDA is present,
the per-run numbers are repeated on the GPU. ``--pipeline`` runs the default config from scratch
in a temporary folder and splits its jobs by stage (rule): jobs, wall and CPU seconds, peak memory,
from the cost every job writes as the last line of its log (``<results>/logs/<rule>/...log``; lengthgen/runtime/job.py).

``--per-model`` adds CPU seconds (``time.process_time``) per trained model of every model family
the pipeline trains (the rope, learned, randomized_rope, randomized_learned, fire, linear-attention and log-length
heads; the transformer), alone (one seed) and with a batch of seeds side by side (``--seeds``, 10;
``--transformer-seeds``, 3 as in the pipeline's transformer jobs), on the CPU. Each is timed once,
in this process after an untimed warm-up call, at its config's steps (or at ``--steps``, for a
quick try) and at a tenth of them: the difference gives the cost per step, the rest the fixed
cost per model (init, the range-fit check), and the two give the cost at the config's steps.

``--speed`` prints only the figures the speed budgets are judged by, side by side in one run: CPU ms per
seed-step of every model family against the minimal stacked rope head (``bench/reference_head.py``, the same
computation in as few ops as it takes, on the same kernels), whose ratio is the figure that counts; a job's
fixed cost (a fresh Python importing what each rule's script imports, and a whole no-op Snakemake job)
against a bare ``import torch``, and Snakemake's own no-op dry run of a synthetic DAG of the default run's size;
the CPU seconds by stage of the run in this checkout, if it has one; and the least that run could cost
(``run_floor``: its training as measured, every other job at the cost of starting torch, or at nothing), which
says which budgets no change to the jobs after training can meet.
"""

import argparse
import dataclasses
import datetime
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple
from unittest import mock

from lengthgen.runtime.job import PORTABLE_CPU_ENV, peak_rss_mb, read_cost, use_cpu_kernels

# The CPU kernels of the default config's jobs (cpu_kernels: native), set before torch starts; export
# LENGTHGEN_BENCH_CPU_KERNELS=portable to time the portable ones.
use_cpu_kernels(os.environ.get("LENGTHGEN_BENCH_CPU_KERNELS", "native"))

import pandas as pd  # noqa: E402
import torch  # noqa: E402
import yaml  # noqa: E402

from lengthgen.training import loop as training  # noqa: E402
from lengthgen.pipeline.config import prepare_config  # noqa: E402
from lengthgen.data import eval_set_frame, eval_sets_from_frame  # noqa: E402
from lengthgen.evaluation import accuracy_by_length  # noqa: E402
from lengthgen.models.head import AttentionHead, HeadConfig  # noqa: E402
from lengthgen.report.provenance import code_version, machine_description  # noqa: E402
from lengthgen.runtime.device import TORCH_STARTED, configure_torch  # noqa: E402
from lengthgen.pipeline.sources import lengthgen_files  # noqa: E402
from lengthgen.task import TaskConfig  # noqa: E402
from lengthgen.models.transformer import TransformerConfig  # noqa: E402
from lengthgen.training.loop import train_transformers  # noqa: E402
from reference_head import train_minimal  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# The default config as the workflow sees it: defaults filled, derived settings derived.
DEFAULT_CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())
prepare_config(DEFAULT_CONFIG, REPO / "workflow" / "schemas" / "config.schema.yaml")
OFFSET = 2  # one offset stands for all: the cost does not depend on it
# The training rules' prefix (train_sweep, train_variants, ...; not training_summary, which reads tables).
TRAINING = "train_"


class ReferenceHead(AttentionHead):
    """The head computed the plain way, per sequence: the definition the table path is tested against."""

    def predict(self, tokens, position_offset=0, positions=None):
        logits, _, weights = self.reference_predict(tokens, position_offset, positions)
        return logits, weights


def median_seconds(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def head_config(pe: str, **options) -> HeadConfig:
    """The head a training job builds (workflow/scripts/train.py): the config's model section, the
    longest training length as its trained positions (common.smk's HEAD_TRAINING), and ``options``
    (attention, logit_scale, ...) as the modified heads set them."""
    task = DEFAULT_CONFIG["task"]
    return HeadConfig(vocab_size=task["vocab_size"], pe=pe, trained_positions=task["train_length_max"],
                      **DEFAULT_CONFIG["model"], **options)


def transformer_config(pe: str) -> TransformerConfig:
    """The transformer a train_transformer job builds (common.smk's TRANSFORMER_TRAINING)."""
    task, model, transformer = DEFAULT_CONFIG["task"], DEFAULT_CONFIG["model"], DEFAULT_CONFIG["transformer"]
    return TransformerConfig(vocab_size=task["vocab_size"], pe=pe, n_layers=transformer["n_layers"],
                             n_heads=transformer["n_heads"], d_model=transformer["d_model"],
                             trained_positions=task["train_length_max"], rope_base=model["rope_base"],
                             learned_init_std=model["learned_init_std"])


def train_settings(section: str, **changes) -> training.TrainConfig:
    """The training settings of a config section (train, linear, transformer) as its jobs get them: the
    section's keys that ``TrainConfig`` has (the rest are the model's), with ``changes``."""
    names = {field.name for field in dataclasses.fields(training.TrainConfig)}
    settings = {key: value for key, value in DEFAULT_CONFIG[section].items() if key in names}
    return training.TrainConfig(**{**settings, **changes})


def task_config() -> TaskConfig:
    task = DEFAULT_CONFIG["task"]
    return TaskConfig(task["vocab_size"], OFFSET, task["train_length_min"], task["train_length_max"])


def train_seconds_per_step(pe: str, attention: str, section: str, steps: int, device: str, reference: bool,
                           repeats: int) -> float:
    config = task_config()
    schedule = train_settings(section, steps=steps, log_every=10**9)
    head = ReferenceHead if reference else AttentionHead

    def run():
        with mock.patch.object(training, "AttentionHead", head):
            training.train_heads(head_config(pe, attention=attention), config, schedule, [0], device)
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    run()  # warm-up
    return median_seconds(run, repeats) / steps


def profile_rows(steps: int) -> list[dict]:
    """Where one rope training step's CPU time goes (torch.profiler, self time per op, summed over
    ``steps`` steps): the ops that take most, and how many op calls a step makes."""
    config, schedule = task_config(), train_settings("train", steps=steps, log_every=10**9)
    training.train_heads(head_config("rope"), config, schedule, [0], "cpu")  # warm-up
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
        training.train_heads(head_config("rope"), config, schedule, [0], "cpu")
    events = profiler.key_averages()
    total = sum(event.self_cpu_time_total for event in events)
    calls = sum(event.count for event in events)
    rows = [{"what": f"profile, rope training: {calls / steps:.0f} op calls per step, "
                     f"{total / steps / 1000:.2f} ms of op self time per step (profiler overhead included)",
             "fast": "", "reference": "", "ratio": ""}]
    for event in sorted(events, key=lambda event: -event.self_cpu_time_total)[:10]:
        rows.append({"what": f"  `{event.key}`",
                     "fast": f"{100 * event.self_cpu_time_total / total:.0f}% "
                             f"({event.count / steps:.0f} calls/step, {event.self_cpu_time_total / event.count:.0f} us each)",
                     "reference": "", "ratio": ""})
    return rows


def training_rows(device: str, quick: bool) -> list[dict]:
    """Seconds per step, fast and reference, and the projected time of one run of the config's length."""
    rows = []
    for label, pe, attention, section in (("single head, rope", "rope", "softmax", "train"),
                                          ("single head, learned", "learned", "softmax", "train"),
                                          ("linear control", "rope", "linear", "linear")):
        settings = DEFAULT_CONFIG[section]
        fast = train_seconds_per_step(pe, attention, section, 200 if quick else 1000, device, False, 3)
        reference = train_seconds_per_step(pe, attention, section, 50 if quick else 200, device, True, 3)
        rows.append({"what": f"training, {label} ({settings['steps']} steps, batch {settings['batch_size']})",
                     "fast": f"{1000 * fast:.2f} ms/step = {fast * settings['steps']:.2f} s/run",
                     "reference": f"{1000 * reference:.2f} ms/step = {reference * settings['steps']:.1f} s/run",
                     "ratio": f"{reference / fast:.1f}x"})
    return rows


class Family(NamedTuple):
    """A kind of model the pipeline trains, as its training jobs build and train it."""

    label: str
    train_models: Callable  # training.loop.train_heads or train_transformers
    model_config: Any  # HeadConfig or TransformerConfig
    section: str  # the config section of its training settings
    batched: int  # seeds trained side by side in the batched measurement


def model_families(seeds: int, transformer_seeds: int) -> list[Family]:
    """Every model family the default pipeline trains: the sweep's heads, the variants that draw
    position ids per sequence (randomized_rope, randomized_learned) and one whose bias is an MLP (fire), the linear-attention
    control and the log-length head (common.smk's MODIFIED_HEADS), and the transformer."""
    train_length_max = DEFAULT_CONFIG["task"]["train_length_max"]
    heads = [("rope head", head_config("rope"), "train"),
             ("learned head", head_config("learned"), "train"),
             ("randomized_rope head (variant)", head_config("randomized_rope"), "train"),
             ("randomized_learned head (variant)", head_config("randomized_learned"), "train"),
             ("fire head (variant)", head_config("fire"), "train"),
             ("linear-attention head", head_config("rope", attention="linear"), "linear"),
             ("log-length head", head_config("rope", logit_scale="log_length", reference_length=train_length_max),
              "train")]
    transformer_pe = DEFAULT_CONFIG["transformer"]["pe"][0]
    return ([Family(label, training.train_heads, config, section, seeds) for label, config, section in heads]
            + [Family(f"transformer, {transformer_pe}", train_transformers, transformer_config(transformer_pe),
                      "transformer", transformer_seeds)])


class Cost(NamedTuple):
    """CPU seconds per model of one training call: per step, fixed, and as timed."""

    per_step: float  # CPU s per step per model
    fixed: float  # CPU s per model besides the steps: init, stacking, the range-fit check
    timed: float  # CPU s per model of the timed call at ``steps``

    def at(self, steps: int) -> float:
        """CPU s per model for a run of ``steps``."""
        return self.fixed + self.per_step * steps


def one_cycle_accepts(section: str, steps: int) -> bool:
    """Whether the learning-rate schedule (torch's OneCycleLR) runs for ``steps`` under the section's
    warmup: it divides by zero where the warmup is exactly one step (10 steps at 0.1)."""
    return DEFAULT_CONFIG[section]["warmup_fraction"] * steps != 1


def cpu_seconds(function: Callable) -> float:
    """CPU seconds this process spends in ``function()`` (every thread; torch runs one here)."""
    start = time.process_time()
    function()
    return time.process_time() - start


def training_cost(family: Family, n_seeds: int, steps: int) -> Cost:
    """CPU seconds per model of training ``n_seeds`` models of ``family`` side by side on one thread.

    One call at ``steps`` and one at a tenth of them (after an untimed warm-up call): cost(n) =
    fixed + n x per_step through the two. CPU time, not wall time: other processes on the cores
    slow it less (they still share caches and memory bandwidth)."""
    seeds = list(range(n_seeds))
    short = max(1, steps // 10)
    if not one_cycle_accepts(family.section, short):
        short += 1

    def run(n: int) -> float:
        schedule = train_settings(family.section, steps=n)
        return cpu_seconds(lambda: family.train_models(family.model_config, task_config(), schedule, seeds, "cpu"))

    run(short)  # warm-up: first-call costs (lazy initialization, allocator growth)
    short_seconds, seconds = run(short), run(steps)
    per_step = (seconds - short_seconds) / (steps - short)
    return Cost(per_step / n_seeds, (seconds - per_step * steps) / n_seeds, seconds / n_seeds)


PER_MODEL_COLUMNS = ["family", "config: steps x batch", "alone: ms/step", "alone: CPU s per model",
                     "batched: seeds", "batched: ms/step per model", "batched: CPU s per model", "alone / batched",
                     "timed: CPU s per model, alone; batched"]


def table_line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def per_model_row(family: Family, steps: int | None) -> list[str]:
    """A family's CPU ms per step and CPU s per model (its fixed part in parentheses) at its config's steps,
    alone and batched, their ratio, and the CPU s per model of the timed calls. ``steps``: the steps to
    time (None: the config's)."""
    settings = DEFAULT_CONFIG[family.section]
    timed_steps = steps or settings["steps"]
    alone, batched = (training_cost(family, n_seeds, timed_steps) for n_seeds in (1, family.batched))
    return [family.label, f"{settings['steps']} x {settings['batch_size']}",
            f"{1000 * alone.per_step:.2f}", f"{alone.at(settings['steps']):.1f} (fixed {alone.fixed:.2f})",
            str(family.batched),
            f"{1000 * batched.per_step:.2f}", f"{batched.at(settings['steps']):.1f} (fixed {batched.fixed:.2f})",
            f"{alone.at(settings['steps']) / batched.at(settings['steps']):.1f}x",
            f"{alone.timed:.2f}; {batched.timed:.2f} at {timed_steps} steps"]


def per_model_section(steps: int | None, seeds: int, transformer_seeds: int) -> str:
    """The per-model table, printed row by row as each family is timed (a full run takes a while)."""
    timed = (f"each timed at {steps} steps (`--steps`) and at a tenth of them, and extrapolated to the config's "
             "steps" if steps else "each timed at its config's steps and at a tenth of them")
    lines = ["## Per trained model, on cpu", "",
             f"CPU seconds (`time.process_time`, one thread) per trained model at `config.yaml`'s settings, {timed}: "
             "CPU s per model = fixed + ms/step x the config's steps; one run each, not a median. Alone: one seed, "
             "which trains beside a twin whose result is dropped (`training.fit`), as a one-seed job does; batched: "
             "that many seeds side by side in one call, its CPU time divided by the seeds.", "",
             table_line(PER_MODEL_COLUMNS), "|---" * len(PER_MODEL_COLUMNS) + "|"]
    print("\n".join(lines), flush=True)
    for family in model_families(seeds, transformer_seeds):
        lines.append(table_line(per_model_row(family, steps)))
        print(lines[-1], flush=True)
    return "\n".join(lines)


SPEED_STEPS = 100  # per timed call: enough that the per-step cost dominates the fixed one (fit apart below)


def minimal_cost(n_seeds: int, steps: int) -> float:
    """CPU ms per seed-step of the minimal stacked rope head at the default head's settings."""
    task, model, train = DEFAULT_CONFIG["task"], DEFAULT_CONFIG["model"], DEFAULT_CONFIG["train"]

    def run(n: int) -> float:
        return cpu_seconds(lambda: train_minimal(n_seeds, task["vocab_size"], model["d_model"], model["rope_base"], n,
                                                 train["batch_size"], (task["train_length_min"], task["train_length_max"]),
                                                 OFFSET, train["lr"]))

    run(steps // 10)  # warm-up
    short, full = run(steps // 10), run(steps)
    return 1000 * (full - short) / (steps - steps // 10) / n_seeds


RATIO_PAIRS = 5  # the rope head and the minimal one, timed in turn: single timings vary by a third under load


def rope_against_minimal(rope: Family, steps: int, pairs: int) -> tuple[list[float], list[float]]:
    """CPU ms per seed-step of the minimal head and of the default rope head at 10 seeds, ``pairs`` times each, in
    turn (minimal, rope, minimal, ...), so that the two timings of a pair ran under the same load."""
    minimal, default = [], []
    for _ in range(pairs):
        minimal.append(minimal_cost(10, steps))
        default.append(1000 * training_cost(rope, rope.batched, steps).per_step)
    return minimal, default


def training_speed_section(steps: int, pairs: int = RATIO_PAIRS) -> str:
    """Every family's CPU ms per seed-step (per step, the fixed cost fitted apart) beside the minimal head's; the
    default rope head's ratio, the budget's figure, as the median of ``pairs`` interleaved pairs."""
    rope, *others = model_families(10, len(DEFAULT_CONFIG["transformer"]["seeds"]))
    minimal, default = rope_against_minimal(rope, steps, pairs)
    reference = statistics.median(minimal)
    ratios = [rope_ms / minimal_ms for rope_ms, minimal_ms in zip(default, minimal)]
    lines = ["## Training: CPU ms per seed-step against the minimal stacked rope head", "",
             f"One thread, {steps} steps timed and {steps // 10} (the difference is the per-step cost), after a "
             "warm-up call. The minimal head (`bench/reference_head.py`) is the default rope head's computation in "
             f"as few ops as it takes: {reference:.3f} ms per seed-step at 10 seeds (the median of {pairs} timings). "
             "The budget: the default rope head at most 1.2x it. The two were timed in turn, "
             f"{pairs} pairs: the rope head's row gives its median time and the median of the pairs' ratios "
             f"(single pairs {min(ratios):.2f}x to {max(ratios):.2f}x); every other row is one timing against the "
             "minimal head's median. The transformer is another model: its ratio is left out.", "",
             table_line(["family", "seeds side by side", "ms per seed-step", "x the minimal rope head"]),
             "|---|---|---|---|",
             table_line([rope.label, str(rope.batched), f"{statistics.median(default):.3f}",
                         f"{statistics.median(ratios):.2f}x"])]
    print("\n".join(lines), flush=True)
    for family in others:
        per_step = 1000 * training_cost(family, family.batched, steps).per_step
        ratio = "" if family.train_models is train_transformers else f"{per_step / reference:.2f}x"
        lines.append(table_line([family.label, str(family.batched), f"{per_step:.3f}", ratio]))
        print(lines[-1], flush=True)
    return "\n".join(lines)


def child_seconds(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of running ``command`` to its end, CPU as the OS counts the finished children."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(command, check=True, cwd=cwd, capture_output=True)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median_child_seconds(command: list[str], cwd: Path, repeats: int = 3) -> tuple[float, float]:
    runs = [child_seconds(command, cwd) for _ in range(repeats)]
    return statistics.median(run[0] for run in runs), statistics.median(run[1] for run in runs)


NOOP_WORKFLOW = """
rule job:
    output: "done"
    script: "job.py"
"""


def snakemake_job_floor(script_body: str) -> tuple[float, float]:
    """(wall, CPU) seconds a one-job Snakemake workflow adds over its own dry run, for a script job whose
    body is ``script_body``: Snakemake's cost of one job, with what the script itself does."""
    with scratch_folder() as folder:
        (folder / "Snakefile").write_text(NOOP_WORKFLOW)
        (folder / "job.py").write_text(script_body + "\nopen(snakemake.output[0], 'w').close()\n")
        snakemake_command = [sys.executable, "-m", "snakemake", "--cores", "1", "--quiet", "all"]
        dry = median_child_seconds(snakemake_command + ["-n", "--forceall"], folder)
        job = median_child_seconds(snakemake_command + ["--forceall"], folder)
    return job[0] - dry[0], job[1] - dry[1]


def job_cost_section(bare: tuple[float, float]) -> str:
    """A job's fixed cost: the imports of each rule's script, and a whole no-op Snakemake job, beside ``bare``, the
    (wall, CPU) seconds of ``import torch`` alone; and Snakemake's own floor for a no-op dry run of the default
    run's size."""
    rows = [("a fresh Python: `import torch`", bare),
            ("a fresh Python: `import torch`, then `runtime.configure_torch(1)`, as every job that runs a model does",
             median_child_seconds([sys.executable, "-c", "from lengthgen.runtime.device import configure_torch; "
                                   "configure_torch(1)"], REPO))]
    for script in ("train.py", "evaluate.py", "analyze.py", "plot.py", "write_report.py"):
        names = [".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
                 for path in lengthgen_files(REPO, REPO / "workflow" / "scripts" / script)
                 if path.suffix == ".py"]  # not the data files a module reads at import (rule_history.yaml)
        command = [sys.executable, "-c", "; ".join(f"import {name}" for name in names) or "pass"]
        rows.append((f"a fresh Python importing what `{script}` imports", median_child_seconds(command, REPO)))
    rows.append(("one Snakemake script job doing nothing (over the dry run)", snakemake_job_floor("")))
    rows.append(("one Snakemake script job importing torch (over the dry run)", snakemake_job_floor("import torch")))
    shape = ", ".join(f"{value} {key}" + (" a job" if key != "jobs" else "") for key, value in DEFAULT_DAG_SHAPE.items())
    rows.append((f"a no-op dry run of a synthetic DAG of the default run's size ({shape}; nothing of lengthgen)",
                 snakemake_dry_run_floor(DEFAULT_DAG_SHAPE)))
    lines = ["## A job's fixed cost", "", "Median of 3, each a fresh process; CPU as the OS counts the finished "
             "processes.", "", table_line(["what", "wall s", "CPU s", "CPU x `import torch`"]), "|---|---|---|---|"]
    lines += [table_line([what, f"{wall:.2f}", f"{cpu:.2f}", f"{cpu / bare[1]:.2f}x"]) for what, (wall, cpu) in rows]
    return "\n".join(lines)


def stage_section(results: Path) -> str:
    """The CPU seconds by stage of the run in ``results``, from the costs in its jobs' logs."""
    runs = run_stages(results)
    every = pd.concat(runs.values())
    if every.empty:
        return (f"## The run by stage\n\nNo job costs in the logs under `{results.relative_to(REPO)}`: run the "
                "pipeline here first (`--pipeline` times one from scratch).")
    training_cpu = every.loc[every.index.str.startswith(TRAINING)]["CPU s"].sum()
    lines = ["## The run by stage", "", f"{every['jobs'].sum()} jobs, {every['CPU s'].sum():.0f} CPU s summed, "
             f"training {100 * training_cpu / every['CPU s'].sum():.0f}% (budget: jobs other than training at most 20%).",
             "", table_line(["run", "stage", "jobs", "wall s", "CPU s", "max RSS MB"]), "|---" * 6 + "|"]
    for run, table in runs.items():
        lines += stage_lines(table, run)
    return "\n".join(lines)


def evaluation_rows(device: str) -> list[dict]:
    """Evaluation of one model at every default length: median time, and memory it adds at its peak."""
    task = DEFAULT_CONFIG["task"]
    frame = eval_set_frame(task["eval_seed"], OFFSET, task["eval_lengths"], task["eval_samples"], task["vocab_size"])
    eval_sets = eval_sets_from_frame(frame)
    rows = []
    for pe in ("rope", "learned"):
        model = training.init_head(head_config(pe), seed=0).to(device).eval()
        before = peak_rss_mb()
        seconds = median_seconds(lambda: accuracy_by_length(model, eval_sets, OFFSET, seed=0), 5)
        added = peak_rss_mb() - before
        rows.append({"what": f"evaluation, {pe}: {len(task['eval_lengths'])} lengths up to "
                             f"{max(task['eval_lengths'])}, {task['eval_samples']} sequences each",
                     "fast": f"{seconds:.3f} s; peak memory +{added:.0f} MB over the process"
                             + (" (CPU side)" if device.startswith("cuda") else ""),
                     "reference": "", "ratio": ""})
    return rows


def snakemake(workdir: Path, *args: str) -> float:
    """Run the workflow in ``workdir``; return the wall seconds."""
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory",
               str(workdir), "--cores", "8", *args]
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def job_costs(logs: Path) -> pd.DataFrame:
    """Every job's cost under ``logs`` (a results folder's ``logs/``, read recursively): the cost line each job writes
    at the end of its log (``lengthgen.runtime.job.read_cost``), one row per job. Columns: stage (the rule, the first path
    part below ``logs/``: ``train_sweep/pe~rope/offset~1.log``, ``report.log``), wall_s, cpu_s, max_rss_mb, and
    torch: whether the job started torch (its log has ``runtime.configure_torch``'s line). A log without a cost (a
    job killed mid-way) is left out."""
    costs = [{"stage": path.relative_to(logs).parts[0].removesuffix(".log"), **cost, "torch": TORCH_STARTED in text}
             for path in sorted(logs.rglob("*.log")) if (cost := read_cost(text := path.read_text()))]
    return pd.DataFrame(costs, columns=["stage", "wall_s", "cpu_s", "max_rss_mb", "torch"])


def stage_table(logs: Path) -> pd.DataFrame:
    """Every job's cost under ``logs`` (``job_costs``) summed by stage. Columns: jobs, wall s (summed over the jobs),
    CPU s (summed), max RSS MB (the largest job's); one row per stage, sorted by CPU s, largest first. Jobs overlap,
    so wall s summed is busy time, not the run's wall time."""
    table = job_costs(logs).groupby("stage").agg(**{
        "jobs": ("cpu_s", "size"), "wall s": ("wall_s", "sum"), "CPU s": ("cpu_s", "sum"), "max RSS MB": ("max_rss_mb", "max")})
    return table.sort_values("CPU s", ascending=False)


class Floor(NamedTuple):
    """The least a run could cost on ``cores`` cores with its training as it is (``run_floor``)."""
    training_cpu: float
    other_jobs: int
    other_torch_jobs: int  # of them, those that started torch
    other_cpu: float  # what the other jobs cost
    other_floor_cpu: float  # what they would cost if they computed nothing
    cores: int

    @property
    def wall_s(self) -> float:
        """Every core busy from the first job to the last, and nothing else running."""
        return (self.training_cpu + self.other_floor_cpu) / self.cores

    @property
    def other_share(self) -> float:
        return self.other_floor_cpu / (self.training_cpu + self.other_floor_cpu)


def run_floor(costs: pd.DataFrame, torch_start_cpu: float, cores: int) -> Floor:
    """A lower bound on a run's jobs (``job_costs``): its training jobs at the CPU they took, every other job at
    ``torch_start_cpu`` (what starting torch costs a fresh Python) if it started torch, else at nothing, and never
    at more than it took. Snakemake's own process counts nothing. What stays above a budget here cannot be brought
    under it by any change to the jobs after training, short of running fewer of them."""
    training = costs["stage"].str.startswith(TRAINING)
    others = costs[~training]
    start = others["torch"].astype(float) * torch_start_cpu
    return Floor(costs.loc[training, "cpu_s"].sum(), len(others), int(others["torch"].sum()), others["cpu_s"].sum(),
                 start.clip(upper=others["cpu_s"]).sum(), cores)


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


def floor_section(results: Path, torch_start_cpu: float, cores: int = 2) -> str:
    """The least the run in ``results`` (with its confirmation runs and robustness points) could cost on ``cores``
    cores with its training as it is (``run_floor``), beside the budgets of issue 26."""
    costs = pd.concat([job_costs(logs) for logs in run_folders(results).values()])
    if costs.empty:
        return "## The least this run could cost\n\nNo job costs in this checkout's logs."
    floor = run_floor(costs, torch_start_cpu, cores)
    return "\n".join([
        "## The least this run could cost", "",
        f"Its {len(costs)} jobs: training {floor.training_cpu:.0f} CPU s as measured; the other {floor.other_jobs} jobs "
        f"{floor.other_cpu:.0f} CPU s, of which starting torch is at least {floor.other_floor_cpu:.0f} "
        f"({floor.other_torch_jobs} jobs that started it, at "
        f"{torch_start_cpu:.2f} CPU s each, `import torch` in a fresh Python). With nothing else, on {cores} cores "
        f"busy every second: at least **{floor.wall_s / 60:.1f} min** of wall (budgets: 20 for the full default run, "
        "6 for the exploratory run alone, 1 for the tiny config), and the "
        f"jobs other than training at least **{100 * floor.other_share:.0f}%** of the jobs' CPU (budget: 20%; "
        f"{100 * floor.other_cpu / (floor.training_cpu + floor.other_cpu):.0f}% as run)."])


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
# The default run's DAG (2026-12-06, ebc2428): 675 jobs, 7079 output files, 9585 inputs, 15368 params.
DEFAULT_DAG_SHAPE = {"jobs": 675, "outputs": 10, "inputs": 14, "params": 23}


def write_synthetic_workflow(folder: Path, shape: dict[str, int]) -> list[str]:
    """``SYNTHETIC_WORKFLOW`` and the source files its first job reads, in ``folder``; the command that runs it at
    this ``shape`` there."""
    (folder / "Snakefile").write_text(SYNTHETIC_WORKFLOW)
    (folder / "source").mkdir()
    for k in range(shape["inputs"]):
        (folder / "source" / str(k)).touch()
    return [sys.executable, "-m", "snakemake", "--cores", "2", "--quiet", "all",
            "--config", *(f"{key}={value}" for key, value in shape.items())]


def snakemake_dry_run_floor(shape: dict[str, int]) -> tuple[float, float]:
    """(wall, CPU) seconds of a no-op dry run of ``SYNTHETIC_WORKFLOW`` of this ``shape``, median of 3, after one
    real run (so that Snakemake reads every output's record, as on a finished run)."""
    with scratch_folder() as folder:
        command = write_synthetic_workflow(folder, shape)
        subprocess.run(command, check=True, cwd=folder, capture_output=True)
        return median_child_seconds(command + ["-n"], folder)


def log_span_seconds(log_text: str) -> float:
    """Seconds from the first to the last timestamp of a Snakemake log: the run's wall time."""
    stamps = [datetime.datetime.strptime(stamp, "%a %b %d %H:%M:%S %Y")
              for stamp in re.findall(r"^\[(\w{3} \w{3} [ \d]\d [\d:]{8} \d{4})\]$", log_text, flags=re.MULTILINE)]
    return (max(stamps) - min(stamps)).total_seconds()


def start_up_seconds(script: str) -> float:
    """Median seconds for a fresh Python to import what one rule's script imports."""
    names = [".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
             for path in lengthgen_files(REPO, REPO / "workflow" / "scripts" / script)]
    command = [sys.executable, "-c", "; ".join(f"import {name}" for name in names) or "pass"]
    return median_seconds(lambda: subprocess.run(command, check=True, cwd=REPO), 3)


@contextmanager
def scratch_folder():
    folder = Path(tempfile.mkdtemp(prefix="lengthgen-bench-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def stage_lines(table: pd.DataFrame, run: str) -> list[str]:
    """Markdown rows of a stage table, the run named in the first column."""
    return [table_line([run, stage, str(int(row["jobs"])), f"{row['wall s']:.0f}", f"{row['CPU s']:.0f}",
                        "" if pd.isna(row["max RSS MB"]) else f"{row['max RSS MB']:.0f}"])
            for stage, row in table.iterrows()]


def pipeline_section(workdir: Path, from_scratch: bool) -> str:
    """The default pipeline in ``workdir`` (from scratch, or as it stands there), split by stage from the costs in
    its jobs' logs; then a no-op and a figures-only rerun there."""
    if from_scratch:
        wall = snakemake(workdir)
        how = "`snakemake --cores 8` from scratch, wall time measured around the call"
    else:  # the run that did most (the newest of those): not a rerun of a few jobs, such as the one below
        logs = [path.read_text() for path in sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"))]
        wall = log_span_seconds(max(reversed(logs), key=lambda text: text.count("\nFinished jobid: ")))
        how = ("the largest run in this checkout, wall time from the first to the last timestamp of that run's "
               "Snakemake log; the stages from every job's latest log, which a later rerun of the job overwrites")
    runs = run_stages(workdir / DEFAULT_CONFIG["results_dir"])
    every = pd.concat(runs.values())
    lines = ["## The default pipeline", "",
             f"{how[0].upper()}{how[1:]}: {wall:.0f} s of wall; {every['jobs'].sum()} jobs with a cost in "
             f"their logs, {every['wall s'].sum():.0f} s of job wall and {every['CPU s'].sum():.0f} CPU s summed. Per "
             "stage (rule): jobs, wall and CPU seconds summed over its jobs, the largest job's peak RSS. Jobs overlap, "
             "so a stage's wall seconds are busy time, not its share of the run's wall time; each job measures its CPU "
             "seconds and peak RSS itself, at its end (lengthgen/runtime/job.py).", "",
             table_line(["run", "stage", "jobs", "wall s", "CPU s", "max RSS MB"]), "|---" * 6 + "|"]
    for run, table in runs.items():
        lines += stage_lines(table, run)
    rows = []
    for script in ("train.py", "evaluate.py", "analyze.py", "plot.py", "write_report.py"):
        rows.append({"what": f"start-up of one {script.removesuffix('.py')} job (imports)",
                     "fast": f"{start_up_seconds(script):.2f} s", "reference": "", "ratio": ""})
    noop = statistics.median(snakemake(workdir, "-n") for _ in range(3))
    rows.append({"what": "no-op rerun, `snakemake -n` with everything up to date", "fast": f"{noop:.1f} s",
                 "reference": "", "ratio": ""})
    # A config file, since `--config figures={dpi: N}` would give the number as text.
    other_dpi = workdir / ".snakemake" / "bench_other_dpi.yaml"
    other_dpi.write_text(yaml.safe_dump({"figures": {"dpi": DEFAULT_CONFIG["figures"]["dpi"] + 1}}))
    figures = snakemake(workdir, "--configfile", str(other_dpi))
    rows.append({"what": "figures-only rerun (figures.dpi changed)", "fast": f"{figures:.1f} s",
                 "reference": "", "ratio": ""})
    if not from_scratch:
        snakemake(workdir)  # the folder's figures back at the config's dpi
    return "\n".join(lines) + "\n\n" + markdown(rows, "Reruns and start-up")


def markdown(rows: list[dict], heading: str) -> str:
    lines = [f"## {heading}", "", "| what | table-based (the pipeline) | reference (per sequence) | ratio |",
             "|---|---|---|---|"]
    lines += [f"| {row['what']} | {row['fast']} | {row['reference']} | {row['ratio']} |" for row in rows]
    return "\n".join(lines)


def load_average() -> str:
    return ", ".join(f"{load:.1f}" for load in os.getloadavg())


def main() -> None:
    start_load = load_average()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", action="store_true",
                        help="also time the default pipeline from scratch in a temporary folder (tens of minutes)")
    parser.add_argument("--last-run", action="store_true",
                        help="instead, split this checkout's run of the default pipeline by stage, from its jobs' "
                             "logs (its wall time: the Snakemake log of the run that ran most jobs), "
                             "and time the reruns here")
    parser.add_argument("--quick", action="store_true", help="fewer steps per timing (a smoke check)")
    parser.add_argument("--per-model", action="store_true",
                        help="also CPU seconds per trained model, per model family, alone and batched (at the "
                             "config's steps: tens of minutes)")
    parser.add_argument("--steps", type=int, help="with --per-model: time every family at this many steps "
                        "(>= 2) instead of its config's, and extrapolate (a quick try)")
    parser.add_argument("--seeds", type=int, default=10, help="with --per-model: seeds of a batch of heads")
    parser.add_argument("--transformer-seeds", type=int, default=len(DEFAULT_CONFIG["transformer"]["seeds"]),
                        help="with --per-model: seeds of a batch of transformers (default: transformer.seeds, as "
                             "one train_transformer job trains them)")
    parser.add_argument("--speed", action="store_true",
                        help="only the speed figures, side by side: each family's ms per seed-step against the "
                             "minimal stacked rope head, a job's fixed cost against import torch, the run by stage")
    parser.add_argument("--output", default=str(REPO / "bench" / "RESULTS.md"))
    args = parser.parse_args()
    if args.steps is not None:
        if args.steps < 2 or not args.per_model:
            parser.error("--steps needs --per-model and at least 2 steps")
        if not all(one_cycle_accepts(section, args.steps) for section in ("train", "linear", "transformer")):
            parser.error(f"--steps {args.steps}: a warmup of one step, where the learning-rate schedule divides "
                         "by zero")
    configure_torch(1)
    sections = [f"# Benchmark\n\nGenerated by `{' '.join(['python bench/benchmark.py', *sys.argv[1:]])}` "
                f"on {datetime.date.today().isoformat()}.\n\n- machine: {machine_description()}\n"
                f"- code: `{code_version(str(REPO), exclude=['results', 'bench'])}`\n"
                f"- {platform.processor() or platform.machine()}; torch threads: {torch.get_num_threads()}; CPU kernels: "
                f"{torch.backends.cpu.get_cpu_capability()}, "
                + ", ".join(f"{name}={os.environ.get(name, 'unset')}" for name in PORTABLE_CPU_ENV)
                + "; every time is a median of repeated runs, except per trained model"]
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    if args.speed:
        devices = []
        bare = median_child_seconds([sys.executable, "-c", "import torch"], REPO)
        results = REPO / DEFAULT_CONFIG["results_dir"]
        for section in (training_speed_section(SPEED_STEPS), job_cost_section(bare), stage_section(results),
                        floor_section(results, bare[1])):
            sections.append(section)
            print(section, flush=True)
    for device in devices:
        evaluation = evaluation_rows(device)  # first: its peak memory is measured against this process's
        rows = training_rows(device, args.quick) + evaluation
        if device == "cpu":
            rows += profile_rows(50 if args.quick else 200)
        sections.append(markdown(rows, f"Per run, on {device}"))
        print(sections[-1], flush=True)
    if args.per_model:
        sections.append(per_model_section(args.steps, args.seeds, args.transformer_seeds))
    if args.last_run:
        sections.append(pipeline_section(REPO, from_scratch=False))
        print(sections[-1], flush=True)
    elif args.pipeline:
        with scratch_folder() as workdir:
            sections.append(pipeline_section(workdir, from_scratch=True))
        print(sections[-1], flush=True)
    # Other work on the machine slows every number here: a load average above its core count is a warning.
    sections.append(f"Load average (1, 5, 15 min) on {os.cpu_count()} cores: {start_load} at the start, "
                    f"{load_average()} at the end.")
    Path(args.output).write_text("\n\n".join(sections) + "\n")


if __name__ == "__main__":
    main()
