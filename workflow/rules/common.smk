# Shared by all rules: config validation, the sweep as a Paramspace, where outputs go, source-file inputs.
import itertools
import os
from pathlib import Path

import pandas as pd
from snakemake.utils import Paramspace, validate

from lengthgen.config import check_config
from lengthgen.report import code_version
from lengthgen.sources import lengthgen_files

validate(config, "../schemas/config.schema.yaml")
check_config(config)

REPO = Path(workflow.basedir)
# Every output of this config goes below this folder, so runs of other configs stay apart.
RESULTS = config["results_dir"]

# Jobs import the lengthgen beside this workflow, whatever else is installed (also
# inside --sdm conda environments, which hold only the dependencies).
os.environ.update(PYTHONPATH=str(REPO))  # set, not read: no envvars directive needed
CONDA_ENV = str(REPO / "envs" / "lengthgen.yaml")
# The report states the code it came from: the last commit that changed anything outside the
# results folders, so committing a regenerated RESULTS.md does not make it stale.
CODE_VERSION = code_version(str(REPO), exclude=["results", RESULTS])

RUNS = Paramspace(
    pd.DataFrame(
        itertools.product(config["sweep"]["pe"], config["sweep"]["seed"], config["sweep"]["offset"]),
        columns=["pe", "seed", "offset"],
    )
)


def script_sources(script):
    """The lengthgen files a rule's script runs, read from its imports (lengthgen/sources.py):
    inputs of the rule, so that editing one reruns the jobs that run it and what follows."""
    return [str(path) for path in lengthgen_files(REPO, REPO / "workflow" / "scripts" / script)]


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
    return [f"{RESULTS}/models/{RUNS.wildcard_pattern.format(**run)}/model.pt" for run in runs]


def eval_set_files(offsets):
    return [f"{RESULTS}/data/eval/offset~{offset}.parquet" for offset in offsets]


# Every experiment writes <results>/claims/<name>.parquet and <results>/sections/<name>.md.
EXPERIMENTS = [
    "base",
    "mechanics",
    *(f"shift_K{offset}" for offset in config["shift"]["offsets"]),
    "prop1",
    "frequency",
    "linear",
    "multiseed",
]

FIGURE_STYLE = str(REPO / "workflow" / "matplotlibrc")

# On a cluster, jobs that run a model (train, train_linear, evaluate) ask for one GPU when the
# config runs models on CUDA; the SLURM executor turns it into `sbatch --gres=gpu:1`. A string
# resource is not summed over a group, so a group job of several models shares its one GPU.
MODEL_GRES = "gpu:1" if str(config["device"]).startswith("cuda") else None
