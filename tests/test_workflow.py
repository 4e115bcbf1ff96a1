"""The workflow as users run it: dry runs, lint, a real tiny run, reruns, and bad input."""

import re
from collections import Counter

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from conftest import REPO, SMOKE_CONFIG, snakemake, write_config
from lengthgen.schemas.core import ACCURACY_BY_LENGTH



def scheduled_jobs(dry_run_output: str) -> Counter:
    """Job counts per rule from the 'Job stats' table of ``snakemake -n``; empty if nothing to do."""
    counts = Counter()
    table = dry_run_output.split("Job stats:", 1)[-1] if "Job stats:" in dry_run_output else ""
    for rule, count in re.findall(r"^(\w+)\s+(\d+)$", table, flags=re.MULTILINE):
        if rule != "total":
            counts[rule] = int(count)
    return counts


def test_default_config_dry_run_trains_once_per_encoding_seed_and_offset(tmp_path):
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    jobs = scheduled_jobs(snakemake(tmp_path, "-n", configfile=REPO / "config.yaml").stdout)
    sweep = config["sweep"]
    assert jobs["train"] == len(sweep["pe"]) * len(sweep["seed"]) * len(sweep["offset"])
    assert jobs["evaluate"] == jobs["train"]
    assert jobs["eval_set"] == len(sweep["offset"])


def test_lint_reports_nothing(tmp_path):
    result = snakemake(tmp_path, "--lint")
    assert "Congratulations, your workflow is in a good condition!" in result.stdout + result.stderr


def test_end_to_end_outputs(smoke_run):
    config = yaml.safe_load(SMOKE_CONFIG.read_text())
    accuracy = pd.read_parquet(smoke_run / "results/tables/accuracy_by_length.parquet")
    n_models = len(config["sweep"]["pe"]) * len(config["sweep"]["seed"]) * len(config["sweep"]["offset"])
    assert len(accuracy) == n_models * len(config["task"]["eval_lengths"])
    assert pq.read_schema(smoke_run / "results/tables/accuracy_by_length.parquet").equals(ACCURACY_BY_LENGTH.schema)
    assert accuracy["accuracy"].between(0, 1).all()
    in_range = accuracy[accuracy["in_training_range"]]
    assert in_range["accuracy"].mean() > 0.9  # both encodings learn the task in range, even tiny
    curve = pd.read_parquet(smoke_run / "results/models/pe~rope/seed~0/offset~1/training_curve.parquet")
    assert list(curve["step"]) == list(range(1, config["train"]["steps"] + 1))
    assert curve["loss"].iloc[-10:].mean() < curve["loss"].iloc[:10].mean()
    log = (smoke_run / "results/logs/train/pe~rope/seed~0/offset~1.log").read_text()
    assert f"step {config['train']['steps']}/{config['train']['steps']}" in log
    figure = (smoke_run / "results/figures/base.png").read_bytes()
    assert figure.startswith(b"\x89PNG")
    results = (smoke_run / "results/RESULTS.md").read_text()
    for heading in ("## Setup", "## Verdicts", "## base"):
        assert heading in results
    assert "figures/base.png" in results and "git commit" in results
    mean_rope_far = accuracy[(accuracy["pe"] == "rope") & (accuracy["length"] == 32) & (accuracy["offset"] == 1)][
        "accuracy"].mean()
    assert f"{mean_rope_far:.3f}" in results  # the table in RESULTS.md is the measured numbers


def test_every_experiment_has_its_figure_section_and_claims(smoke_run):
    config = yaml.safe_load(SMOKE_CONFIG.read_text())
    shift_names = [f"shift_K{offset}" for offset in config["shift"]["offsets"]]
    experiments = ["base", "mechanics", *shift_names, "prop1", "frequency", "linear", "multiseed"]
    figures = ["base", "mechanics", *(f"shift_equivariance_K{k}" for k in config["shift"]["offsets"]),
               *(f"prop1_validation_K{k}" for k in config["sweep"]["offset"]), "frequency_rank", "linear_control",
               "multiseed_results"]
    results = (smoke_run / "results/RESULTS.md").read_text()
    for figure in figures:
        assert (smoke_run / f"results/figures/{figure}.png").read_bytes().startswith(b"\x89PNG")
        assert f"(figures/{figure}.png)" in results
    claims = pd.read_parquet(smoke_run / "results/tables/claims.parquet")
    assert list(dict.fromkeys(claims["experiment"])) == experiments
    for experiment in experiments:
        assert f"\n## {experiment}" in results
        checks = claims[claims["experiment"] == experiment]
        held = f"{int(checks['holds'].sum())}/{len(checks)}"
        assert f"| {experiment} | {held} | {checks['verdict'].iloc[0]} |" in results
    linear_curve = pd.read_parquet(smoke_run / "results/models/linear/seed~0/offset~1/training_curve.parquet")
    assert len(linear_curve) == config["linear"]["steps"]


def test_complete_run_has_nothing_left_to_do(smoke_run):
    assert scheduled_jobs(snakemake(smoke_run, "-n").stdout) == Counter()


def test_changing_dpi_reruns_only_figures_and_report(smoke_run, tmp_path):
    config = write_config(tmp_path / "config.yaml", figures={"dpi": 72})
    jobs = scheduled_jobs(snakemake(smoke_run, "-n", configfile=config).stdout)
    assert jobs["plot_base"] == 1 and jobs["report"] == 1
    assert all(rule.startswith("plot_") or rule in {"report", "all"} for rule in jobs), jobs


def test_changing_eval_lengths_trains_nothing(smoke_run, tmp_path):
    config = write_config(tmp_path / "config.yaml", task={"eval_lengths": [8, 12, 32]})
    jobs = scheduled_jobs(snakemake(smoke_run, "-n", configfile=config).stdout)
    assert jobs["evaluate"] > 0 and jobs["train"] == 0 and jobs["train_linear"] == 0


def test_changing_training_steps_retrains(smoke_run, tmp_path):
    config = write_config(tmp_path / "config.yaml", train={"steps": 20})
    jobs = scheduled_jobs(snakemake(smoke_run, "-n", configfile=config).stdout)
    assert jobs["train"] == 8


@pytest.mark.parametrize("figure, rule", [("base", "plot_base"), ("mechanics", "plot_mechanics")])
def test_regenerating_a_single_figure(smoke_copy, figure, rule):
    path = smoke_copy / f"results/figures/{figure}.png"
    path.unlink()
    result = snakemake(smoke_copy, f"results/figures/{figure}.png")
    assert path.exists()
    assert set(scheduled_jobs(result.stdout + result.stderr)) == {rule}


def test_bad_config_stops_before_any_job_and_names_the_key(smoke_copy, tmp_path):
    bad = write_config(tmp_path / "config.yaml", sweep={"offset": [1, 9]})
    before = {path: path.stat().st_mtime_ns for path in (smoke_copy / "results").rglob("*") if path.is_file()}
    result = snakemake(smoke_copy, configfile=bad, check=False)
    assert result.returncode != 0
    assert "sweep.offset" in result.stdout + result.stderr
    after = {path: path.stat().st_mtime_ns for path in (smoke_copy / "results").rglob("*") if path.is_file()}
    assert after == before
