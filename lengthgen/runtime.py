"""How torch runs in a job: which device, how many threads, deterministic kernels."""

import os

import torch


def resolve_device(device: str) -> torch.device:
    """``auto`` picks CUDA when present, else CPU; anything else is passed to torch."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def configure_torch(threads: int) -> None:
    """Limit torch to ``threads`` threads and make it deterministic, on CPU and CUDA.

    One thread per job makes CPU runs bit-for-bit repeatable and lets Snakemake, not
    torch, decide how the cores are shared. cuBLAS is deterministic only with a fixed
    workspace, which must be set before CUDA starts.
    """
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
