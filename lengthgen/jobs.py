"""What every workflow job does first: log to its rule's log file.

Jobs that run a model also call ``runtime.configure_torch(threads)``; this module
does not import torch, so that jobs which only read tables start fast.
"""

import logging
import sys


def start_job(log_path: str) -> None:
    """Send logging and stderr to ``log_path``."""
    log_file = open(log_path, "a", buffering=1)
    sys.stderr = log_file
    logging.basicConfig(stream=log_file, level=logging.INFO, format="%(asctime)s %(name)s %(message)s", force=True)
