"""Bad input as users meet it on the command line: a bad config stops before any job with one
readable line; a damaged intermediate file is named by the rule that reads it, and deleting it
and rerunning regenerates it."""

import re

import pytest
import torch

from conftest import parquet_files, snakemake, write_config
from lengthgen.models.checkpoint import save_model
from lengthgen.models.head import HeadConfig
from lengthgen.training.loop import init_head


def assert_stopped_before_any_job(result, workdir):
    assert result.returncode != 0
    assert not (workdir / "results").exists()  # no job ran, nothing was written


# A representative subset of tests/test_config.py's table, through the real command line.
COMMAND_LINE_MISTAKES = [
    ({"train": {"steps": "many"}}, "train.steps: 'many' is not of type 'integer'; allowed: an integer >= 1"),
    ({"sweep": {"seed": [0, True]}}, "sweep.seed: True is not of type 'integer' (item 2); allowed: a non-empty list"),
    ({"train": {"stpes": 10}}, "train.stpes: unknown key in section train (did you mean 'steps'?); allowed: steps,"),
    ({"trian": {"steps": 10}}, "trian: unknown key in the config (did you mean 'train'?)"),
    ({"sweep": {"offset": [1, 9]}}, "sweep.offset: offset 9 is not shorter than task.train_length_min (4)"),
    ({"device": "gpu"}, "device: 'gpu' does not match"),
]


@pytest.mark.parametrize("changes, message", COMMAND_LINE_MISTAKES, ids=[m.split(":")[0] for _, m in COMMAND_LINE_MISTAKES])
def test_a_bad_config_prints_one_line_without_traceback(tmp_path, changes, message):
    result = snakemake(tmp_path / "run", configfile=write_config(tmp_path / "bad.yaml", **changes), check=False)
    output = result.stdout + result.stderr
    assert_stopped_before_any_job(result, tmp_path / "run")
    errors = [line for line in output.splitlines() if line.startswith("Config error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"Config error: {message}"), output
    assert "Traceback" not in output and not re.search(r'^\s*File "', output, flags=re.MULTILINE), output


def test_a_config_file_that_does_not_parse_is_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("sweep:\n  pe: [rope, learned\n  seed: [0]\n")
    result = snakemake(tmp_path / "run", configfile=bad, check=False)
    assert_stopped_before_any_job(result, tmp_path / "run")
    output = result.stdout + result.stderr
    assert "Config file is not valid JSON or YAML" in output and "Traceback" not in output, output


def test_a_config_file_that_does_not_exist_is_named(tmp_path):
    result = snakemake(tmp_path / "run", configfile=tmp_path / "missing.yaml", check=False)
    assert_stopped_before_any_job(result, tmp_path / "run")
    assert "No such file or directory" in result.stderr and "missing.yaml" in result.stderr


@pytest.mark.xfail(strict=True, reason="Snakemake 9.27.1 opens --configfile outside its try block "
                   "(snakemake/common/configfile.py) and prints a Python traceback; upstream has the same code")
def test_a_config_file_that_does_not_exist_gives_no_traceback(tmp_path):
    result = snakemake(tmp_path / "run", configfile=tmp_path / "missing.yaml", check=False)
    assert "Traceback" not in result.stdout + result.stderr


def truncate(path):
    path.write_bytes(path.read_bytes()[:100])


def replace_with_claims(path):
    path.write_bytes((path.parents[1] / "claims" / "generalization.parquet").read_bytes())


def drop_a_column(path):
    import pyarrow.parquet as pq

    pq.write_table(pq.read_table(path).drop_columns(["accuracy"]), path)


def head_of_another_shape(path):
    save_model(init_head(HeadConfig(vocab_size=8, d_model=8, pe="rope", trained_positions=32), 0), path)


# (file damaged, how, the target whose rule reads it, the rule's log, what the error says)
DAMAGES = [
    ("evaluations/pe~rope/seed~0/offset~1.parquet", truncate, "results/tables/accuracy_by_length.parquet",
     "accuracy_by_length.log", "evaluations/pe~rope/seed~0/offset~1.parquet: not a readable parquet table"),
    ("tables/accuracy_by_length.parquet", replace_with_claims, "results/tables/accuracy_summary.parquet",
     "analyze_generalization.log", "accuracy_by_length.parquet: does not have the accuracy_by_length schema: missing column"),
    ("tables/accuracy_by_length.parquet", drop_a_column, "results/tables/accuracy_summary.parquet",
     "analyze_generalization.log", "accuracy_by_length.parquet: does not have the accuracy_by_length schema: missing column 'accuracy'"),
    ("models/pe~rope/seed~0/offset~1/model.pt", head_of_another_shape, "results/evaluations/pe~rope/seed~0/offset~1.parquet",
     "evaluate/pe~rope/offset~1.log", "model.pt: a AttentionHead saved under another config: d_model 8 where this config has 16"),
]


@pytest.mark.parametrize("damaged, damage, target, log, message", DAMAGES, ids=["truncated", "foreign", "column", "model"])
def test_a_damaged_file_is_named_and_regenerated_once_deleted(smoke_copy, damaged, damage, target, log, message):
    results = smoke_copy / "results"
    before = parquet_files(results)
    path = results / damaged
    damage(path)
    failed = snakemake(smoke_copy, target, check=False)
    assert failed.returncode != 0
    assert message in (results / "logs" / log).read_text()
    assert message in failed.stdout + failed.stderr  # the profile shows a failed job's log
    path.unlink()
    snakemake(smoke_copy, target)
    assert parquet_files(results) == before  # regenerated, bit for bit
    if path.suffix == ".pt":
        assert torch.load(path, weights_only=True)["config"]["d_model"] == 16
