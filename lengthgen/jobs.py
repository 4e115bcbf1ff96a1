"""What every workflow job does first: log to its rule's log file, use its rule's threads."""

import logging
import sys

import torch


def start_job(log_path: str, threads: int) -> None:
    """Send logging and stderr to ``log_path`` and limit torch to ``threads`` threads.

    One thread per job makes CPU runs bit-for-bit repeatable and lets Snakemake, not
    torch, decide how the cores are shared.
    """
    log_file = open(log_path, "a", buffering=1)
    sys.stderr = log_file
    logging.basicConfig(stream=log_file, level=logging.INFO, format="%(asctime)s %(name)s %(message)s", force=True)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
