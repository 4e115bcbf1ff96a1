"""The workflow as users run it: dry runs, lint, a real tiny run, reruns, and bad input."""

import copy
import re
from collections import Counter
from itertools import product

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from snakemake.cli import parse_args

from conftest import REPO, SCHEMA, SMOKE_CONFIG, markdown_rows, snakemake, write_config
from lengthgen.experiments.claims import CLAIMS_BY_NAME
from lengthgen.pipeline.config import derive_settings, prepare_config
from lengthgen.studies.confirmation.runs import confirmation_runs
from lengthgen.report.markdown import MAX_CELL, table_cells
from lengthgen.tables.core import ACCURACY_BY_LENGTH


def test_snakemake_reads_the_default_profile_from_any_working_directory(tmp_path, monkeypatch):
    """Snakemake finds profiles/default beside the Snakefile, wherever it is started, and takes its scheduler
    from it: the greedy one (the integer program it would solve at every job's end costs CPU)."""
    monkeypatch.chdir(tmp_path)
    _, args = parse_args(["--snakefile", str(REPO / "Snakefile"), "--cores", "2"])
    assert args.scheduler == "greedy"
    assert args.rerun_incomplete and args.keep_going
    _, args = parse_args(["--snakefile", str(REPO / "Snakefile"), "--cores", "2", "--scheduler", "ilp"])
    assert args.scheduler == "ilp"  # the command line still wins


def scheduled_jobs(dry_run_output: str) -> Counter:
    """Job counts per rule from the 'Job stats' table of ``snakemake -n``; empty if nothing to do."""
    counts = Counter()
    table = dry_run_output.split("Job stats:", 1)[-1] if "Job stats:" in dry_run_output else ""
    for rule, count in re.findall(r"^(\w+)\s+(\d+)$", table, flags=re.MULTILINE):
        if rule != "total":
            counts[rule] = int(count)
    return counts


def trained_runs(config: dict) -> set:
    """Every (pe, seed, offset) the config trains: the sweep's and the variants'."""
    derive_settings(config)
    sweep, variants = config["sweep"], config["variants"]
    return (set(product(sweep["pe"], sweep["seed"], sweep["offset"]))
            | set(product(variants["pe"], variants["seeds"], variants["offsets"])))


def training_jobs(jobs: Counter) -> int:
    """The single-head training jobs among ``jobs``: one per (pe, offset), every seed inside."""
    return jobs["train_sweep"] + jobs["train_variants"]


def test_default_config_dry_run_trains_each_encoding_and_offset_once_with_every_seed(tmp_path):
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    jobs = scheduled_jobs(snakemake(tmp_path, "-n", configfile=REPO / "config.yaml").stdout)
    runs = trained_runs(config)
    assert training_jobs(jobs) == len({(pe, offset) for pe, _, offset in runs})
    assert len(config["sweep"]["seed"]) == 10 and len(config["variants"]["seeds"]) == 5
    assert jobs["evaluate_sweep"] + jobs["evaluate_variants"] == training_jobs(jobs)
    assert jobs["eval_set"] == len(config["sweep"]["offset"])
    assert jobs["train_linear"] == jobs["train_log_length"] == len(config["sweep"]["offset"])
    assert (jobs["train_transformer"] == jobs["evaluate_transformer"]
            == len(config["sweep"]["pe"]) * len(config["sweep"]["offset"]))


CONFIG_BLOCK = re.compile(r"Configuration used:\n\n```yaml\n(.*?)\n```", flags=re.DOTALL)


def configuration_used(results) -> dict:
    """The config a committed report says its run used: the one its setup appendix prints."""
    return yaml.safe_load(CONFIG_BLOCK.search((results / "appendix" / "setup.md").read_text()).group(1))


def test_the_default_config_filled_is_the_committed_runs():
    # config.yaml with the schema's defaults, and each confirmation run layered over it, is key for key the config
    # its committed RESULTS.md prints: a default moved between config.yaml and the schema, or changed in either,
    # would make the next run differ from the committed one. The report section, text on how this run compares
    # with the previous one, is left out: it may be rewritten before the next run.
    as_given = yaml.safe_load((REPO / "config.yaml").read_text())
    prepared = copy.deepcopy(as_given)
    prepare_config(prepared, SCHEMA)
    runs = confirmation_runs(as_given, prepared, REPO, SCHEMA)
    # The committed results are made with the portable kernels, the default's switch (docs/reproducibility.md); a
    # run from before the key existed ran them without naming them.
    for config, results in [(prepared, REPO / "results"), *((run.prepared, REPO / run.results_dir) for run in runs.values())]:
        committed = {"cpu_kernels": "portable", **configuration_used(results)}
        assert committed["cpu_kernels"] == "portable", results
        assert {**config, "cpu_kernels": "portable", "report": None} == {**committed, "report": None}, results


def test_ci_runs_the_readme_test_command():
    blocks = re.findall(r"```bash\n(.*?)\n```", (REPO / "README.md").read_text(), flags=re.DOTALL)
    test_command = next(block for block in blocks if "pytest" in block)
    assert (REPO / ".ci" / "run").read_text().rstrip().splitlines()[-1] == test_command


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
    log = (smoke_run / "results/logs/train_sweep/pe~rope/offset~1.log").read_text()  # every seed of (rope, 1)
    assert f"step {config['train']['steps']}/{config['train']['steps']}" in log
    training = pd.read_parquet(smoke_run / "results/tables/training.parquet")
    assert len(training[training["family"] == "head"]) == len(trained_runs(config))
    assert training["why"].isna().equals(training["converged"])  # a reason for each model that does not fit
    appendix = smoke_run / "results/appendix"
    assert (appendix / "training.md").read_text().startswith("# Training")
    assert (appendix / "changes.md").exists()  # config.yaml names a previous run
    figure = (smoke_run / "results/figures/generalization.png").read_bytes()
    assert figure.startswith(b"\x89PNG")
    results = (smoke_run / "results/RESULTS.md").read_text()
    assert len(results.splitlines()) <= 150 and "**What we found.**" in "\n".join(results.splitlines()[:40])
    assert "(figures/generalization.png)" in results and "git commit" in (appendix / "setup.md").read_text()
    mean_rope_far = accuracy[(accuracy["pe"] == "rope") & (accuracy["length"] == 32) & (accuracy["offset"] == 1)][
        "accuracy"].mean()
    assert f"{mean_rope_far:.3f}" in (appendix / "generalization.md").read_text()  # its table: the measured numbers
    pages = [path for pattern in ("RESULTS.md", "experiments/*.md", "appendix/*.md")
             for path in (smoke_run / "results").rglob(pattern)]  # every run's report, the confirmation runs' too
    assert len(pages) > 2
    for page in pages:  # no table cell of any page is a paragraph (sections/ are the report's inputs, not pages)
        assert max(map(len, table_cells(page.read_text())), default=0) <= MAX_CELL, page


def test_every_experiment_has_its_figure_section_and_claims(smoke_run):
    config = yaml.safe_load(SMOKE_CONFIG.read_text())
    shift_names = [f"shift_K{offset}" for offset in config["shift"]["offsets"]]
    experiments = ["generalization", "mechanics", *shift_names, "prop1", "frequency", "linear", "variants", "cures",
                   "errors", "rope_bases", "transformer"]  # multiseed judges nothing: no checks
    figures = ["generalization", "mechanics", *(f"shift_equivariance_K{k}" for k in config["shift"]["offsets"]),
               *(f"prop1_validation_K{k}" for k in config["sweep"]["offset"]), "frequency_rank", "linear_control",
               "linear_matched", "pe_variants", "dilution_cures", "error_split", "rope_bases", "transformer_shift",
               "transformer", "multiseed_results"]
    results = smoke_run / "results"
    pages = "\n".join(page.read_text() for page in results.glob("experiments/*.md"))
    for figure in figures:
        assert (results / f"figures/{figure}.png").read_bytes().startswith(b"\x89PNG")
        assert f"(../figures/{figure}.png)" in pages
    claims = pd.read_parquet(results / "tables/claims.parquet")
    assert list(dict.fromkeys(claims["section"])) == experiments
    for experiment, checks in claims.groupby("experiment", sort=False):  # its page, its sections in its appendix
        page = (results / f"experiments/{experiment}.md").read_text()
        details = (results / f"appendix/{experiment}.md").read_text()
        assert all(f"\n## {section}" in details for section in checks["section"].unique())
        evidence = checks[checks["kind"] == "evidence"]
        # Its checks as secondary evidence: the evidence first, every one of them.
        assert len(markdown_rows(page, "|claim|K|statistic|")) == len(evidence)
    linear_curve = pd.read_parquet(smoke_run / "results/models/linear/seed~0/offset~1/training_curve.parquet")
    assert len(linear_curve) == config["linear"]["steps"]
    log_length_curve = pd.read_parquet(smoke_run / "results/models/log_length/seed~0/offset~1/training_curve.parquet")
    assert len(log_length_curve) == config["train"]["steps"]  # trained like the sweep
    cures = pd.read_parquet(smoke_run / "results/tables/cures_by_length.parquet")
    n_sweep = len(config["sweep"]["seed"]) * len(config["sweep"]["offset"]) * len(config["task"]["eval_lengths"])
    assert len(cures) == n_sweep * (2 * 4 + 1)  # rope and learned under 4 cures (none included), the log-length head


def test_the_confirmation_run_is_judged_from_its_own_seeds_by_the_claims_one_rule(smoke_run):
    results = smoke_run / "results"
    tiny = results / "confirm" / "tiny"
    confirmation = yaml.safe_load((REPO / "tests" / "confirm_tiny.yaml").read_text())
    accuracy = pd.read_parquet(tiny / "tables/accuracy_by_length.parquet")
    assert set(accuracy["seed"]) == set(confirmation["sweep"]["seed"])  # its own models, in its own folder
    assert not (tiny / "appendix/replication.md").exists()  # a confirmation run confirms nothing
    judgments = pd.read_parquet(results / "tables/claim_judgments.parquet")
    assert set(judgments["condition"]) >= {"this run", "tiny"}
    by_seed = pd.read_parquet(tiny / "tables/headline_by_seed.parquet")
    for claim, rows in judgments[judgments["condition"] == "tiny"].groupby("claim"):
        primary = by_seed[by_seed["headline"] == CLAIMS_BY_NAME[claim].primary].dropna(subset=["value"])
        assert rows.set_index("offset")["mean"].to_dict() == pytest.approx(
            primary.groupby("offset")["value"].mean().to_dict()), claim
    report = (results / "appendix/replication.md").read_text()
    assert "| claim | tiny" in report
    for claim in CLAIMS_BY_NAME:  # each claim's page has its forest plot over every condition
        assert (results / f"figures/claims/{claim.replace(' ', '_')}.png").read_bytes().startswith(b"\x89PNG")


def cells(markdown: str, first: str) -> list[str]:
    """The cells of the first markdown table row of ``markdown`` whose first cell is ``first``."""
    rows = ([cell.strip() for cell in line.strip().strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("|"))
    return next(row for row in rows if row[0] == first)


def test_transformer_outputs(smoke_run):
    task, config = (yaml.safe_load(SMOKE_CONFIG.read_text())[section] for section in ("task", "transformer"))
    curve = pd.read_parquet(smoke_run / "results/models/transformer/pe~rope/seed~0/offset~1/training_curve.parquet")
    assert len(curve) == config["steps"] and curve["loss"].iloc[-5:].mean() < curve["loss"].iloc[:5].mean()
    by_position = pd.read_parquet(smoke_run / "results/tables/transformer_by_position.parquet")
    runs = len(config["pe"]) * len(config["seeds"]) * len(config["offsets"])
    assert len(by_position) == runs * sum(length - offset for length in task["eval_lengths"]
                                          for offset in config["offsets"])
    in_range = by_position[by_position["position"] < task["train_length_max"]]
    assert in_range["accuracy"].mean() > 0.9  # both encodings learn the task in range, even tiny
    carrier = pd.read_parquet(smoke_run / "results/tables/transformer_carrier.parquet")
    heads = config["n_layers"] * config["n_heads"]
    assert len(carrier) == len(config["seeds"]) * len(config["offsets"]) * heads  # every head of every rope model
    section = (smoke_run / "results/sections/transformer.md").read_text()
    assert f"{carrier['attention_at_offset'].iloc[0]:.3f}" in section


def test_complete_run_has_nothing_left_to_do(smoke_run):
    assert scheduled_jobs(snakemake(smoke_run, "-n").stdout) == Counter()


def test_changing_dpi_reruns_only_figures_and_report(smoke_run, tmp_path):
    config = write_config(tmp_path / "config.yaml", figures={"dpi": 72})
    jobs = scheduled_jobs(snakemake(smoke_run, "-n", configfile=config).stdout)
    assert jobs["plot_generalization"] == 1 and jobs["report"] == 1
    assert jobs["confirm_tiny_plot_generalization"] == 1  # the confirmation run is layered over the changed config
    assert all(rule.removeprefix("confirm_tiny_").startswith("plot_") or rule.removeprefix("confirm_tiny_") in
               {"report", "all"} for rule in jobs), jobs


def test_changing_eval_lengths_trains_nothing(smoke_run, tmp_path):
    config = write_config(tmp_path / "config.yaml", task={"eval_lengths": [8, 12, 32]})
    jobs = scheduled_jobs(snakemake(smoke_run, "-n", configfile=config).stdout)
    assert jobs["evaluate_sweep"] > 0 and jobs["confirm_tiny_evaluate_sweep"] > 0
    points = yaml.safe_load(SMOKE_CONFIG.read_text())["robustness"]["points"]
    prefixes = ["confirm_tiny_", *(f"robust_{point['name']}_" for point in points)]  # the module runs' rules
    own = [next((rule.removeprefix(prefix) for prefix in prefixes if rule.startswith(prefix)), rule) for rule in jobs]
    assert not any(rule.startswith("train_") for rule in own), jobs


def test_changing_training_steps_retrains(smoke_run, tmp_path):
    config = write_config(tmp_path / "config.yaml", train={"steps": 20})
    jobs = scheduled_jobs(snakemake(smoke_run, "-n", configfile=config).stdout)
    runs = trained_runs(yaml.safe_load(SMOKE_CONFIG.read_text()))
    assert training_jobs(jobs) == len({(pe, offset) for pe, _, offset in runs})


def test_changing_an_init_retrains_the_models_it_is_the_init_of(smoke_run, tmp_path):
    """model.init reaches every single head's training params (sweep, variants, linear, log-length) and no
    transformer's; transformer.init the transformers' alone (lengthgen/models/init.py)."""
    runs = trained_runs(yaml.safe_load(SMOKE_CONFIG.read_text()))
    # Without the robustness study: its point init_std_0_1 would change nothing, which the config refuses.
    heads = scheduled_jobs(snakemake(smoke_run, "-n", configfile=write_config(
        tmp_path / "heads.yaml", model={"init": "normal@std=0.1"}, robustness={"points": []})).stdout)
    assert training_jobs(heads) == len({(pe, offset) for pe, _, offset in runs})
    assert heads["train_linear"] > 0 and heads["train_log_length"] > 0 and heads["train_transformer"] == 0
    decoders = scheduled_jobs(snakemake(smoke_run, "-n", configfile=write_config(
        tmp_path / "transformer.yaml", transformer={"init": "normal@std=0.1"})).stdout)
    assert decoders["train_transformer"] > 0 and training_jobs(decoders) == 0 and decoders["train_linear"] == 0


def test_variants_train_their_own_runs_in_folders_named_by_the_encoding(smoke_run):
    config = yaml.safe_load(SMOKE_CONFIG.read_text())
    variants = config["variants"]
    for pe, seed, offset in product(variants["pe"], variants["seeds"], variants["offsets"]):
        assert (smoke_run / f"results/models/pe~{pe}/seed~{seed}/offset~{offset}/model.pt").is_file()
    summary = pd.read_parquet(smoke_run / "results/tables/variants_summary.parquet")
    classes = pd.read_parquet(smoke_run / "results/tables/variants_classes.parquet")
    assert set(summary["pe"]) == set(classes["pe"]) == set(variants["pe"])
    section = (smoke_run / "results/sections/variants.md").read_text()
    predictions = {(pe, int(offset)): measured
                   for pe, offset, _, measured, _, _ in markdown_rows(section, "|encoding|K|accuracyatn=")}
    for row in classes.itertuples():  # every class in the section is the measured one
        assert predictions[row.pe, row.offset] == row.category
    # the sweep's own tables hold the sweep's encodings only
    accuracy = pd.read_parquet(smoke_run / "results/tables/accuracy_by_length.parquet")
    assert set(accuracy["pe"]) == set(config["sweep"]["pe"])


@pytest.mark.parametrize("figure, rule", [("generalization", "plot_generalization"), ("mechanics", "plot_mechanics")])
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
