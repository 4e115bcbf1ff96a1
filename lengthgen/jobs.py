"""What every workflow job does first: log to its rule's log file; and the environment jobs run in.

Jobs that run a model also call ``runtime.configure_torch(threads)``; this module
does not import torch, so that jobs which only read tables start fast.
"""

import logging
import sys

# CPU kernels that give the same bits on any x86-64 CPU: MKL's conditional numerical reproducibility
# in its SSE2 code path, and ATen's kernels without AVX2/AVX-512 vectorization. Left to themselves
# both pick their code path by the CPU's instruction set, so a run on an AVX2 machine gives other
# weights than one on an AVX-512 machine. The workflow exports these to its jobs (common.smk) unless
# the user's environment sets them: torch reads them before its first kernel, so a job cannot.
PORTABLE_CPU_ENV = {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default"}


def start_job(log_path: str) -> None:
    """Send logging and stderr to ``log_path``."""
    log_file = open(log_path, "a", buffering=1)
    sys.stderr = log_file
    logging.basicConfig(stream=log_file, level=logging.INFO, format="%(asctime)s %(name)s %(message)s", force=True)
