# Shared by all rules: config validation, the sweep as a Paramspace, where outputs go, the code each job runs.
import itertools
import os
import re
import sys
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import yaml
from snakemake.utils import Paramspace

from lengthgen.pipeline.config import ConfigError, job_task, model_file_settings, model_settings, prepare_config
from lengthgen.models.encodings_table import ENCODING_NAME_PATTERN, encoding_description  # torch-free: read from the sources
from lengthgen.experiments.catalog import plan
from lengthgen.experiments.declaration import EvalSets, Evaluations, Models, RangeFits, Table, TrainingCurves
from lengthgen.experiments.declaration import as_plain, schema_of, schema_read, setting, settings_of
from lengthgen.runtime.job import keep_freed_memory, use_cpu_kernels
from lengthgen.report.provenance import code_version
from lengthgen.runtime.seeding import derive_seed
from lengthgen.pipeline.sources import encoding_sources, fingerprints, lengthgen_files, schema_sources

REPO = Path(workflow.current_basedir).parents[1]  # this file is workflow/rules/common.smk; also as a module
CONFIG_SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
try:
    # Readable errors, defaults, derived settings, cross-key checks (lengthgen/pipeline/config.py).
    prepare_config(config, CONFIG_SCHEMA)
except ConfigError as error:
    # A user's mistake, not a bug: the message alone, without the traceback Snakemake would add.
    sys.exit(f"Config error: {error}")

# Every output of this config goes below this folder, so runs of other configs stay apart.
RESULTS = config["results_dir"]

# Jobs import the lengthgen beside this workflow, whatever else is installed (also
# inside --sdm conda environments, which hold only the dependencies).
os.environ.update(PYTHONPATH=str(REPO))  # set, not read: no envvars directive needed
# The CPU kernels jobs run: native (fast, repeats on this CPU) or portable (repeats on any x86-64 CPU).
try:
    use_cpu_kernels(config["cpu_kernels"])
except ValueError as error:
    sys.exit(f"Config error: {error}")
keep_freed_memory()  # the allocator's page faults were a fifth of some training jobs' CPU (lengthgen/runtime/job.py)
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


def script_code(script):
    """The lengthgen files a rule's script runs, read from its imports, each as ``path@digest`` of its content
    (lengthgen/pipeline/sources.py): params of the rule, so that editing one reruns the jobs that run it and what follows.
    Params, not inputs: Snakemake stats and sizes every input of every ready job at each choice of the next job,
    and in every dry run, and these files were 12,078 of the default DAG's 21,668 inputs."""
    return fingerprints(REPO, lengthgen_files(REPO, REPO / "workflow" / "scripts" / script))


def encoding_code(encodings):
    """The files a job loads by name to build ``encodings`` (each one's family module and what it imports,
    lengthgen/pipeline/sources.py), as ``script_code`` gives them: so that editing or adding an encoding reruns
    the jobs that build it, and no other encoding's."""
    return fingerprints(REPO, encoding_sources(REPO, sorted(set(encodings))))


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


# The task of every job that trains or evaluates a model (lengthgen/pipeline/config.py: job_task), and what every
# training job of a single head gets besides: the head's settings. Nothing else: a setting that does not
# change the weights (the evaluation lengths) is no parameter of a training job, so changing it retrains nothing.
MODELS_TASK = job_task(config, "models")
HEAD_TRAINING = model_settings(config_slice("model"), MODELS_TASK)

# Heads trained beside the sweep by train_<name>: the sweep's RoPE head with one head option
# changed, one per (seed, offset), in models/<name>/. Per name: the head options, its training
# settings, and its seeds (every sweep offset).
MODIFIED_HEADS = {
    # the linear-attention control (arm 2): no softmax, and a rotary base of its own (the config schema says why)
    "linear": (
        {"attention": "linear", "rope_base": config["linear"]["rope_base"]},
        config_slice("linear", ["steps", "batch_size", "lr", "warmup_fraction"]),
        config["sweep"]["seed"],
    ),
    # cures: log-length scaling of the logits during training and evaluation (SSMax-style), by the length
    # over the longest training length
    "log_length": (
        {"logit_scale": "log_length", "reference_length": HEAD_TRAINING["trained_positions"]},
        config_slice("train"),
        config["cures"]["seeds"],
    ),
}


def modified_runs(name):
    """The runs {pe, seed, offset} of the modified head ``name``."""
    return [{"pe": "rope", "seed": seed, "offset": offset}
            for seed in MODIFIED_HEADS[name][2] for offset in config["sweep"]["offset"]]


def bootstrap_settings(section):
    """The seed bootstrap of one section's checks (lengthgen/checks/bootstrap.py): how many resamples, and the
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
HEAD = model_file_settings(HEAD_TRAINING, MODELS_TASK)
TRANSFORMER_TRAINING = model_settings(
    {**config_slice("transformer", ["n_layers", "n_heads", "d_model", "init"]),
     **config_slice("model", ["rope_base", "learned_init_std"])},
    MODELS_TASK,
)


# How one training rule of single heads is made (workflow/rules/train.smk), every seed of a job side by side.
# Its fields: the folder below models/ its runs' folders are in ("" for the sweep's and the variants' heads);
# one run's folder (its {pe}, {seed} and {offset} wildcards; a job trains every seed of one); the {pe} its jobs
# train (None: its run folders name no encoding, they train rope); its seeds; the head's and the training's
# settings; its runtime in minutes, for a cluster's scheduler.
class HeadTraining(NamedTuple):
    family: str
    run: str
    encodings: list[str] | None
    seeds: list[int]
    model: dict
    train: dict
    runtime: int


# The training rules of single heads, by name: the sweep's and the variants' (a seed list is fixed per rule, so encodings
# whose runs have other seeds get a rule of their own), and the modified rope heads (MODIFIED_HEADS).
HEAD_TRAINING_RULES = {
    **{f"train_{name}": HeadTraining("", RUN_FOLDER, encodings, seeds, HEAD_TRAINING, config_slice("train"), 30)
       for name, (encodings, seeds) in HEAD_BATCHES.items()},
    **{f"train_{name}": HeadTraining(f"{name}/", SEED_OFFSET_FOLDER, None, seeds, {**HEAD_TRAINING, **options},
                                     settings, 60)
       for name, (options, settings, seeds) in MODIFIED_HEADS.items()},
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


# Where each family's runs keep their files: the folder of one run below models/ (and evaluations/).
def run_folder(family, run):
    if family in MODIFIED_HEADS:
        return f"{family}/{SEED_OFFSET_FOLDER.format(**run)}"
    prefix = "transformer/" if family == "transformer" else ""
    return prefix + RUN_FOLDER.format(**run)


def family_runs(family, pe=None, offset=None):
    """The runs {pe, seed, offset} of a family of trained models, optionally some encodings or one offset."""
    runs = {"sweep": lambda: sweep_runs(), "variants": variant_runs,
            "transformer": lambda: as_runs(TRANSFORMER_RUNS.dataframe)}.get(family, lambda: modified_runs(family))()
    return [run for run in runs if (pe is None or run["pe"] in pe) and (offset is None or run["offset"] == offset)]


# Every encoding a model of this config is trained with: the training summary and the report read their declarations.
ALL_ENCODINGS = {run["pe"] for family in ("sweep", "variants", "transformer", *MODIFIED_HEADS) for run in family_runs(family)}


def family_expected(family):
    """The settings every model file of a family holds (checkpoint.load_model checks them)."""
    if family in MODIFIED_HEADS:
        return modified_head(family)
    return model_file_settings(TRANSFORMER_TRAINING, MODELS_TASK) if family == "transformer" else HEAD


def source_files(source, offset=None):
    """The files of one declared input (lengthgen/experiments/declaration.py); ``offset``: that of a
    per-offset experiment's job."""
    if isinstance(source, Table):
        return [f"{RESULTS}/tables/{source.name}.parquet"]
    if isinstance(source, EvalSets):
        return eval_set_files([offset] if offset is not None else setting(config, source.offsets))
    runs = family_runs(source.family, getattr(source, "pe", None), offset)
    if isinstance(source, Evaluations):
        return [f"{RESULTS}/evaluations/{run_folder(source.family, run)}.parquet" for run in runs]
    file = {Models: "model.pt", RangeFits: "range_fit.parquet", TrainingCurves: "training_curve.parquet"}[type(source)]
    return [f"{RESULTS}/models/{run_folder(source.family, run)}/{file}" for run in runs]


def source_details(source, offset=None):
    """What a job needs besides the files to load one input: models' runs and settings, sets' offsets."""
    if isinstance(source, Models):
        return {"runs": family_runs(source.family, source.pe, offset), "expected": family_expected(source.family)}
    if isinstance(source, EvalSets):
        return {"offsets": [offset] if offset is not None else list(setting(config, source.offsets))}
    return {}


def experiment_encodings(experiment):
    """The encodings one experiment's jobs may build or read the declarations of: those of the models, evaluations
    and range fits it reads, and those shift measures at their init (shift.pe_at_init)."""
    read = {run["pe"] for source in experiment.reads.values() if hasattr(source, "family")
            for run in family_runs(source.family, getattr(source, "pe", None))}
    return read | set(config["shift"]["pe_at_init"] if "shift" in experiment.settings else [])


def experiment_code(experiment, dispatcher):
    """The lengthgen files one experiment's job runs, as ``script_code`` gives them: the dispatcher script's
    imports, the experiment's own modules (its analysis, or its figures and section text) with theirs, and the
    schema module of every table it reads or writes (loaded by name at run time, so no import shows them)."""
    name = experiment.name
    modules = ["analysis"] if dispatcher == "analyze.py" else ["figures", "section"]
    files = set(lengthgen_files(REPO, REPO / "workflow" / "scripts" / dispatcher))
    if dispatcher == "analyze.py":
        schemas = [schema_read(source) for source in experiment.reads.values() if schema_read(source)]
        schemas += [schema_of(table) for table in experiment.tables]
    else:
        schemas = [schema for _, schema in figure_tables(experiment).values()]
    files |= set(schema_sources(REPO, schemas))
    for module in modules:
        source = REPO / "lengthgen" / "experiments" / name / f"{module}.py"
        files |= {source, *lengthgen_files(REPO, source)}
    files |= set(encoding_sources(REPO, experiment_encodings(experiment)))
    return fingerprints(REPO, files)


def experiment_settings(experiment, offset=None):
    """The config keys the experiment declares, nested as in the config, and its offset if it runs per offset."""
    return {**settings_of(experiment, config), **({"offset": offset} if offset is not None else {})}


def experiment_tables(experiment, offset=None):
    """Its tables' paths by schema name (per-offset tables for one offset, or left as a wildcard)."""
    return {schema_of(table): f"{RESULTS}/tables/{table.format(offset=offset) if offset is not None else table}.parquet"
            for table in experiment.tables}


def figure_tables(experiment, offset=None):
    """The tables a figure job reads, by name, with their schema names: the experiment's own tables and the
    tables it reads (its other inputs are models and evaluation sets, which figures do not draw)."""
    own = {name: (path, name) for name, path in experiment_tables(experiment, offset).items()}
    read = {name: (source_files(source, offset)[0], source.schema_name)
            for name, source in experiment.reads.items() if isinstance(source, Table)}
    return {**read, **own}


def experiment_figures(experiment, offset=None):
    """Its figures' names: per offset of its section (shift) or of ``figures_per`` (prop1), or one each."""
    names = []
    for figure in experiment.figures:
        if experiment.per_offset:
            names.append(figure.format(offset=offset) if offset is not None else figure)
        elif experiment.figures_per:
            names += [figure.format(offset=each) for each in setting(config, experiment.figures_per)]
        else:
            names.append(figure)
    return names


def per_job(experiment, make):
    """A rule's input or params function: ``make(offset)``, the offset of the job for an experiment that
    runs per offset, else None."""
    return lambda wildcards: make(int(wildcards.offset) if experiment.per_offset else None)


def figure_caption(experiment, figure):
    """A figure's caption in the HTML report: lengthgen/experiments/<name>/<figure>.rst, else its experiment's
    caption.rst, else none (a caption is optional; Snakemake fails the report on a caption file that does not exist)."""
    folder = REPO / "lengthgen" / "experiments" / experiment.name
    for name in (schema_of(figure), "caption"):
        if (folder / f"{name}.rst").exists():
            return f"../../lengthgen/experiments/{experiment.name}/{name}.rst"
    return None


def job_log(rule, experiment):
    """A job's log: logs/<rule>.log, or logs/<rule>/K{offset}.log per offset."""
    name = os.path.join(rule, "K{offset}") if experiment.per_offset else rule
    return f"{RESULTS}/logs/{name}.log"


def section_name(experiment, offset):
    return f"{experiment.name}_K{offset}" if experiment.per_offset else experiment.name


def experiment_sections(experiment):
    """Its sections, each with the offset of its job: one per offset for a per-offset experiment, else one."""
    offsets = setting(config, experiment.per_offset) if experiment.per_offset else [None]
    return {section_name(experiment, offset): offset for offset in offsets}


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


def point_tables(folders, table):
    """One table of every results folder of ``folders`` (a robustness study's points, the default first):
    tables/<table>.parquet below each."""
    return [f"{folder}/tables/{table}.parquet" for folder in folders.values()]
