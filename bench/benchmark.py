"""How fast lengthgen runs on this machine: prints a table and writes it to bench/RESULTS.md.

    python bench/benchmark.py              # per-run numbers: training, evaluation (about 2 minutes)
    python bench/benchmark.py --pipeline   # also the default pipeline, a no-op rerun and a figures-only rerun
    python bench/benchmark.py --last-run   # the same, from this checkout's largest run (its Snakemake log)

Training is timed on one CPU thread, in this process, for the table-based head that the
pipeline runs and for the plain per-sequence computation (``AttentionHead.reference_predict``,
the head's definition) in the same training loop; their ratio is what the tables buy. Every
time is the median of repeated runs. Where CUDA is present, the per-run numbers are repeated
on the GPU. ``--pipeline`` runs the default config from scratch in a temporary folder and
splits its wall time by what the jobs did, from Snakemake's log.
"""

import argparse
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from lengthgen.jobs import PORTABLE_CPU_ENV

# The CPU kernels the workflow's jobs run (common.smk), set before torch starts; exported values win.
for _name, _value in PORTABLE_CPU_ENV.items():
    os.environ.setdefault(_name, _value)

import torch  # noqa: E402
import yaml  # noqa: E402

from lengthgen import training  # noqa: E402
from lengthgen.config import prepare_config  # noqa: E402
from lengthgen.data import eval_set_frame, eval_sets_from_frame  # noqa: E402
from lengthgen.evaluation import accuracy_by_length  # noqa: E402
from lengthgen.model import AttentionHead, HeadConfig  # noqa: E402
from lengthgen.report import code_version, machine_description  # noqa: E402
from lengthgen.runtime import configure_torch  # noqa: E402
from lengthgen.sources import lengthgen_files  # noqa: E402
from lengthgen.task import TaskConfig  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# The default config as the workflow sees it: defaults filled, derived settings derived.
DEFAULT_CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())
prepare_config(DEFAULT_CONFIG, yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text()))
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


def head_config(pe: str, attention: str = "softmax") -> HeadConfig:
    model = DEFAULT_CONFIG["model"]
    return HeadConfig(DEFAULT_CONFIG["task"]["vocab_size"], model["d_model"], pe, model["max_positions"],
                      model["rope_base"], model["learned_init_std"], attention)


def train_seconds_per_step(pe: str, attention: str, settings: dict, steps: int, device: str, reference: bool,
                           repeats: int) -> float:
    task = DEFAULT_CONFIG["task"]
    config = TaskConfig(task["vocab_size"], OFFSET, task["train_length_min"], task["train_length_max"])
    schedule = training.TrainConfig(steps, settings["batch_size"], settings["lr"], log_every=10**9)
    head = ReferenceHead if reference else AttentionHead

    def run():
        with mock.patch.object(training, "AttentionHead", head):
            training.train_head(head_config(pe, attention), config, schedule, seed=0, device=device)
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    run()  # warm-up
    return median_seconds(run, repeats) / steps


def profile_rows(steps: int) -> list[dict]:
    """Where one rope training step's CPU time goes (torch.profiler, self time per op, summed over
    ``steps`` steps): the ops that take most, and how many op calls a step makes."""
    task = DEFAULT_CONFIG["task"]
    config = TaskConfig(task["vocab_size"], OFFSET, task["train_length_min"], task["train_length_max"])
    settings = DEFAULT_CONFIG["train"]
    schedule = training.TrainConfig(steps, settings["batch_size"], settings["lr"], log_every=10**9)
    training.train_head(head_config("rope"), config, schedule, seed=0, device="cpu")  # warm-up
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
        training.train_head(head_config("rope"), config, schedule, seed=0, device="cpu")
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
        fast = train_seconds_per_step(pe, attention, settings, 200 if quick else 1000, device, False, 3)
        reference = train_seconds_per_step(pe, attention, settings, 50 if quick else 200, device, True, 3)
        rows.append({"what": f"training, {label} ({settings['steps']} steps, batch {settings['batch_size']})",
                     "fast": f"{1000 * fast:.2f} ms/step = {fast * settings['steps']:.2f} s/run",
                     "reference": f"{1000 * reference:.2f} ms/step = {reference * settings['steps']:.1f} s/run",
                     "ratio": f"{reference / fast:.1f}x"})
    return rows


def peak_rss_mb() -> float:
    """This process's peak resident memory so far (Linux VmHWM), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


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


JOB_START = re.compile(r"^\[(?P<time>[^\]]+)\]\n(?:local)?rule (?P<rule>\w+):(?P<body>(?:\n    .*)*)", re.MULTILINE)
JOB_END = re.compile(r"^\[(?P<time>[^\]]+)\]\nFinished jobid: (?P<jobid>\d+) ", re.MULTILINE)
STAGES = {"train": "training", "train_modified": "training", "train_transformer": "training",
          "eval_set": "evaluation", "evaluate": "evaluation", "evaluate_transformer": "evaluation",
          "accuracy_by_length": "analysis", "all_claims": "report", "report": "report"}


# The confirmation runs' copies of the rules are named confirm_<run>_<rule> (workflow/rules/confirm.smk).
CONFIRMATION_RULE = re.compile("^(?:" + "|".join(re.escape(Path(path).stem) + "_"
                                                 for path in DEFAULT_CONFIG["confirmation"]["runs"]) + ")")


def stage(rule: str) -> str:
    """What a job of ``rule`` does: training, evaluation, analysis, figures, report; "confirmation: ..." for
    a confirmation run's copy of it."""
    base = CONFIRMATION_RULE.sub("", rule)  # with no confirmation runs the pattern is empty: rule itself
    name = ("analysis" if base.startswith("analyze_") else "figures" if base.startswith("plot_")
            else STAGES.get(base, "other"))
    return name if base == rule else f"confirmation: {name}"


def parse_time(stamp: str) -> datetime.datetime:
    return datetime.datetime.strptime(stamp, "%a %b %d %H:%M:%S %Y")


def job_seconds(log_text: str) -> dict[str, list[float]]:
    """Wall seconds of every job, by stage, from the timestamps of Snakemake's log."""
    starts = {}
    for match in JOB_START.finditer(log_text):
        jobid = re.search(r"jobid: (\d+)", match["body"])
        if jobid:
            starts[jobid[1]] = (match["rule"], parse_time(match["time"]))
    by_stage = {}
    for match in JOB_END.finditer(log_text):
        if match["jobid"] in starts:
            rule, started = starts[match["jobid"]]
            seconds = (parse_time(match["time"]) - started).total_seconds()
            by_stage.setdefault(stage(rule), []).append(seconds)
    return by_stage


def log_span_seconds(log_text: str) -> float:
    """Seconds from the first to the last timestamp of a Snakemake log: the run's wall time."""
    stamps = [parse_time(stamp) for stamp in re.findall(r"^\[(\w{3} \w{3} [ \d]\d [\d:]{8} \d{4})\]$", log_text,
                                                       flags=re.MULTILINE)]
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


def pipeline_rows(workdir: Path, from_scratch: bool) -> list[dict]:
    """The default pipeline in ``workdir``, split by stage (from scratch, or the largest run there as its log
    shows it); then a no-op and a figures-only rerun there."""
    if from_scratch:
        wall = snakemake(workdir)
    logs = [path.read_text() for path in sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"))]
    if from_scratch:
        log = logs[-1]
    else:  # the run that did most (the newest of those): not a rerun of a few jobs, such as the one below
        log = max(reversed(logs), key=lambda text: len(JOB_END.findall(text)))
        wall = log_span_seconds(log)
    by_stage = job_seconds(log)
    busy = sum(sum(times) for times in by_stage.values())
    rows = [{"what": "default pipeline, `snakemake --cores 8`, " + ("from scratch" if from_scratch else
                                                                   "its largest run in this checkout"),
             "fast": f"{wall:.0f} s wall ({sum(map(len, by_stage.values()))} jobs)", "reference": "", "ratio": ""}]
    # Jobs overlap (8 at once on fewer cores), so each stage's share of the summed job time says how much
    # of the wall time it took.
    for name, times in sorted(by_stage.items()):
        rows.append({"what": f"  {name} jobs", "fast": f"{len(times)} jobs, {sum(times) / busy:.0%} of job time "
                     f"= {wall * sum(times) / busy:.0f} s of wall ({statistics.mean(times):.1f} s each)",
                     "reference": "", "ratio": ""})
    for script in ("train.py", "evaluate.py", "analyze_prop1.py", "plot_base.py", "write_report.py"):
        rows.append({"what": f"  start-up of one {script.removesuffix('.py')} job (imports)",
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
    return rows


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
                        help="instead, split this checkout's largest run of the default pipeline (the one that ran "
                             "most jobs) by stage, from its log, and time the reruns here")
    parser.add_argument("--quick", action="store_true", help="fewer steps per timing (a smoke check)")
    parser.add_argument("--output", default=str(REPO / "bench" / "RESULTS.md"))
    args = parser.parse_args()
    configure_torch(1)
    sections = [f"# Benchmark\n\nGenerated by `{' '.join(['python bench/benchmark.py', *sys.argv[1:]])}` "
                f"on {datetime.date.today().isoformat()}.\n\n- machine: {machine_description()}\n"
                f"- code: `{code_version(str(REPO), exclude=['results', 'bench'])}`\n"
                f"- {platform.processor() or platform.machine()}; torch threads: {torch.get_num_threads()}; CPU kernels: "
                f"{torch.backends.cpu.get_cpu_capability()}, "
                + ", ".join(f"{name}={os.environ[name]}" for name in PORTABLE_CPU_ENV)
                + "; every time is a median of repeated runs"]
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for device in devices:
        evaluation = evaluation_rows(device)  # first: its peak memory is measured against this process's
        rows = training_rows(device, args.quick) + evaluation
        if device == "cpu":
            rows += profile_rows(50 if args.quick else 200)
        sections.append(markdown(rows, f"Per run, on {device}"))
        print(sections[-1], flush=True)
    if args.last_run:
        sections.append(markdown(pipeline_rows(REPO, from_scratch=False), "The default pipeline"))
        print(sections[-1], flush=True)
    elif args.pipeline:
        with scratch_folder() as workdir:
            sections.append(markdown(pipeline_rows(workdir, from_scratch=True), "The default pipeline"))
        print(sections[-1], flush=True)
    # Other work on the machine slows every number here: a load average above its core count is a warning.
    sections.append(f"Load average (1, 5, 15 min) on {os.cpu_count()} cores: {start_load} at the start, "
                    f"{load_average()} at the end.")
    Path(args.output).write_text("\n\n".join(sections) + "\n")


if __name__ == "__main__":
    main()
