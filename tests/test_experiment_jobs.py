"""What an experiment's analyze_ and plot_ jobs read, write and are given (lengthgen/pipeline/experiment_jobs.py),
from its declaration and the tiny config."""
from types import SimpleNamespace

import pytest
import yaml

from conftest import REPO, SCHEMA, SMOKE_CONFIG
from lengthgen.experiments.catalog import CATALOG
from lengthgen.experiments.declaration import EvalSets, Evaluations, Models, RangeFits, Table, TrainingCurves
from lengthgen.pipeline.config import prepare_config
from lengthgen.pipeline.experiment_jobs import ExperimentJobs, per_job, section_name

EXPERIMENTS = {experiment.name: experiment for experiment in CATALOG}


@pytest.fixture(scope="module")
def jobs():
    config = yaml.safe_load(SMOKE_CONFIG.read_text())
    prepare_config(config, SCHEMA)
    return ExperimentJobs(config, "out", REPO)


def test_each_declared_input_names_its_files(jobs):
    assert jobs.source_files(Table("accuracy_by_length")) == ["out/tables/accuracy_by_length.parquet"]
    assert jobs.source_files(EvalSets()) == ["out/data/eval/offset~1.parquet", "out/data/eval/offset~2.parquet"]
    assert jobs.source_files(EvalSets(), offset=2) == ["out/data/eval/offset~2.parquet"]
    assert jobs.source_files(Models(pe=("rope",)), offset=1) == [
        "out/models/pe~rope/seed~0/offset~1/model.pt", "out/models/pe~rope/seed~1/offset~1/model.pt"]
    assert jobs.source_files(Evaluations("variants"))[:1] == ["out/evaluations/pe~rope/seed~0/offset~2.parquet"]
    assert jobs.source_files(RangeFits("linear"))[0] == "out/models/linear/seed~0/offset~1/range_fit.parquet"
    assert jobs.source_files(TrainingCurves("transformer")) == [
        f"out/models/transformer/pe~{pe}/seed~0/offset~1/training_curve.parquet" for pe in ("rope", "learned")]


def test_models_come_with_their_runs_and_the_settings_their_files_hold(jobs):
    details = jobs.source_details(Models("log_length"), offset=2)
    assert details["runs"] == [{"pe": "rope", "seed": seed, "offset": 2} for seed in jobs.config["cures"]["seeds"]]
    assert details["expected"]["logit_scale"] == "log_length"
    assert details["expected"]["vocab_size"] == jobs.config["task"]["vocab_size"]
    assert jobs.source_details(EvalSets("shift.offsets")) == {"offsets": jobs.config["shift"]["offsets"]}
    assert jobs.source_details(Table("claims")) == {}


def test_a_per_offset_experiment_has_a_section_table_figure_and_log_per_offset(jobs):
    shift = EXPERIMENTS["shift"]
    assert jobs.sections(shift) == {f"shift_K{offset}": offset for offset in jobs.config["shift"]["offsets"]}
    assert jobs.tables(shift, 1) == {"shift_changes": "out/tables/shift_changes_K1.parquet"}
    assert jobs.tables(shift) == {"shift_changes": "out/tables/shift_changes_K{offset}.parquet"}
    assert jobs.figures(shift, 1) == ["shift_equivariance_K1"]
    assert jobs.log("analyze_shift", shift) == "out/logs/analyze_shift/K{offset}.log"
    assert jobs.settings(shift, 1)["offset"] == 1
    assert per_job(shift, lambda offset: section_name(shift, offset))(SimpleNamespace(offset="1")) == "shift_K1"


def test_an_experiment_of_one_job(jobs):
    prop1 = EXPERIMENTS["prop1"]
    assert jobs.sections(prop1) == {"prop1": None}
    # one figure per sweep offset, drawn by its one job
    assert jobs.figures(prop1) == [f"prop1_validation_K{offset}" for offset in jobs.config["sweep"]["offset"]]
    assert jobs.log("plot_prop1", prop1) == "out/logs/plot_prop1.log"
    settings = jobs.settings(prop1)
    assert settings["prop1"] == {"n_samples": jobs.config["prop1"]["n_samples"]} and "offset" not in settings
    assert settings["task"].items() <= jobs.config["task"].items()
    assert jobs.figure_tables(prop1)["accuracy_by_length"] == ("out/tables/accuracy_by_length.parquet",
                                                               "accuracy_by_length")
    assert per_job(prop1, lambda offset: offset)(SimpleNamespace()) is None


def test_sections_draw_their_bootstrap_apart(jobs):
    first, second = jobs.bootstrap("shift_K1"), jobs.bootstrap("shift_K2")
    assert first["resamples"] == second["resamples"] == jobs.config["bootstrap"]["resamples"]
    assert first["seed"] != second["seed"] and jobs.bootstrap("shift_K1") == first


def test_a_job_runs_its_experiments_modules_and_the_schemas_it_reads(jobs):
    code = {fingerprint.split("@")[0] for fingerprint in jobs.code(EXPERIMENTS["prop1"], "analyze.py")}
    assert {"lengthgen/experiments/prop1/analysis.py", "lengthgen/experiments/runner.py",
            "lengthgen/experiments/prop1/tables.py"} <= code
    assert "lengthgen/experiments/prop1/figures.py" not in code
    plot = {fingerprint.split("@")[0] for fingerprint in jobs.code(EXPERIMENTS["prop1"], "plot.py")}
    assert {"lengthgen/experiments/prop1/figures.py", "lengthgen/experiments/prop1/section.py"} <= plot


def test_a_caption_is_the_figures_own_else_its_experiments(jobs):
    for experiment in CATALOG:
        for figure in experiment.figures:
            caption = jobs.caption(experiment, figure)
            assert caption is None or (REPO / "workflow" / "rules" / caption).resolve().is_file()
