"""What every workflow job does first: log to its rule's log file; and the environment jobs run in.

Jobs that run a model also call ``runtime.configure_torch(threads)``; this module
does not import torch, so that jobs which only read tables start fast.
"""

import atexit
import logging
import os
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
    if os.environ.get(RECORD_MODULES):
        atexit.register(record_modules, log_file)


# Set (to anything) in a job's environment, it makes the job write every lengthgen file it loaded to its log at
# exit, one "loaded: <path>" line each: the provenance test checks each is among the job's inputs.
RECORD_MODULES = "LENGTHGEN_RECORD_MODULES"


def record_modules(log_file) -> None:
    files = sorted({module.__file__ for name, module in list(sys.modules.items())
                    if (name == "lengthgen" or name.startswith("lengthgen.")) and getattr(module, "__file__", None)})
    log_file.write("".join(f"loaded: {path}\n" for path in files))
    log_file.flush()
