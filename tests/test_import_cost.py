"""The modules the Snakefile imports at parse time pull in neither torch nor scipy."""

import subprocess
import sys

PARSE_TIME_IMPORTS = """
import sys
import lengthgen.pipeline.config, lengthgen.models.encodings_table, lengthgen.experiments.catalog
import lengthgen.experiments.declaration, lengthgen.runtime.job, lengthgen.report.provenance, lengthgen.runtime.seeding
import lengthgen.pipeline.sources, lengthgen.studies.confirmation.runs
print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'scipy')))
"""


def test_workflow_parse_imports_no_torch_or_scipy():
    out = subprocess.run([sys.executable, "-c", PARSE_TIME_IMPORTS], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


CONFIGURED_JOB = """
import sys
import torch
from lengthgen.runtime.device import configure_torch
configure_torch(1)
print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
      torch.get_num_threads(), sorted(m for m in sys.modules if m.startswith(('torch._inductor', 'torch._dynamo'))))
"""


def test_a_configured_job_is_deterministic_without_importing_the_compiler():
    """``runtime.configure_torch`` makes torch deterministic (errors, not warnings) on its threads, without the
    ~1 CPU-s import of torch's compiler that ``torch.use_deterministic_algorithms`` adds to every job."""
    out = subprocess.run([sys.executable, "-c", CONFIGURED_JOB], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True False 1 []"
