# Shared by all rules: config validation, the sweep as a Paramspace, where outputs go, source-file inputs.
import itertools
import os
import re
import sys
from pathlib import Path

import pandas as pd
import yaml
from snakemake.utils import Paramspace

from lengthgen.config import ConfigError, prepare_config
from lengthgen.encoding_catalog import ENCODING_NAME_PATTERN, encoding_description  # torch-free: read from the source
from lengthgen.experiments.catalog import plan
from lengthgen.jobs import PORTABLE_CPU_ENV
from lengthgen.report import code_version
from lengthgen.seeding import derive_seed
from lengthgen.sources import lengthgen_files

REPO = Path(workflow.current_basedir).parents[1]  # this file is workflow/rules/common.smk; also as a module
CONFIG_SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
try:
    # Readable errors, defaults, derived settings, cross-key checks (lengthgen/config.py).
    prepare_config(config, CONFIG_SCHEMA)
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


def run_grid(encodings, seeds, offsets):
    """Every (pe, seed, offset) of the given lists, as a table."""
    return pd.DataFrame(itertools.product(encodings, seeds, offsets), columns=["pe", "seed", "offset"])


SWEEP = run_grid(config["sweep"]["pe"], config["sweep"]["seed"], config["sweep"]["offset"])
VARIANTS = run_grid(config["variants"]["pe"], config["variants"]["seeds"], config["variants"]["offsets"])
# Every trained head: the sweep's and the variants' (a run in both is trained once).
RUNS = Paramspace(pd.concat([SWEEP, VARIANTS]).drop_duplicates(ignore_index=True))
RUN_FOLDER = RUNS.wildcard_pattern  # pe~{pe}/seed~{seed}/offset~{offset}
SEED_OFFSET_FOLDER = "seed~{seed}/offset~{offset}"

# Heads train (and are evaluated) every seed of one (pe, offset) in one job: per rule, its encodings
# and their seeds. The sweep's encodings train every sweep seed (the variants' seeds are among them);
# an encoding only the variants name trains the variants' seeds.
HEAD_BATCHES = {
    name: (encodings, seeds)
    for name, encodings, seeds in [
        ("sweep", config["sweep"]["pe"], config["sweep"]["seed"]),
        ("variant", [pe for pe in config["variants"]["pe"] if pe not in config["sweep"]["pe"]], config["variants"]["seeds"]),
    ]
    if encodings
}


def seed_files(pattern, seeds):
    """``pattern`` once per seed, its other wildcards ({pe}, {offset}) left to the rule."""
    return expand(pattern, seed=seeds, allow_missing=True)


def alternatives(names):
    """A wildcard constraint matching exactly these names."""
    return "|".join(re.escape(name) for name in names)


def script_sources(script):
    """The lengthgen files a rule's script runs, read from its imports (lengthgen/sources.py):
    inputs of the rule, so that editing one reruns the jobs that run it and what follows."""
    return [str(path) for path in lengthgen_files(REPO, REPO / "workflow" / "scripts" / script)]


def config_slice(section, keys=None):
    """The ``keys`` of ``config[section]`` (all by default), sorted, so that reordering
    config.yaml or changing other keys does not look like a change of this rule's params."""
    values = config[section]
    return {key: values[key] for key in sorted(keys or values)}


def as_runs(grid):
    return [{"pe": run.pe, "seed": int(run.seed), "offset": int(run.offset)} for run in grid.itertuples()]


def sweep_runs(pe=None, offset=None):
    """The sweep's runs as dicts {pe, seed, offset}, optionally only some encodings or offsets."""
    runs = SWEEP
    if pe is not None:
        runs = runs[runs["pe"].isin(pe)]
    if offset is not None:
        runs = runs[runs["offset"].isin(offset)]
    return as_runs(runs)


def variant_runs():
    """The variants experiment's runs as dicts {pe, seed, offset}."""
    return as_runs(VARIANTS)


# What every training job of a single head gets: the task (its training part) and the head's
# settings. Nothing else: a setting that does not change the weights (the evaluation lengths)
# is no parameter of a training job, so changing it retrains nothing.
TASK = config_slice("task", ["vocab_size", "train_length_min", "train_length_max"])
TRAIN_LENGTHS = [config["task"]["train_length_min"], config["task"]["train_length_max"]]
HEAD_TRAINING = {**config_slice("model"), "trained_positions": config["task"]["train_length_max"]}

# Heads trained beside the sweep by train_<name>: the sweep's RoPE head with one head option
# changed, one per (seed, offset), in models/<name>/. Per name: the head options, its training
# settings, and its seeds (every sweep offset).
MODIFIED_HEADS = {
    # the linear-attention control (arm 2): no softmax
    "linear": (
        {"attention": "linear"},
        config_slice("linear", ["steps", "batch_size", "lr", "warmup_fraction"]),
        config["sweep"]["seed"],
    ),
    # cures: log-length scaling of the logits during training and evaluation (SSMax-style)
    "log_length": (
        {"logit_scale": "log_length", "reference_length": config["task"]["train_length_max"]},
        config_slice("train"),
        config["cures"]["seeds"],
    ),
}


def modified_runs(name):
    """The runs {pe, seed, offset} of the modified head ``name``."""
    return [{"pe": "rope", "seed": seed, "offset": offset}
            for seed in MODIFIED_HEADS[name][2] for offset in config["sweep"]["offset"]]


def bootstrap_settings(section):
    """The seed bootstrap of one section's checks (lengthgen/bootstrap.py): how many resamples, and the
    seed of its draws, derived from bootstrap.seed and the section so that sections draw apart."""
    return {"resamples": config["bootstrap"]["resamples"],
            "seed": derive_seed("bootstrap", config["bootstrap"]["seed"], section)}


def modified_model_files(name, file="model.pt"):
    """One ``file`` (model.pt, training_curve.parquet) per run of the modified head ``name``."""
    return [f"{RESULTS}/models/{name}/{SEED_OFFSET_FOLDER.format(**run)}/{file}" for run in modified_runs(name)]


# The transformer: one causal decoder per (pe, seed, offset) of its own (smaller) grid.
TRANSFORMER_RUNS = Paramspace(
    run_grid(config["transformer"]["pe"], config["transformer"]["seeds"], config["transformer"]["offsets"])
)
TRANSFORMER_SEEDS = config["transformer"]["seeds"]


# The settings every trained model.pt of this config holds (besides its encoding): readers check
# them (checkpoint.load_model), so a foreign or stale file is named, not silently used.
HEAD = {"vocab_size": config["task"]["vocab_size"], **HEAD_TRAINING}
TRANSFORMER_TRAINING = {
    **config_slice("transformer", ["n_layers", "n_heads", "d_model"]),
    **config_slice("model", ["rope_base", "learned_init_std"]),
    "trained_positions": config["task"]["train_length_max"],
}


def modified_head(name):
    """The settings of the modified head ``name`` (MODIFIED_HEADS), as its model files hold them."""
    return {**HEAD, "pe": "rope", **MODIFIED_HEADS[name][0]}


def model_files(runs):
    return [f"{RESULTS}/models/{RUNS.wildcard_pattern.format(**run)}/model.pt" for run in runs]


def evaluation_files(runs):
    return [f"{RESULTS}/evaluations/{RUNS.wildcard_pattern.format(**run)}.parquet" for run in runs]


def range_fit_files(runs):
    return [f"{RESULTS}/models/{RUN_FOLDER.format(**run)}/range_fit.parquet" for run in runs]


def eval_set_files(offsets):
    return [f"{RESULTS}/data/eval/offset~{offset}.parquet" for offset in offsets]


# Every trained model's range fit, by family (rule training_summary).
RANGE_FIT_FAMILIES = {
    "head": range_fit_files(as_runs(RUNS.dataframe)),
    **{name: modified_model_files(name, "range_fit.parquet") for name in MODIFIED_HEADS},
    "transformer": [f"{RESULTS}/models/transformer/{RUN_FOLDER.format(**run)}/range_fit.parquet"
                    for run in as_runs(TRANSFORMER_RUNS.dataframe)],
}
ALL_RANGE_FITS = [path for paths in RANGE_FIT_FAMILIES.values() for path in paths]


# The experiments that run under this config, and why the others are left out
# (lengthgen/experiments/catalog.py). Every section writes <results>/claims/<section>.parquet
# and <results>/sections/<section>.md; the report lists the left-out experiments' reasons.
PLAN = plan(config)
EXPERIMENTS = PLAN.sections

FIGURE_STYLE = str(REPO / "workflow" / "matplotlibrc")

# On a cluster, jobs that train or evaluate a model ask for one GPU when the
# config runs models on CUDA; the SLURM executor turns it into `sbatch --gres=gpu:1`. A string
# resource is not summed over a group, so a group job of several models shares its one GPU.
MODEL_GRES = "gpu:1" if str(config["device"]).startswith("cuda") else None
