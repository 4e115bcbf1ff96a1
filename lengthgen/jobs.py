"""What every workflow job does first: log to its rule's log file, use its rule's threads."""

import logging
import os
import sys

import torch


def configure_torch(threads: int) -> None:
    """Limit torch to ``threads`` threads and make it deterministic, on CPU and CUDA.

    One thread per job makes CPU runs bit-for-bit repeatable and lets Snakemake, not
    torch, decide how the cores are shared. cuBLAS is deterministic only with a fixed
    workspace, which must be set before CUDA starts.
    """
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)


def start_job(log_path: str, threads: int) -> None:
    """Send logging and stderr to ``log_path``, then ``configure_torch(threads)``."""
    log_file = open(log_path, "a", buffering=1)
    sys.stderr = log_file
    logging.basicConfig(stream=log_file, level=logging.INFO, format="%(asctime)s %(name)s %(message)s", force=True)
    configure_torch(threads)
