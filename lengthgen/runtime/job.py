"""What every workflow job does first: log to its rule's log file, and write its cost there at exit; and the
environment jobs run in.

Jobs that run a model also call ``runtime.configure_torch(threads)``; this module
does not import torch, so that jobs which only read tables start fast.
"""

import atexit
import logging
import os
import re
import resource
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

# The CPU kernels jobs run, the config's `cpu_kernels` (docs/reproducibility.md). torch reads these variables
# before its first kernel, so a job cannot choose for itself: the workflow sets them for its jobs (common.smk).
# - portable: the same bits on any x86-64 CPU: MKL's conditional numerical reproducibility in its SSE2 code
#   path, and ATen's kernels without AVX2/AVX-512 vectorization. Left to themselves both pick their code
#   path by the CPU's instruction set, so an AVX2 machine trains other weights than an AVX-512 one.
# - native: the kernels the CPU offers (AVX2, AVX-512), about twice as fast per training step: ATen's own
#   choice (no ATEN_CPU_CAPABILITY), MKL's AUTO branch in its reproducible mode, so a run still repeats bit
#   for bit on the same CPU model.
PORTABLE_CPU_ENV = {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default"}
NATIVE_CPU_ENV = {"MKL_CBWR": "AUTO"}
CPU_KERNELS = ("native", "portable")


def kernel_variables(cpu_kernels: str) -> dict[str, str | None]:
    """The value of each variable of PORTABLE_CPU_ENV that makes torch run ``cpu_kernels`` (None: unset)."""
    if cpu_kernels not in CPU_KERNELS:
        raise ValueError(f"cpu_kernels: {cpu_kernels!r} is not one of {', '.join(CPU_KERNELS)}")
    chosen = PORTABLE_CPU_ENV if cpu_kernels == "portable" else NATIVE_CPU_ENV
    return {name: chosen.get(name) for name in PORTABLE_CPU_ENV}


# The choice use_cpu_kernels made in this process (a process, not its environment: a child process that starts
# a workflow of its own may choose again).
_CHOSEN: dict[str, str] = {}


def use_cpu_kernels(cpu_kernels: str) -> None:
    """Make this process's jobs run ``cpu_kernels``, whatever the environment held before: the config is the one
    switch. The confirmation runs and robustness points are modules of the same workflow process, so their jobs
    share one environment: a second, different choice is refused."""
    variables = kernel_variables(cpu_kernels)
    chosen = _CHOSEN.setdefault("cpu_kernels", cpu_kernels)
    if chosen != cpu_kernels:
        raise ValueError(f"cpu_kernels: one workflow runs one kind of CPU kernels, and this one already runs {chosen}; "
                         f"a config layered over it (confirmation.runs, robustness.points) asks for {cpu_kernels}")
    for name, value in variables.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


# glibc's allocator gives a large block (above a threshold that grows to at most 32 MB) its own pages, and returns
# them on free, so a training step's tensors are faulted in afresh at every step: in one randomized_learned training
# process, 1.7 million page faults and a fifth of its CPU in the kernel. Above these thresholds freed memory is kept
# and reused (2.5-3.1 -> 0.3 sys CPU-s there; the same weights; peak memory up to a quarter higher, an evaluated
# transformer's 615 -> 755 MB). glibc reads them when a process starts, so the workflow sets them for its jobs.
KEEP_FREED_MEMORY_ENV = {"MALLOC_MMAP_THRESHOLD_": str(2**30), "MALLOC_TRIM_THRESHOLD_": str(2**30)}


def keep_freed_memory() -> None:
    """Make this process's jobs keep and reuse freed memory (``KEEP_FREED_MEMORY_ENV``), unless the environment
    already sets a variable of it (a user's own tuning wins)."""
    for name, value in KEEP_FREED_MEMORY_ENV.items():
        os.environ.setdefault(name, value)


def run_as_jobs_run(cpu_kernels: str) -> None:
    """Make this process, which times training in itself (the benches), run as the workflow's jobs do: ``cpu_kernels``,
    and the allocator keeping freed memory. glibc reads its settings only as a process starts, so where one is unset
    the process starts again with it (without it a default-run training step spends about a third of its CPU
    faulting in pages afresh, and a timing would not be a job's)."""
    use_cpu_kernels(cpu_kernels)
    if not KEEP_FREED_MEMORY_ENV.keys() <= os.environ.keys():
        keep_freed_memory()
        os.execv(sys.executable, [sys.executable, *sys.argv])


def start_job(log_path: str) -> "Job":
    """Send logging and stderr to ``log_path``. The job writes its exit records there (``Job.write_exit_records``)
    when it ends: at ``Job.finish``, which a job that succeeds ends with, or as Python exits."""
    log_file = open(log_path, "a", buffering=1)
    sys.stderr = log_file
    logging.basicConfig(stream=log_file, level=logging.INFO, format="%(asctime)s %(name)s %(message)s", force=True)
    job = Job(log_file)
    atexit.register(job.write_exit_records)
    return job


@dataclass(frozen=True)
class Job:
    """The workflow job this process runs: its log."""

    log_file: TextIO

    def write_exit_records(self) -> None:
        """The lengthgen files the job loaded (where ``RECORD_MODULES`` is set), then its cost (``record_cost``)."""
        if os.environ.get(RECORD_MODULES):
            record_modules(self.log_file)
        record_cost(self.log_file)

    def finish(self) -> None:
        """End the job, its outputs written: write its exit records, flush its log, and leave without the interpreter's
        teardown. Freeing every object of a process that imported torch costs about half a CPU second (some 260
        CPU-s of a default run), and a job's outputs need none of it: their files are closed
        (``tables.write_table`` renames a closed file; ``torch.save`` and matplotlib's ``savefig`` close theirs).
        A job that fails raises before this, and exits as Python does, with its traceback and status."""
        atexit.unregister(self.write_exit_records)
        self.write_exit_records()
        logging.shutdown()
        sys.stdout.flush()
        os._exit(0)


# A job's cost, the last line of its log, read by bench/benchmark.py: "cost: wall_s=12.31 cpu_s=11.02 max_rss_mb=812.4".
# The job measures itself at exit. Snakemake's `benchmark:` sampled it from outside instead (every 0.5 s, then every
# 30 s past 15 s), so it missed the CPU after the last sample, and each sample's read of a torch process's memory
# map cost Snakemake's own process about 10 ms of CPU.
COST = "cost: "


def record_cost(log_file) -> None:
    """Write this process's wall seconds since it started, CPU seconds (user and system, its children's included)
    and peak resident memory to ``log_file``."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(part.ru_utime + part.ru_stime for part in usage)
    log_file.write(f"{COST}wall_s={process_age_seconds():.2f} cpu_s={cpu:.2f} max_rss_mb={peak_rss_mb():.1f}\n")
    log_file.flush()


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB: Linux's VmHWM; NaN where there is none. Not getrusage's
    ru_maxrss, which Linux carries over an exec from the process that forked it: a job would report Snakemake's
    own memory (some 235 MB) if that is more than its own."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return float("nan")
    return next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM:")), float("nan"))


COST_LINE = re.compile(rf"^{COST}wall_s=(\S+) cpu_s=(\S+) max_rss_mb=(\S+)$", re.MULTILINE)


def read_cost(log_text: str) -> dict[str, float] | None:
    """The last cost line of a job's log (``record_cost``) as {wall_s, cpu_s, max_rss_mb}; None if it has none."""
    lines = COST_LINE.findall(log_text)
    return dict(zip(("wall_s", "cpu_s", "max_rss_mb"), map(float, lines[-1]))) if lines else None


def process_age_seconds() -> float:
    """Seconds since this process started, from Linux's /proc; NaN where there is none."""
    try:
        # Field 22 of /proc/self/stat, counted after the command name (which may hold spaces), in clock ticks.
        start_ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except OSError:
        return float("nan")
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


# Set (to anything) in a job's environment, it makes the job write every lengthgen file it loaded to its log at
# exit, one "loaded: <path>" line each: the provenance test checks each is among the job's inputs.
RECORD_MODULES = "LENGTHGEN_RECORD_MODULES"


def record_modules(log_file) -> None:
    files = sorted({module.__file__ for name, module in list(sys.modules.items())
                    if (name == "lengthgen" or name.startswith("lengthgen.")) and getattr(module, "__file__", None)})
    log_file.write("".join(f"loaded: {path}\n" for path in files))
    log_file.flush()
