"""The modules the Snakefile imports at parse time pull in neither torch nor scipy (issue 26)."""

import subprocess
import sys

PARSE_TIME_IMPORTS = """
import sys
import lengthgen.config, lengthgen.encoding_catalog, lengthgen.experiments.catalog
import lengthgen.experiments.declaration, lengthgen.jobs, lengthgen.report, lengthgen.seeding
import lengthgen.sources, lengthgen.confirmation.runs
print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'scipy')))
"""


def test_workflow_parse_imports_no_torch_or_scipy():
    out = subprocess.run([sys.executable, "-c", PARSE_TIME_IMPORTS], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
