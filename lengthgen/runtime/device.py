"""How torch runs in a job: which device, how many threads, deterministic and portable kernels."""

import logging
import os

import torch

from lengthgen.runtime.job import PORTABLE_CPU_ENV, kernel_variables

log = logging.getLogger(__name__)
# How a job's log says that it started torch (bench/benchmark.py tells the jobs that did by it).
TORCH_STARTED = "torch CPU kernels:"


class DeviceError(RuntimeError):
    """The config's ``device`` names a device this machine does not have."""


def resolve_device(device: str) -> torch.device:
    """``auto`` picks CUDA when present, else CPU; anything else is passed to torch, after checking
    that a CUDA device asked for exists here (the machine that runs a job may not be the one that
    started the workflow, so this is checked by the job, not at start-up)."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and (resolved.index or 0) >= torch.cuda.device_count():
        raise DeviceError(f"device: {device!r} does not exist on this machine ({torch.cuda.device_count()} CUDA "
                          "devices); allowed here: auto, cpu" + (", cuda" if torch.cuda.is_available() else ""))
    return resolved


def configure_torch(threads: int) -> None:
    """Limit torch to ``threads`` threads and make it deterministic, on CPU and CUDA.

    One thread per job makes CPU runs bit-for-bit repeatable and lets Snakemake, not
    torch, decide how the cores are shared. cuBLAS is deterministic only with a fixed
    workspace, which must be set before CUDA starts.

    The flag is set as ``torch.use_deterministic_algorithms(True)`` sets it, without the
    other thing that function does: import the compiler's config (``torch._inductor``, with
    dynamo) to make ``torch.compile``'s kernels deterministic too. That import costs about
    1 CPU-s, as much as ``import torch``, in every job; nothing here compiles.
    """
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.set_num_threads(threads)
    torch._C._set_deterministic_algorithms(True, warn_only=False)
    # Which CPU code path the numbers came from: runs repeat bit for bit only on the same one.
    log.info("%s %s, MKL_CBWR=%s, %d thread(s)", TORCH_STARTED, torch.backends.cpu.get_cpu_capability(),
             os.environ.get("MKL_CBWR", "unset"), threads)


def check_cpu_kernels(cpu_kernels: str) -> None:
    """Stop a job whose CPU kernels are not its config's ``cpu_kernels``: its environment lost what the workflow
    set (a cluster node that does not pass it on, say), and its weights would silently be another path's."""
    wanted = kernel_variables(cpu_kernels)
    found = {name: os.environ.get(name) for name in PORTABLE_CPU_ENV}
    if found != wanted:
        raise RuntimeError(f"cpu_kernels is {cpu_kernels}, which sets {wanted}, but this job runs with {found}: "
                           "its environment is not the workflow's (lengthgen/runtime/job.py)")
