"""The cost every job writes to its log at exit (lengthgen/runtime/job.py), which bench/benchmark.py sums by stage."""

import subprocess
import sys
import time

from lengthgen.runtime.job import read_cost

# A job that logs, then burns CPU for half a second, holds 200 MB, and sleeps for half a second.
JOB = """
import sys, time
from lengthgen.runtime.job import start_job
start_job(sys.argv[1])
start = time.process_time()
while time.process_time() - start < 0.5:
    pass
block = bytearray(200 * 2**20)
time.sleep(0.5)
"""


def test_a_job_writes_what_it_cost_as_the_last_line_of_its_log(tmp_path):
    log = tmp_path / "job.log"
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", JOB, str(log)], check=True)
    lifetime = time.monotonic() - started
    cost = read_cost(log.read_text())
    assert log.read_text().splitlines()[-1].startswith("cost: ")
    assert 0.5 <= cost["cpu_s"] < 0.5 + 2.0  # the loop, and the interpreter's start and exit
    assert cost["cpu_s"] + 0.4 <= cost["wall_s"] <= lifetime + 0.05  # the sleep is wall, not CPU; a clock tick
    assert 200 <= cost["max_rss_mb"] < 300  # the block and the interpreter: not the memory of the test process


def test_a_log_without_a_cost_line_has_no_cost():
    assert read_cost("2026-12-05 08:00:00,000 root started\nTraceback (most recent call last):\n") is None


def run_job(tmp_path, body: str) -> tuple[int, str]:
    """Run a job that starts with ``start_job`` and then does ``body``; (its exit status, its log)."""
    log = tmp_path / "job.log"
    script = f"import sys\nfrom lengthgen.runtime.job import start_job\njob = start_job(sys.argv[1])\n{body}\n"
    status = subprocess.run([sys.executable, "-c", script, str(log)]).returncode
    return status, log.read_text()


def test_a_job_that_finishes_writes_its_cost_and_leaves_without_the_teardown(tmp_path):
    marker = tmp_path / "teardown_ran"
    status, log = run_job(tmp_path, f"import atexit\natexit.register(open, {str(marker)!r}, 'w')\njob.finish()")
    assert status == 0
    assert log.splitlines()[-1].startswith("cost: ") and log.count("cost: ") == 1
    assert not marker.exists()  # Python's exit handlers and teardown did not run


def test_a_job_that_fails_exits_with_its_error_and_still_writes_its_cost(tmp_path):
    status, log = run_job(tmp_path, "raise ValueError('a bad table')\njob.finish()")
    assert status == 1
    assert "ValueError: a bad table" in log and log.splitlines()[-1].startswith("cost: ")
