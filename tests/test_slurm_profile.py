"""What profiles/slurm asks of a cluster, read from dry runs that need neither a cluster nor the
executor plugin: how jobs group into SLURM jobs, and which jobs ask for a GPU.
(tests/slurm/ runs the profile on a real cluster.)"""

import copy
import math
import re
from collections import Counter
from itertools import product

import yaml
from snakemake.utils import update_config

from conftest import REPO, SCHEMA, SMOKE_CONFIG, snakemake
from lengthgen.pipeline.config import prepare_config
from lengthgen.studies.confirmation.runs import confirmation_runs
from lengthgen.studies.robustness.points import robustness_points

PROFILE = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
MODEL_RULES = {"train_sweep", "train_variants", "train_linear", "train_linear_softmax", "train_log_length", "evaluate_sweep",
               "evaluate_variants", "train_transformer", "evaluate_transformer"}


def model_chains(config: dict) -> int:
    """Independent model jobs, each for every seed of one (pe, offset): a head's train then evaluate, a
    modified head's training at one offset, a transformer's pair."""
    config = copy.deepcopy(config)
    prepare_config(config, SCHEMA)
    sweep, variants, transformer = config["sweep"], config["variants"], config["transformer"]
    heads = set(product(sweep["pe"], sweep["offset"])) | set(product(variants["pe"], variants["offsets"]))
    modified = 3 * len(sweep["offset"])  # the linear heads, their matched softmax heads and the log-length heads
    return len(heads) + modified + len(transformer["pe"]) * len(transformer["offsets"])


def dry_run_with_profile_groups(workdir, configfile):
    """`snakemake -n` with the profile's group-components (the rest of the profile needs the plugin)."""
    return snakemake(workdir, "-n", "--group-components", *PROFILE["group-components"],
                     configfile=configfile).stdout


def job_resources(dry_run_output: str) -> list[tuple[str, str]]:
    """(rule, resources line) of every job in a dry run's output."""
    return re.findall(r"^\s*rule (\w+):\n(?:\s+\w+: .*\n)*?\s+resources: (.*)$", dry_run_output, flags=re.MULTILINE)


def test_every_job_runs_in_a_group_and_groups_are_few(tmp_path):
    output = dry_run_with_profile_groups(tmp_path, SMOKE_CONFIG)
    ungrouped = set(re.findall(r"^rule (\w+):", output, flags=re.MULTILINE)) - {"all"}
    assert not ungrouped, f"rules without a group: {ungrouped}; give them one (profiles/slurm)"
    groups = Counter(re.findall(r"Group job (\w+) ", output))
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    update_config(config, yaml.safe_load(SMOKE_CONFIG.read_text()))
    prepared = copy.deepcopy(config)
    prepare_config(prepared, SCHEMA)
    runs = confirmation_runs(config, prepared, REPO, SCHEMA)  # the confirmation runs' models group the same way
    # A robustness point trains the sweep's heads only (its experiments read no other models).
    points = robustness_points(config, prepared, SCHEMA)
    sweep_chains = sum(len(set(product(point.config["sweep"]["pe"], point.config["sweep"]["offset"])))
                       for point in points.values())
    models = model_chains(config) + sum(model_chains(run.config) for run in runs.values()) + sweep_chains
    per_job = dict(entry.split("=") for entry in PROFILE["group-components"])
    assert groups == {"eval_sets": 1, "models": math.ceil(models / int(per_job["models"])), "summary": 1}


def test_a_cuda_config_asks_for_a_gpu_for_each_job_that_runs_a_model(tmp_path):
    config = yaml.safe_load(SMOKE_CONFIG.read_text())
    config["device"] = "cuda"
    cuda = tmp_path / "cuda.yaml"
    cuda.write_text(yaml.safe_dump(config))
    for configfile, gpu_rules in ((cuda, MODEL_RULES), (SMOKE_CONFIG, set())):
        jobs = job_resources(dry_run_with_profile_groups(tmp_path / configfile.stem, configfile))
        assert {rule for rule, _ in jobs} >= MODEL_RULES | {"eval_set", "report"}
        for rule, resources in jobs:
            # a confirmation run's or a robustness point's, as its own
            rule = re.sub(r"^(confirm|robust)_\w+?_(?=(train|evaluate|eval_set)\w*$)", "", rule)
            assert ("gres=gpu:1" in resources) == (rule in gpu_rules), (rule, resources)
