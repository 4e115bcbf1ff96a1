# Shared by all rules: config validation, the sweep as a Paramspace, source-file inputs.
import itertools
import os
from pathlib import Path

import pandas as pd
from snakemake.utils import Paramspace, validate

from lengthgen.config import check_config
from lengthgen.report import git_commit

validate(config, "../schemas/config.schema.yaml")
check_config(config)

REPO = Path(workflow.basedir)

# Jobs import the lengthgen beside this workflow, whatever else is installed (also
# inside --sdm conda environments, which hold only the dependencies).
os.environ.update(PYTHONPATH=str(REPO))  # set, not read: no envvars directive needed
CONDA_ENV = str(REPO / "envs" / "lengthgen.yaml")
# The report states the code it came from; a new commit rewrites it.
CODE_VERSION = git_commit(str(REPO))

RUNS = Paramspace(
    pd.DataFrame(
        itertools.product(config["sweep"]["pe"], config["sweep"]["seed"], config["sweep"]["offset"]),
        columns=["pe", "seed", "offset"],
    )
)


def lengthgen_sources(*modules):
    """Library files a job runs, as inputs: editing one reruns that job and what follows."""
    return [str(REPO / "lengthgen" / module) for module in modules]


def config_slice(section, keys=None):
    """The ``keys`` of ``config[section]`` (all by default), sorted, so that reordering
    config.yaml or changing other keys does not look like a change of this rule's params."""
    values = config[section]
    return {key: values[key] for key in sorted(keys or values)}


def sweep_runs(pe=None, offset=None):
    """The sweep's runs as dicts {pe, seed, offset}, optionally only some encodings or offsets."""
    runs = RUNS.dataframe
    if pe is not None:
        runs = runs[runs["pe"].isin(pe)]
    if offset is not None:
        runs = runs[runs["offset"].isin(offset)]
    return [{"pe": run.pe, "seed": int(run.seed), "offset": int(run.offset)} for run in runs.itertuples()]


# The linear-attention control: a RoPE head without softmax, one per (seed, offset).
LINEAR_RUNS = Paramspace(
    pd.DataFrame(itertools.product(config["sweep"]["seed"], config["sweep"]["offset"]), columns=["seed", "offset"])
)


def model_files(runs):
    return [f"results/models/{RUNS.wildcard_pattern.format(**run)}/model.pt" for run in runs]


def eval_set_files(offsets):
    return [f"results/data/eval/offset~{offset}.parquet" for offset in offsets]


# Every experiment writes results/claims/<name>.parquet and results/sections/<name>.md.
EXPERIMENTS = [
    "base",
    "mechanics",
    *(f"shift_K{offset}" for offset in config["shift"]["offsets"]),
    "prop1",
    "frequency",
    "linear",
    "multiseed",
]

MODEL_SOURCES = ["encodings.py", "model.py", "tables.py"]
FIGURE_STYLE = str(REPO / "workflow" / "matplotlibrc")
