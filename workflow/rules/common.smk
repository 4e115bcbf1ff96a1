# Shared by all rules: config validation, the sweep as a Paramspace, where outputs go, source-file inputs.
import itertools
import os
import sys
from pathlib import Path

import pandas as pd
import yaml
from snakemake.utils import Paramspace

from lengthgen.config import ConfigError, prepare_config
from lengthgen.experiments.catalog import plan
from lengthgen.jobs import PORTABLE_CPU_ENV
from lengthgen.report import code_version
from lengthgen.sources import lengthgen_files

REPO = Path(workflow.basedir)
CONFIG_SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
try:
    # Readable errors, defaults, derived settings, cross-key checks (lengthgen/config.py).
    prepare_config(config, yaml.safe_load(CONFIG_SCHEMA.read_text()))
except ConfigError as error:
    # A user's mistake, not a bug: the message alone, without the traceback Snakemake would add.
    sys.exit(f"Config error: {error}")

# Every output of this config goes below this folder, so runs of other configs stay apart.
RESULTS = config["results_dir"]

# Jobs import the lengthgen beside this workflow, whatever else is installed (also
# inside --sdm conda environments, which hold only the dependencies).
os.environ.update(PYTHONPATH=str(REPO))  # set, not read: no envvars directive needed
# Jobs run torch's portable CPU kernels, so a run repeats bit for bit on any x86-64 CPU
# (lengthgen/jobs.py); a value the user exported (e.g. ATEN_CPU_CAPABILITY=avx2, faster) wins.
for name, value in PORTABLE_CPU_ENV.items():
    os.environ.setdefault(name, value)
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


# The head every trained model.pt of this config holds (besides its encoding): readers check it
# (model.load_head), so a foreign or stale file is named, not silently used.
HEAD = {"vocab_size": config["task"]["vocab_size"], **config_slice("model")}
LINEAR_HEAD = {**HEAD, "pe": "rope", "attention": "linear"}


def model_files(runs):
    return [f"{RESULTS}/models/{RUNS.wildcard_pattern.format(**run)}/model.pt" for run in runs]


def eval_set_files(offsets):
    return [f"{RESULTS}/data/eval/offset~{offset}.parquet" for offset in offsets]


# The experiments that run under this config, and why the others are left out
# (lengthgen/experiments/catalog.py). Every section writes <results>/claims/<section>.parquet
# and <results>/sections/<section>.md; the report lists the left-out experiments' reasons.
PLAN = plan(config)
EXPERIMENTS = PLAN.sections

FIGURE_STYLE = str(REPO / "workflow" / "matplotlibrc")
