"""The config's cpu_kernels: which CPU kernels a job runs (lengthgen/runtime/job.py), and that a job gets them."""

import os
import resource
import subprocess
import sys

import pytest

from conftest import snakemake
from lengthgen.runtime import job as jobs
from lengthgen.runtime.job import PORTABLE_CPU_ENV, kernel_variables, use_cpu_kernels
from lengthgen.runtime.device import check_cpu_kernels

EXPORTED = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "HOME": "/home/user"}


def test_an_unknown_choice_is_named():
    with pytest.raises(ValueError, match="cpu_kernels: 'fast' is not one of native, portable"):
        kernel_variables("fast")


@pytest.fixture
def clean_environment(monkeypatch):
    """A process as a fresh shell starts it: no kernel variables, no choice made. This test process's own
    environment (which the workflow tests' Snakemake inherits) is left alone."""
    monkeypatch.setattr(os, "environ", {name: value for name, value in os.environ.items()
                                        if name not in PORTABLE_CPU_ENV})
    monkeypatch.setattr(jobs, "_CHOSEN", {})


def environment_of(names, environment=None) -> dict:
    environment = os.environ if environment is None else environment
    return {name: environment.get(name) for name in names}


def test_portable_replaces_what_the_user_exported(clean_environment):
    os.environ.update(EXPORTED)
    use_cpu_kernels("portable")
    assert environment_of(EXPORTED) == {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "HOME": "/home/user"}


def test_native_leaves_the_kernels_to_the_cpu_in_mkls_reproducible_mode(clean_environment):
    os.environ.update({**PORTABLE_CPU_ENV, "HOME": "/home/user"})
    use_cpu_kernels("native")
    assert environment_of(EXPORTED) == {"ATEN_CPU_CAPABILITY": None, "MKL_CBWR": "AUTO", "HOME": "/home/user"}


def test_one_workflow_runs_one_kind_of_kernels(clean_environment):
    use_cpu_kernels("native")
    assert "ATEN_CPU_CAPABILITY" not in os.environ and os.environ["MKL_CBWR"] == "AUTO"
    use_cpu_kernels("native")  # a confirmation run of the same config
    with pytest.raises(ValueError, match="already runs native; a config layered over it .* asks for portable"):
        use_cpu_kernels("portable")


def test_a_job_whose_environment_lost_its_kernels_stops(clean_environment, monkeypatch):
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")  # portable's MKL setting, without ATen's
    with pytest.raises(RuntimeError, match="cpu_kernels is portable.*this job runs with"):
        check_cpu_kernels("portable")
    with pytest.raises(RuntimeError, match="cpu_kernels is native"):
        check_cpu_kernels("native")
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    check_cpu_kernels("portable")


def machine_capability() -> str:
    """The kernels torch picks on this CPU when left to itself."""
    environment = {name: value for name, value in os.environ.items() if name not in PORTABLE_CPU_ENV}
    return subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                          env=environment, capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.workflow
@pytest.mark.parametrize("cpu_kernels", ["native", "portable"])
def test_a_training_job_runs_the_kernels_its_config_names(tmp_path, cpu_kernels):
    """From the config to the job: whatever this process exported (the tests export the portable variables)."""
    capability = machine_capability()
    if cpu_kernels == "native" and capability == "DEFAULT":
        pytest.skip("this CPU offers no kernels beyond the portable ones")
    model = "results/models/linear/seed~0/offset~1/model.pt"
    snakemake(tmp_path, model, "--config", f"cpu_kernels={cpu_kernels}")
    log = (tmp_path / "results/logs/train_linear/offset~1.log").read_text()
    expected = {"native": f"torch CPU kernels: {capability}, MKL_CBWR=AUTO",
                "portable": "torch CPU kernels: DEFAULT, MKL_CBWR=COMPATIBLE"}[cpu_kernels]
    assert expected in log


def test_jobs_keep_freed_memory_unless_the_user_tuned_the_allocator(clean_environment):
    for name in jobs.KEEP_FREED_MEMORY_ENV:
        os.environ.pop(name, None)
    os.environ["MALLOC_TRIM_THRESHOLD_"] = "12345"
    jobs.keep_freed_memory()
    assert environment_of(jobs.KEEP_FREED_MEMORY_ENV) == {"MALLOC_MMAP_THRESHOLD_": str(2**30),
                                                          "MALLOC_TRIM_THRESHOLD_": "12345"}


def test_a_bench_restarts_with_the_jobs_allocator_settings_it_lacks_and_only_then(clean_environment, monkeypatch):
    restarts = []
    # a real restart would start the test run over in this process, and again without end: record it instead
    def restart(path, argv, environment=None):
        restarts.append((argv, dict(os.environ if environment is None else environment)))
    monkeypatch.setattr(os, "execv", restart)
    monkeypatch.setattr(os, "execve", restart)
    for name in jobs.KEEP_FREED_MEMORY_ENV:
        os.environ.pop(name, None)
    os.environ["MALLOC_TRIM_THRESHOLD_"] = "12345"
    jobs.run_as_jobs_run("portable")
    (argv, environment), = restarts
    assert argv == [sys.executable, *sys.argv]
    assert environment_of(jobs.KEEP_FREED_MEMORY_ENV, environment) == {"MALLOC_MMAP_THRESHOLD_": str(2**30),
                                                                          "MALLOC_TRIM_THRESHOLD_": "12345"}
    assert environment["ATEN_CPU_CAPABILITY"] == "default"  # the kernels chosen before it starts again
    os.environ.update(environment)
    jobs._CHOSEN.clear()
    jobs.run_as_jobs_run("portable")
    assert len(restarts) == 1


# 40 blocks of 64 MB, each written whole and freed: a fresh block's pages fault in (16,384 faults of 4 KB each),
# a reused block's are already there.
REALLOCATING = "for _ in range(40):\n    block = b'\\x01' * (64 * 2**20)\n    del block\n"


def page_faults(environment: dict) -> int:
    """Minor page faults of a child Python that allocates and frees the same large block again and again."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    subprocess.run([sys.executable, "-c", REALLOCATING], check=True, env=environment)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before


def transparent_huge_pages_always() -> bool:
    """Whether the kernel backs large mappings with 2 MB pages unasked: then a fresh block faults in 32 times, not
    16,384, and the page-fault counts below say nothing."""
    path = "/sys/kernel/mm/transparent_hugepage/enabled"
    return os.path.exists(path) and "[always]" in open(path).read()


@pytest.mark.skipif(transparent_huge_pages_always(), reason="transparent huge pages: page faults are not 4 KB each")
def test_a_process_in_the_jobs_allocator_environment_reuses_a_freed_block_instead_of_faulting_it_in_again():
    plain = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")}
    faults_plain = page_faults(plain)
    faults_kept = page_faults({**plain, **jobs.KEEP_FREED_MEMORY_ENV})
    assert faults_plain > 40 * 16_000  # every block faulted in anew
    assert faults_kept < 3 * 16_384 + 5_000  # one block's pages (and the interpreter's own), then reuse
