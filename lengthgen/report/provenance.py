"""What the report says about the run itself: the code version it was made from and the machine."""

import os
import platform
import shutil
import subprocess
from importlib import metadata

from lengthgen.runtime.job import PORTABLE_CPU_ENV


def code_version(repository: str, exclude: list[str]) -> str:
    """The last commit changing ``repository`` outside ``exclude`` (the workflow's outputs, so that committing them
    does not change it), ``-dirty`` where tracked files there differ."""
    inside = [path for path in exclude if not os.path.isabs(path) and not path.startswith("..")]
    pathspec = ["--", ".", *(f":(exclude){path}" for path in inside)]
    try:
        commit = git(repository, "log", "-1", "--format=%H", *pathspec)
        dirty = git(repository, "status", "--porcelain", "--untracked-files=no", *pathspec)
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown (not a git checkout)"
    return commit + ("-dirty" if dirty else "")


def git(repository: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repository, *args], capture_output=True, text=True, check=True).stdout.strip()


def machine_description() -> str:
    """The platform, CPUs, the GPUs ``nvidia-smi`` lists (asked without torch, which would cost seconds of start-up),
    Python, torch and the CPU kernels' settings."""
    listing = (subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True) if shutil.which("nvidia-smi") else None)
    gpus = ([line.strip() for line in listing.stdout.splitlines() if line.strip()]
            if listing and not listing.returncode else [])
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
            f"{', '.join(gpus) if gpus else 'no GPU'}; Python {platform.python_version()}, "
            f"torch {metadata.version('torch')}; CPU kernels: "
            + ", ".join(f"{name}={os.environ.get(name, 'unset')}" for name in PORTABLE_CPU_ENV))
