"""Configs a user writes by changing only the sweep and the task run the whole pipeline: the
experiments' own settings follow, and an experiment that cannot run is left out with its reason."""

import copy
import re
from itertools import product

import pandas as pd
import pytest
import yaml

from conftest import SCHEMA, snakemake
from lengthgen.pipeline.config import prepare_config
from lengthgen.experiments.catalog import plan


# Tiny sizes, and nothing about the experiments' settings (shift offsets and lengths, pe_at_init,
# the learned table's size): those follow the sweep and the task.
TINY = {
    "device": "cpu",
    "model": {"d_model": 16},
    "train": {"steps": 60, "batch_size": 32, "lr": 0.02, "log_every": 20},
    "shift": {"shifts": [1, 1000]},
    "prop1": {"n_samples": 64},
    "linear": {"steps": 40, "batch_size": 32, "lr": 0.001,
               "min_norm": {"d_model": 16, "rope_base": 0.05, "steps": 100, "batch_size": 32, "lr": 0.05}},
    "variants": {"pe": ["rope", "nope"]},
    "transformer": {"n_layers": 1, "n_heads": 2, "d_model": 16, "steps": 30, "batch_size": 16, "lr": 0.01,
                    "eval_samples": 16},
    "figures": {"dpi": 40},
    # Without config.yaml's confirmation runs and robustness points, layered over each config
    # (tests/test_confirmation.py checks the runs layer, tests/test_robustness.py the points).
    "confirmation": {"runs": []},
    "robustness": {"points": []},
}

USER_CONFIGS = {
    "rope only, one seed": (
        {"pe": ["rope"], "seed": [7], "offset": [1]},
        {"vocab_size": 8, "train_length_min": 4, "train_length_max": 8, "eval_lengths": [8, 32], "eval_samples": 32}),
    "learned only": (
        {"pe": ["learned"], "seed": [0, 1], "offset": [2]},
        {"vocab_size": 6, "train_length_min": 3, "train_length_max": 6, "eval_lengths": [6, 24], "eval_samples": 32}),
    "other V, range, offsets and seeds": (
        {"pe": ["rope", "learned"], "seed": [3, 4], "offset": [2, 3]},
        {"vocab_size": 5, "train_length_min": 6, "train_length_max": 12, "eval_lengths": [10, 12, 48, 100],
         "eval_samples": 32, "eval_seed": 4}),
    "three encodings": (
        {"pe": ["rope", "learned", "sinusoidal"], "seed": [0, 1], "offset": [1]},
        {"vocab_size": 12, "train_length_min": 3, "train_length_max": 9, "eval_lengths": [7, 9, 36], "eval_samples": 32}),
    "rope and nope, a long offset": (
        {"pe": ["nope", "rope"], "seed": [1, 2], "offset": [5]},
        {"vocab_size": 10, "train_length_min": 8, "train_length_max": 16, "eval_lengths": [16, 64], "eval_samples": 32}),
}
# One in the default tier (the fewest jobs, most experiments left out), the rest with -m slow (CI time).
FAST = {"rope only, one seed"}


@pytest.mark.parametrize("name", [pytest.param(name, marks=() if name in FAST else pytest.mark.slow)
                                  for name in USER_CONFIGS])
def test_a_config_that_changes_only_sweep_and_task_runs_the_whole_pipeline(tmp_path, name):
    sweep, task = USER_CONFIGS[name]
    user_config = {**copy.deepcopy(TINY), "sweep": sweep, "task": task}
    path = tmp_path / "user.yaml"
    path.write_text(yaml.safe_dump(user_config, sort_keys=False))
    result = snakemake(tmp_path / "run", configfile=path, check=False)
    assert result.returncode == 0, result.stdout + result.stderr

    expected = copy.deepcopy(user_config)
    prepare_config(expected, SCHEMA)
    what_runs = plan(expected)
    results = tmp_path / "run" / "results"
    report = (results / "RESULTS.md").read_text()
    claims = pd.read_parquet(results / "tables" / "claims.parquet")
    assert list(dict.fromkeys(claims["section"])) == what_runs.sections
    for experiment in what_runs.experiments:  # each experiment's page, and its sections in its appendix
        assert (results / "experiments" / f"{experiment}.md").exists(), experiment
        details = (results / "appendix" / f"{experiment}.md").read_text()
        for section in claims.loc[claims["experiment"] == experiment, "section"].unique():
            assert re.search(rf"^## {section}\b", details, flags=re.MULTILINE), section
    for experiment, reason in what_runs.left_out.items():
        assert f"{experiment}: {reason}" in report
        assert not (results / "claims" / f"{experiment}.parquet").exists()
    pages = "\n".join(page.read_text() for page in results.glob("experiments/*.md"))
    for figure in re.findall(r"\(\.\./figures/([\w.]+\.png)\)", pages):
        assert (results / "figures" / figure).read_bytes().startswith(b"\x89PNG")
    variants = expected["variants"]
    heads = set(product(sweep["pe"], sweep["seed"], sweep["offset"])) | set(
        product(variants["pe"], variants["seeds"], variants["offsets"]))
    # The sweep's and the variants' heads, each trained once (evaluated only where an experiment reads
    # the evaluations: with learned alone, none does).
    models = list((results / "models").glob("pe~*/seed~*/offset~*/model.pt"))
    assert len(models) == len(heads)
    # These tiny tasks evaluate at one length past 2x the training range; linear's rate needs two.
    if name == "rope only, one seed":
        assert set(what_runs.left_out) == {"generalization", "mechanics", "cures", "errors", "transformer", "linear",
                                           "multiseed", "rope_bases"}
    if name == "learned only":
        assert set(what_runs.left_out) == {"generalization", "mechanics", "prop1", "frequency", "cures", "errors", "transformer",
                                           "linear", "rope_bases"}
