# Shared by every rule file: config validation, the sweep's Paramspace, source-file inputs.
import itertools
import os
from pathlib import Path

import pandas as pd
from snakemake.utils import Paramspace, validate

from lengthgen.config import check_config

validate(config, "../schemas/config.schema.yaml")
check_config(config)

REPO = Path(workflow.basedir)

# Jobs import the lengthgen beside this workflow, whatever else is installed (also
# inside --sdm conda environments, which hold only the dependencies).
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))

RUNS = Paramspace(
    pd.DataFrame(
        itertools.product(config["sweep"]["pe"], config["sweep"]["seed"], config["sweep"]["offset"]),
        columns=["pe", "seed", "offset"],
    )
)


wildcard_constraints:
    pe="[a-z0-9_]+",
    seed=r"\d+",
    offset=r"\d+",


def lengthgen_sources(*modules):
    """Library files a rule runs, as inputs: editing one reruns that rule and what follows."""
    return [str(REPO / "lengthgen" / module) for module in modules]


MODEL_SOURCES = ["encodings.py", "model.py", "tables.py"]
FIGURE_STYLE = str(REPO / "workflow" / "matplotlibrc")
