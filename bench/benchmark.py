"""How fast lengthgen runs on this machine: prints a table and writes it to bench/RESULTS.md.

    python bench/benchmark.py              # per-run numbers: training, evaluation (about 2 minutes)
    python bench/benchmark.py --pipeline   # also the default pipeline, a no-op rerun and a figures-only rerun
    python bench/benchmark.py --last-run   # the same, for the run in this checkout (the costs in its jobs' logs)
    python bench/benchmark.py --per-model  # also CPU seconds per trained model, per family, alone and batched
    python bench/benchmark.py --per-model --steps 20 --quick --output /tmp/bench.md   # a quick try of it
    python bench/benchmark.py --speed      # only the five speed ratios, each side by side (about 20 minutes)

Training is timed on one CPU thread, in this process, for the table-based head that the
pipeline runs and for the plain per-sequence computation (``AttentionHead.reference_predict``,
the head's definition) in the same training loop; their ratio is what the tables buy. Every
time is the median of repeated runs. A lone seed trains beside a twin whose result is dropped
(``training.fit``), so "one seed" here costs what a one-seed job costs. Where CUDA is present,
the per-run numbers are repeated on the GPU. ``--pipeline`` runs the default config from scratch
in a temporary folder and splits its jobs by stage (rule): jobs, wall and CPU seconds, peak memory,
from the cost every job writes as the last line of its log (``<results>/logs/<rule>/...log``; lengthgen/runtime/job.py).

``--per-model`` adds CPU seconds (``time.process_time``) per trained model of every model family the pipeline trains
(the rope, learned, randomized_rope, randomized_learned, fire, sinusoidal, nope, alibi, alibi_learned, t5,
linear-attention and log-length heads; the transformer), alone (one seed) and with a batch of seeds side by side
(``--seeds``, 10; ``--transformer-seeds``, 3 as in the pipeline's transformer jobs), on the CPU. Each is timed once,
in this process after an untimed warm-up call, at its config's steps (or at ``--steps``, for a quick try) and at a
tenth of them: the difference gives the cost per step, the rest the fixed cost per model (init, the range-fit check),
and the two give the cost at the config's steps.

``--speed`` prints the five speed ratios, each a cost over a yardstick measured beside it in the same run, with its
goal, met or missed and by how much (``speed_ratios.py``): every head family's CPU ms per seed-step over the minimal
stacked rope head's (``reference_head.py``, on the same kernels; the median of interleaved pairs), and for each one
missed the ops that take most of its step, profiled (what holds it); the jobs after training as a share of all jobs'
CPU (from the cost lines of ``--results``, a finished run, or else of the tiny run it makes); the cheapest job that
starts torch, doing no work, over a bare ``import torch``; a no-op dry run of the tiny run over Snakemake's own on a
synthetic DAG of its size; and the tiny config's wall time from scratch over its floor (training as run, every other
job at what importing its modules takes, on ``--cores``) (``workflow_speed.py``).
"""

import argparse
import dataclasses
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple
from unittest import mock

from lengthgen.runtime.job import PORTABLE_CPU_ENV, peak_rss_mb, run_as_jobs_run

# As the default config's jobs run (cpu_kernels: native), set before torch starts; export
# LENGTHGEN_BENCH_CPU_KERNELS=portable to time the portable kernels.
run_as_jobs_run(os.environ.get("LENGTHGEN_BENCH_CPU_KERNELS", "native"))

import pandas as pd  # noqa: E402
import torch  # noqa: E402
import yaml  # noqa: E402

from lengthgen.training import loop as training  # noqa: E402
from lengthgen.pipeline.config import prepare_config  # noqa: E402
from lengthgen.data import eval_set_frame, eval_sets_from_frame  # noqa: E402
from lengthgen.evaluation import accuracy_by_length  # noqa: E402
from lengthgen.models.encodings.randomized import noise_max_length_of  # noqa: E402
from lengthgen.models.head import AttentionHead, HeadConfig  # noqa: E402
from lengthgen.report.provenance import code_version, machine_description  # noqa: E402
from lengthgen.runtime.device import configure_torch  # noqa: E402
from lengthgen.task import TaskConfig  # noqa: E402
from lengthgen.models.transformer import TransformerConfig  # noqa: E402
from lengthgen.training.loop import train_transformers  # noqa: E402
from reference_head import train_minimal, train_minimal_randomized  # noqa: E402
from run_records import all_job_costs, log_span_seconds, run_stages  # noqa: E402
from speed_ratios import Ratio, paired_ratio, ratio_table  # noqa: E402
from workflow_speed import (REPO, child_seconds, fixed_cost_ratio, import_command, scratch_folder,  # noqa: E402
                            script_modules, share_after_training_ratio, snakemake, stage_lines, stage_section,
                            table_line, tiny_run)

# The default config as the workflow sees it: defaults filled, derived settings derived.
DEFAULT_CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())
prepare_config(DEFAULT_CONFIG, REPO / "workflow" / "schemas" / "config.schema.yaml")
OFFSET = 2  # one offset stands for all: the cost does not depend on it


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
    """Where one rope training step's CPU time goes (torch.profiler, self time per op, per step): the ops that take
    most, and how many op calls a step makes."""
    op_times = step_op_times(Family("rope head", training.train_heads, head_config("rope"), "train", 1), steps)
    total = sum(us for _, us in op_times.values())
    calls = sum(count for count, _ in op_times.values())
    rows = [{"what": f"profile, rope training: {calls:.0f} op calls per step, "
                     f"{total / 1000:.2f} ms of op self time per step (profiler overhead included)",
             "fast": "", "reference": "", "ratio": ""}]
    for op, (count, us) in sorted(op_times.items(), key=lambda item: -item[1][1])[:10]:
        rows.append({"what": f"  `{op}`", "reference": "", "ratio": "",
                     "fast": f"{100 * us / total:.0f}% ({count:.0f} calls/step, {us / count:.0f} us each)"})
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
    position ids per sequence (randomized_rope, randomized_learned), one whose bias is an MLP (fire) and the other
    encodings of the variants (sinusoidal, nope, alibi, alibi_learned, t5), the linear-attention
    control and the log-length head (common.smk's MODIFIED_HEADS), and the transformer."""
    train_length_max = DEFAULT_CONFIG["task"]["train_length_max"]
    heads = [("rope head", head_config("rope"), "train"),
             ("learned head", head_config("learned"), "train"),
             ("randomized_rope head (variant)", head_config("randomized_rope"), "train"),
             ("randomized_learned head (variant)", head_config("randomized_learned"), "train"),
             ("fire head (variant)", head_config("fire"), "train"),
             *((f"{pe} head (variant)", head_config(pe), "train") for pe in ("sinusoidal", "nope", "alibi",
                                                                            "alibi_learned", "t5")),
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


def short_call_steps(section: str, steps: int) -> int:
    """The steps of the short call whose cost a call at ``steps`` is measured against: a tenth of them, at least one,
    one more where the schedule refuses that many (``one_cycle_accepts``)."""
    short = max(1, steps // 10)
    return short if one_cycle_accepts(section, short) else short + 1


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
    short = short_call_steps(family.section, steps)

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


# Per timed call. The per-step cost is the difference of two calls, so the noise of each call's fixed cost (init, the
# range-fit check) lands on it divided by the steps between them: at 100 a pair's rope ratio ranged 0.32x-0.90x.
SPEED_STEPS = 300


def minimal_cost(n_seeds: int, steps: int, pe: str = "rope") -> float:
    """CPU ms per seed-step of the minimal stacked head of encoding ``pe`` (rope, the yardstick, or a randomized one:
    ``RANDOMIZED_ENCODINGS``) at the default head's settings."""
    task, model, train = DEFAULT_CONFIG["task"], DEFAULT_CONFIG["model"], DEFAULT_CONFIG["train"]
    shape = (task["vocab_size"], model["d_model"])
    schedule = (train["batch_size"], (task["train_length_min"], task["train_length_max"]), OFFSET, train["lr"])

    def train_steps(n: int) -> None:
        if pe == "rope":
            train_minimal(n_seeds, *shape, model["rope_base"], n, *schedule)
        else:
            train_minimal_randomized(pe, n_seeds, *shape, model["rope_base"], noise_max_length_of(None), n, *schedule)

    def run(n: int) -> float:
        return cpu_seconds(lambda: train_steps(n))

    run(steps // 10)  # warm-up
    short, full = run(steps // 10), run(steps)
    return 1000 * (full - short) / (steps - steps // 10) / n_seeds


RATIO_PAIRS = 5  # each head family and the minimal head, timed in turn: single timings vary by a third under load
# The encodings whose ids are drawn per sequence: their keys share no table, so each has a minimal head of its own
# shape besides the yardstick (``reference_head.py``), timed in the same pairs: what their own arithmetic costs.
RANDOMIZED_ENCODINGS = ("randomized_rope", "randomized_learned")


class Pairs(NamedTuple):
    """CPU ms per seed-step timed in turn, pair by pair: the minimal rope head, the family, and the minimal head of
    the family's own shape where it has one (``RANDOMIZED_ENCODINGS``; else empty)."""

    minimal: list[float]
    costs: list[float]
    own_shape: list[float]


def paired_with_minimal(family: Family, steps: int, pairs: int) -> Pairs:
    """CPU ms per seed-step of the minimal head and of ``family``'s heads at 10 seeds, ``pairs`` times each, in turn
    (minimal, family, minimal, ...), so that the timings of a pair ran under the same load."""
    pe = family.model_config.pe
    timed = Pairs([], [], [])
    for _ in range(pairs):
        timed.minimal.append(minimal_cost(10, steps))
        timed.costs.append(1000 * training_cost(family, family.batched, steps).per_step)
        if pe in RANDOMIZED_ENCODINGS:
            timed.own_shape.append(minimal_cost(10, steps, pe))
    return timed


# The goals of a single head's training step over the minimal stacked head's: half of it for every single head, the
# step written for its shape; at most its cost for the randomized variants, whose keys have no shared table (their
# position ids are drawn per sequence). The transformer is another model, with no goal.
HEAD_GOAL, RANDOMIZED_HEAD_GOAL = 0.5, 1.0
NO_TRAINING_GOAL = "none (another model)"


def training_goal(family: Family) -> float | None:
    if family.train_models is train_transformers:
        return None
    return RANDOMIZED_HEAD_GOAL if family.model_config.pe.startswith("randomized") else HEAD_GOAL


def family_ratio(family: Family, ratio: float, basis: str) -> Ratio:
    return Ratio(f"training, {family.label}", ratio, training_goal(family), basis, no_goal=NO_TRAINING_GOAL)


PROFILED_STEPS = 100  # a profiled call's steps, less those of a call of a tenth of them: the per-step op times
HOLDING_OPS = 5  # the ops named for each missed ratio


def step_op_times(family: Family, steps: int = PROFILED_STEPS) -> dict[str, tuple[float, float]]:
    """{op: (calls a step, self CPU us a step)} of ``family``'s training at its batched seeds (torch.profiler, its
    overhead included): a call at ``steps`` less one at a tenth of them, so that init and the range-fit check cancel."""
    seeds = list(range(family.batched))

    def profiled(n: int) -> dict[str, tuple[int, float]]:
        schedule = train_settings(family.section, steps=n, log_every=10**9)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
            family.train_models(family.model_config, task_config(), schedule, seeds, "cpu")
        return {event.key: (event.count, event.self_cpu_time_total) for event in profiler.key_averages()}

    short_steps = short_call_steps(family.section, steps)
    profiled(short_steps)  # warm-up
    short, full = profiled(short_steps), profiled(steps)
    timed = steps - short_steps
    per_step = {}
    for op, (count, us) in full.items():
        short_count, short_us = short.get(op, (0, 0.0))
        if count > short_count:  # an op of the steps, not only of init and the range-fit check
            per_step[op] = ((count - short_count) / timed, (us - short_us) / timed)
    return per_step


def what_holds_it(family: Family) -> str:
    """The ops that take most of a training step of ``family``, with the op calls a step makes: what a missed ratio
    is made of."""
    op_times = step_op_times(family)
    total = sum(us for _, us in op_times.values())
    largest = sorted(op_times.items(), key=lambda item: -item[1][1])[:HOLDING_OPS]
    return (f"{sum(count for count, _ in op_times.values()):.0f} op calls a step; "
            + ", ".join(f"`{op}` {100 * us / total:.0f}%" for op, (_, us) in largest)
            + f" of its {total / 1000:.2f} ms of op self time")


def training_speed_section(steps: int, pairs: int = RATIO_PAIRS) -> tuple[str, list[Ratio]]:
    """Every family's CPU ms per seed-step (per step, the fixed cost fitted apart) and each head family's ratio to the
    minimal head's, the median of ``pairs`` interleaved pairs of the two. The transformer is another model: one
    timing, no ratio."""
    lines = ["## Training: CPU ms per seed-step against the minimal stacked rope head", "",
             f"One thread, {steps} steps timed and {steps // 10} (the difference is the per-step cost), after a "
             f"warm-up call. Each head family is timed in {pairs} pairs with the minimal head (`bench/reference_head.py`, "
             "the default rope head's computation in as few ops as it takes), in turn, so that the two timings of a "
             "pair ran under one load; its ratio is the median of the pairs' ratios. The randomized variants' pairs "
             "also time a minimal head of their own shape (the same reference, for their encoding): the last column.",
             "", table_line(["family", "seeds side by side", "ms per seed-step", "minimal head: ms per seed-step",
                             "x the minimal rope head", "single pairs", "x a minimal head of its own shape"]),
             "|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    ratios, head_families, own_shape_ratios = [], [], []
    for family in model_families(10, len(DEFAULT_CONFIG["transformer"]["seeds"])):
        if family.train_models is train_transformers:
            per_step = 1000 * training_cost(family, family.batched, steps).per_step
            cells = [family.label, str(family.batched), f"{per_step:.3f}", "", "", "", ""]
        else:
            minimal, costs, own_shape = paired_with_minimal(family, steps, pairs)
            pair_ratios = [cost / yardstick for cost, yardstick in zip(costs, minimal)]
            head_families.append(family)
            ratios.append(family_ratio(family, paired_ratio(costs, minimal),
                                       f"{statistics.median(costs):.3f} over {statistics.median(minimal):.3f} CPU ms "
                                       f"per seed-step at {family.batched} seeds; median of {pairs} interleaved pairs"))
            cells = [family.label, str(family.batched), f"{statistics.median(costs):.3f}",
                     f"{statistics.median(minimal):.3f}", ratios[-1].shown(ratios[-1].value),
                     f"{min(pair_ratios):.2f}x to {max(pair_ratios):.2f}x"]
            if own_shape:
                own_shape_ratios.append(own_shape_ratio(family, costs, own_shape))
            cells.append(own_shape_ratios[-1].shown(own_shape_ratios[-1].value) if own_shape else "")
        lines.append(table_line(cells))
        print(lines[-1], flush=True)
    lines += holding_lines([(family, ratio) for family, ratio in zip(head_families, ratios)
                            if ratio.value > ratio.goal])
    return "\n".join(lines), ratios + own_shape_ratios


def own_shape_ratio(family: Family, costs: list[float], own_shape: list[float]) -> Ratio:
    """A randomized family's step over a minimal head of its own shape, timed in the same pairs: no goal of its own
    (the goal is against the rope head); it says how much of the cost is the family's own arithmetic."""
    return Ratio(f"training, {family.label}, over a minimal head of its own shape", paired_ratio(costs, own_shape),
                 None, f"{statistics.median(costs):.3f} over {statistics.median(own_shape):.3f} CPU ms per seed-step "
                       f"at {family.batched} seeds; median of {len(costs)} interleaved pairs",
                 no_goal="none (the goal is against the minimal rope head)")


def holding_lines(missed: list[tuple[Family, Ratio]]) -> list[str]:
    """For each missed training ratio, by how much and what holds it: its step's largest ops, profiled."""
    if not missed:
        return []
    lines = ["", "What holds each missed ratio: the ops of its step that take the most self CPU (torch.profiler, "
             f"{PROFILED_STEPS} steps less {PROFILED_STEPS // 10}, 10 seeds).", ""]
    for family, ratio in missed:
        lines.append(f"- {ratio.what}: {ratio.verdict()}; {what_holds_it(family)}")
        print(lines[-1], flush=True)
    return lines


def speed_sections(results: Path | None, cores: int) -> list[str]:
    """The five speed ratios, each measured side by side (printed as each is measured), their sections, and a table
    of every ratio against its goal. ``results``: a finished run's results folder for the share of the jobs after
    training (None: the tiny run's)."""
    training_section, ratios = training_speed_section(SPEED_STEPS)
    sections = [training_section]
    with scratch_folder() as workdir:
        tiny_sections, (share, dry_run, tiny_wall) = tiny_run(workdir, cores, DEFAULT_CONFIG["results_dir"])
    for section in tiny_sections:
        print(section, flush=True)
    if results is not None:
        share = share_after_training_ratio(all_job_costs(results), f"the run in `{results}`")
        sections.append(stage_section(results, f"The run in `{results}` by stage"))
    ratios += [share, fixed_cost_ratio(), dry_run, tiny_wall]
    summary = "## The speed ratios\n\n" + ratio_table(ratios)
    print(summary, flush=True)
    return [summary, *sections, *tiny_sections]


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
        command = import_command(script_modules(script))
        cpu = statistics.median(child_seconds(command, REPO)[1] for _ in range(3))
        rows.append({"what": f"start-up of one {script.removesuffix('.py')} job (its imports, a fresh Python)",
                     "fast": f"{cpu:.2f} CPU s", "reference": "", "ratio": ""})
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
                        help="only the five speed ratios, each a cost over a yardstick timed beside it, with its goal")
    parser.add_argument("--results", help="with --speed: a finished run's results folder, whose jobs' cost lines give "
                        "the share of the jobs after training (default: the tiny run --speed makes)")
    parser.add_argument("--cores", type=int, default=2, help="with --speed: the cores the tiny run is given")
    parser.add_argument("--output", default=str(REPO / "bench" / "RESULTS.md"))
    args = parser.parse_args()
    if args.steps is not None:
        if args.steps < 2 or not args.per_model:
            parser.error("--steps needs --per-model and at least 2 steps")
        if not all(one_cycle_accepts(section, args.steps) for section in ("train", "linear", "transformer")):
            parser.error(f"--steps {args.steps}: a warmup of one step, where the learning-rate schedule divides "
                         "by zero")
    configure_torch(1)
    sections = [f"# Benchmark\n\nGenerated by `{' '.join(['python bench/benchmark.py', *sys.argv[1:]])}`."
                f"\n\n- machine: {machine_description()}\n"
                f"- code: `{code_version(str(REPO), exclude=['results', 'bench'])}`\n"
                f"- {platform.processor() or platform.machine()}; torch threads: {torch.get_num_threads()}; CPU kernels: "
                f"{torch.backends.cpu.get_cpu_capability()}, "
                + ", ".join(f"{name}={os.environ.get(name, 'unset')}" for name in PORTABLE_CPU_ENV)
                + "; every time is a median of repeated runs, except per trained model"]
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    if args.speed:
        devices = []
        sections += speed_sections(Path(args.results) if args.results else None, args.cores)
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
