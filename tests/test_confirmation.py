"""The confirmation study's configs (lengthgen/studies/confirmation/runs.py), its rules record, and its command."""

import copy

import pytest
import yaml
from snakemake.utils import update_config

from conftest import REPO, SCHEMA, snakemake
from lengthgen.pipeline.config import ConfigError, prepare_config
from lengthgen.studies.confirmation.runs import confirmation_runs, changed_values
from lengthgen.experiments.catalog import plan
from lengthgen.experiments.claims import CLAIMS
from test_user_configs import TINY, USER_CONFIGS
from test_workflow import scheduled_jobs, trained_runs, training_jobs

DEFAULT = yaml.safe_load((REPO / "config.yaml").read_text())


def runs_of(as_given, repository=REPO):
    prepared = copy.deepcopy(as_given)
    prepare_config(prepared, SCHEMA)
    return prepared, confirmation_runs(as_given, prepared, repository, SCHEMA)


def test_the_confirmation_set_is_valid_fresh_and_varies_the_task():
    prepared, runs = runs_of(DEFAULT)
    assert list(runs) == ["fresh_seeds", "small_vocab", "large_vocab", "unseen_seeds"]
    assert prepared["confirmation"]["out_of_sample"] == ["unseen_seeds"]
    # Each leaves out the experiments that state no claim, and trains no variant of its own.
    claimed = {claim.page for claim in CLAIMS} | {"multiseed"}
    for run in runs.values():
        assert {"variants", "rope_bases"} <= set(plan(run.prepared).left_out)
        assert not set(plan(run.prepared).experiments) - claimed
    others = {name: run for name, run in runs.items() if name != "unseen_seeds"}
    seen_seeds = {seed for run in others.values() for seed in run.prepared["sweep"]["seed"]}
    assert not set(runs["unseen_seeds"].prepared["sweep"]["seed"]) & seen_seeds  # drawn by no other run
    seeds = set(prepared["sweep"]["seed"])
    for name, run in runs.items():
        assert run.results_dir == f"results/confirm/{name}"
        assert not set(run.prepared["sweep"]["seed"]) & seeds  # fresh seeds
        assert len(run.prepared["sweep"]["seed"]) == len(seeds)  # as many: "over seeds" statistics compare
        assert run.prepared["confirmation"]["runs"] == []
        # left out to stay small (the transformer), and said why
        assert set(plan(run.prepared).left_out) <= {"transformer", "variants", "rope_bases"}
        assert run.prepared["confirmation"]["note"]
    # every claim tested: nothing a claim needs is left out
    assert set(plan(runs["fresh_seeds"].prepared).left_out) == {"variants", "rope_bases"}
    task_changes = lambda run: [entry for entry in run.differences if entry.startswith(("task.", "model.", "train."))
                                and not entry.startswith("task.eval_seed")]  # seeds and draws aside
    assert not task_changes(runs["fresh_seeds"])
    changed = [run for run in others.values() if task_changes(run)]
    assert len(changed) >= 2
    for run in changed:
        assert any(entry.startswith(("task.vocab_size", "task.train_length_max")) for entry in run.differences)
    assert {offset for run in runs.values() for offset in run.prepared["sweep"]["offset"]} > {1, 2, 3}


def test_a_confirmation_file_is_layered_as_snakemake_configfile_layers_it():
    _, runs = runs_of(DEFAULT)
    config = runs["small_vocab"].config
    assert config["task"]["vocab_size"] == 8 and config["task"]["eval_samples"] == DEFAULT["task"]["eval_samples"]
    assert config["sweep"]["pe"] == DEFAULT["sweep"]["pe"] and config["train"] == DEFAULT["train"]
    assert config["results_dir"] == "results/confirm/small_vocab"


@pytest.mark.parametrize("name", list(USER_CONFIGS))
def test_the_confirmation_set_layers_over_a_config_that_changes_only_sweep_and_task(name):
    sweep, task = USER_CONFIGS[name]
    config = copy.deepcopy(DEFAULT)  # a user's --configfile is layered over config.yaml, its confirmation set kept
    update_config(config, {**copy.deepcopy(TINY), "sweep": sweep, "task": task})
    update_config(config, {"transformer": {"eval_samples": 16}})  # no more than these tasks' 32 sequences
    config["confirmation"] = copy.deepcopy(DEFAULT["confirmation"])
    prepared, runs = runs_of(config)
    assert all(run.results_dir.startswith(f"{prepared['results_dir']}/confirm/") for run in runs.values())


def write(tmp_path, name, content):
    path = tmp_path / "configs" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(content)
    return f"configs/{name}"


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"),
    ("- a list\n", "is not a mapping"),
    ("sweep: {seed: [0, 19]}\nconfirmation: {runs: []}\n", "sweep.seed: [0] are seeds of the run it confirms"),
    ("sweep: {seed: [19]}\ntransformer: {seeds: [1]}\nconfirmation: {runs: []}\n",
     "transformer.seeds: [1] are seeds of the run it confirms"),
    ("sweep: {seed: [19]}\n", "runs no confirmations of its own"),
    ("sweep: {seed: [9], offset: [40]}\nconfirmation: {runs: []}\n", "confirmation run bad (configs/confirm_bad.yaml "
                                                                      "over this config): sweep.offset"),
    ("train: {stpes: 3}\nconfirmation: {runs: []}\n", "train.stpes: unknown key"),
])
def test_a_bad_confirmation_file_is_named_with_what_is_wrong(tmp_path, content, message):
    path = "configs/confirm_bad.yaml" if content is None else write(tmp_path, "confirm_bad.yaml", content)
    config = copy.deepcopy(DEFAULT)
    config["confirmation"]["runs"] = [path]
    with pytest.raises(ConfigError, match="configs/confirm_bad.yaml") as error:
        runs_of(config, tmp_path)
    assert message in str(error.value)


def test_two_files_with_one_name_are_refused(tmp_path):
    config = copy.deepcopy(DEFAULT)
    config["confirmation"]["runs"] = [write(tmp_path, "confirm_x.yaml", "sweep: {seed: [19]}\nconfirmation: {runs: []}\n"),
                                      "other/confirm_x.yaml"]
    with pytest.raises(ConfigError, match="other/confirm_x.yaml and .*confirm_x.yaml both name the run .x."):
        runs_of(config, tmp_path)


def test_differences_name_every_changed_key_but_presentation():
    base = copy.deepcopy(DEFAULT)
    prepare_config(base, SCHEMA)
    reseeded = copy.deepcopy(base)
    reseeded["sweep"]["seed"], reseeded["task"]["eval_seed"], reseeded["figures"]["dpi"] = [7], 3, 10
    assert changed_values(base, reseeded) == {"sweep.seed": ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [7]),
                                              "task.eval_seed": (0, 3)}


def test_the_confirm_command_schedules_each_confirmation_run_once_and_the_judgments(tmp_path):
    jobs = scheduled_jobs(snakemake(tmp_path, "confirm", "-n", configfile=REPO / "config.yaml").stdout)
    _, runs = runs_of(DEFAULT)
    for name, run in runs.items():
        assert jobs[f"confirm_{name}_report"] == jobs[f"confirm_{name}_all_claims"] == 1
        assert (jobs[f"confirm_{name}_train_sweep"] + jobs[f"confirm_{name}_train_variants"]
                == len({(pe, offset) for pe, _, offset in trained_runs(copy.deepcopy(run.prepared))}))
        assert jobs[f"confirm_{name}_eval_set"] == len(run.prepared["sweep"]["offset"])
    assert jobs["judge_claims"] == 1
    # the exploratory run's numbers the judgments read: its sweep's heads, none of its variants
    sweep = DEFAULT["sweep"]
    assert training_jobs(jobs) == jobs["train_sweep"] == len(sweep["pe"]) * len(sweep["offset"])
    assert "report" not in jobs  # the exploratory report is the default target's
