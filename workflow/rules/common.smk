# Shared by all rules: config validation, where outputs go, the environment jobs run in, the code each job runs.
# What the rules make of the config lives in tested Python: the model families and their runs
# (lengthgen/experiments/families.py), each experiment's jobs (lengthgen/pipeline/experiment_jobs.py).
import os
import re
import sys
from pathlib import Path

from lengthgen.pipeline.config import ConfigError, job_task, prepare_config
from lengthgen.models.encodings_table import ENCODING_NAME_PATTERN  # torch-free: read from the source
from lengthgen.experiments import families
from lengthgen.experiments.catalog import plan
from lengthgen.experiments.declaration import as_plain
from lengthgen.experiments.families import FAMILIES
from lengthgen.pipeline.experiment_jobs import ExperimentJobs, per_job, section_name
from lengthgen.runtime.job import keep_freed_memory, use_cpu_kernels
from lengthgen.report.provenance import code_version
from lengthgen.pipeline.sources import encoding_sources, fingerprints, lengthgen_files

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


def script_code(script):
    """The lengthgen files a rule's script runs, read from its imports, each as ``path@digest`` of its content
    (lengthgen/pipeline/sources.py): params of the rule, so that editing one reruns the jobs that run it and what follows.
    Params, not inputs: Snakemake stats and sizes every input of every ready job at each choice of the next job,
    and in every dry run, and these files were 12,078 of the default DAG's 21,668 inputs."""
    return fingerprints(REPO, lengthgen_files(REPO, REPO / "workflow" / "scripts" / script))


def encoding_code(encodings):
    """The files a job loads by name to build ``encodings`` (each one's module and what it imports), as
    ``script_code`` gives them: editing or adding an encoding reruns the jobs that build it, and no other's."""
    return fingerprints(REPO, encoding_sources(REPO, sorted(set(encodings))))


def job_encoding_code(family, wildcards):
    """``encoding_code`` of the encodings one training or evaluation job of ``family`` builds."""
    return encoding_code(run["pe"] for run in families.job_runs(family, config, dict(wildcards.items())))


def in_results(paths):
    """``paths`` (relative to the results folder) below this config's results folder."""
    return [f"{RESULTS}/{path}" for path in paths]


def seed_files(pattern, seeds):
    """``pattern`` once per seed, its other wildcards ({pe}, {offset}) left to the rule."""
    return expand(pattern, seed=seeds, allow_missing=True)


def alternatives(names):
    """A wildcard constraint matching exactly these names."""
    return "|".join(re.escape(name) for name in names)


# The task of every job that trains or evaluates a model (lengthgen/pipeline/config.py: job_task). A training job
# gets besides only its family's model and training settings: a setting that does not change the weights (the
# evaluation lengths) is no parameter of a training job, so changing it retrains nothing.
MODELS_TASK = job_task(config, "models")

# The experiments that run under this config, and why the others are left out
# (lengthgen/experiments/catalog.py). Every section writes <results>/claims/<section>.parquet
# and <results>/sections/<section>.md; the report lists the left-out experiments' reasons.
PLAN = plan(config)
EXPERIMENTS = PLAN.sections
JOBS = ExperimentJobs(config, RESULTS, REPO)  # each experiment's inputs, settings, tables, figures and code

FIGURE_STYLE = str(REPO / "workflow" / "matplotlibrc")

# On a cluster, jobs that train or evaluate a model ask for one GPU when the
# config runs models on CUDA; the SLURM executor turns it into `sbatch --gres=gpu:1`. A string
# resource is not summed over a group, so a group job of several models shares its one GPU.
MODEL_GRES = "gpu:1" if str(config["device"]).startswith("cuda") else None


def point_tables(folders, table):
    """One table of every results folder of ``folders`` (a robustness study's points, the default first):
    tables/<table>.parquet below each."""
    return [f"{folder}/tables/{table}.parquet" for folder in folders.values()]
