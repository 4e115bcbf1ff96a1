"""The table of model families (lengthgen/experiments/families.py): each family's runs under a config, where they
live, the settings its models are built and trained with; and the model dataclasses' defaults, the schema's alone."""
import ast
import copy
import dataclasses
import itertools
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, SCHEMA, SMOKE_CONFIG
from lengthgen.experiments import families
from lengthgen.experiments.catalog import CATALOG
from lengthgen.experiments.declaration import Evaluations, Models, RangeFits, TrainingCurves
from lengthgen.pipeline.config import load_schema, prepare_config


def prepared(path):
    config = yaml.safe_load(path.read_text())
    prepare_config(config, SCHEMA)
    return config


@pytest.fixture(scope="module")
def smoke():
    return prepared(SMOKE_CONFIG)


@pytest.fixture(scope="module")
def default():
    return prepared(REPO / "config.yaml")


def test_every_family_an_experiment_declares_is_in_the_table():
    declared = {source.family for experiment in CATALOG for source in experiment.reads.values()
                if isinstance(source, (Models, Evaluations, RangeFits, TrainingCurves))}
    assert declared <= set(families.FAMILIES)
    with pytest.raises(KeyError, match="no model family 'variant'.*sweep, variants"):
        families.runs("variant", {})


def test_a_familys_runs_are_its_config_grid_in_order(smoke):
    sweep = families.runs("sweep", smoke)
    assert sweep == [{"pe": pe, "seed": seed, "offset": offset} for pe, seed, offset in itertools.product(
        smoke["sweep"]["pe"], smoke["sweep"]["seed"], smoke["sweep"]["offset"])]
    assert families.runs("variants", smoke, pe=("alibi_learned",)) == [{"pe": "alibi_learned", "seed": 0, "offset": 2}]
    assert families.runs("sweep", smoke, offset=2) == [run for run in sweep if run["offset"] == 2]
    # the log-length head: rope at every cures seed (every sweep seed, derived) and sweep offset
    assert families.runs("log_length", smoke) == [{"pe": "rope", "seed": seed, "offset": offset}
                                                  for seed in smoke["sweep"]["seed"] for offset in smoke["sweep"]["offset"]]
    assert families.runs("transformer", smoke) == [{"pe": pe, "seed": 0, "offset": 1} for pe in ("rope", "learned")]


def test_runs_live_in_their_familys_folder():
    run = {"pe": "rope@base=100", "seed": 3, "offset": 2}
    assert families.run_path("sweep", run) == families.run_path("variants", run) == "pe~rope@base=100/seed~3/offset~2"
    assert families.run_path("linear", run) == "linear/seed~3/offset~2"
    assert families.run_path("log_length") == "log_length/seed~{seed}/offset~{offset}"
    assert families.run_path("transformer") == "transformer/pe~{pe}/seed~{seed}/offset~{offset}"


def test_files_are_one_per_run(smoke):
    runs = families.runs("linear", smoke)
    assert families.model_files("linear", smoke, "training_curve.parquet") == [
        f"models/linear/seed~{run['seed']}/offset~{run['offset']}/training_curve.parquet" for run in runs]
    assert families.evaluation_files("transformer", smoke) == [
        "evaluations/transformer/pe~rope/seed~0/offset~1.parquet",
        "evaluations/transformer/pe~learned/seed~0/offset~1.parquet"]


def test_variants_train_only_the_encodings_the_sweep_does_not(smoke):
    assert families.trained_encodings("sweep", smoke) == ["rope", "learned"]
    assert families.trained_encodings("variants", smoke) == [
        pe for pe in smoke["variants"]["pe"] if pe not in smoke["sweep"]["pe"]]
    assert "rope" not in families.trained_encodings("variants", smoke)
    only_shared = {**smoke, "variants": {**smoke["variants"], "pe": ["rope"]}}
    assert families.trained_encodings("variants", only_shared) == []


def test_a_job_trains_every_seed_of_one_pe_and_offset(smoke):
    assert families.job_runs("variants", smoke, {"pe": "t5", "offset": "2"}) == [{"pe": "t5", "seed": 0, "offset": 2}]
    # a family of one encoding has no {pe} in its folders: its jobs train that encoding
    assert families.job_runs("linear", smoke, {"offset": "1"}) == [
        {"pe": "rope", "seed": seed, "offset": 1} for seed in smoke["sweep"]["seed"]]


def test_model_settings_are_the_config_s_with_the_longest_training_length(smoke):
    trained_positions = smoke["task"]["train_length_max"]
    assert families.model_settings("sweep", smoke) == {**smoke["model"], "trained_positions": trained_positions}
    assert families.model_settings("linear", smoke) == {
        **smoke["model"], "attention": "linear", "rope_base": smoke["linear"]["rope_base"],
        "trained_positions": trained_positions}
    assert families.model_settings("log_length", smoke)["reference_length"] == trained_positions
    transformer = families.model_settings("transformer", smoke)
    assert (transformer["d_model"], transformer["init"], transformer["rope_base"]) == (
        smoke["transformer"]["d_model"], smoke["transformer"]["init"], smoke["model"]["rope_base"])
    # a model file holds the task's vocabulary first, then the model's settings
    assert list(families.expected_settings("sweep", smoke)) == ["vocab_size", *families.model_settings("sweep", smoke)]
    assert families.expected_settings("sweep", smoke)["vocab_size"] == smoke["task"]["vocab_size"]


def test_the_matched_softmax_head_is_arm_2_with_its_softmax(default, smoke):
    """The linear experiment's matched control: arm 2's base, seeds, offsets and training, softmax attention, its
    own folder; every other setting the linear head's."""
    for config in (default, smoke):
        linear, matched = (families.model_settings(name, config) for name in ("linear", "linear_softmax"))
        assert (matched["attention"], linear["attention"]) == ("softmax", "linear")
        assert matched["rope_base"] == linear["rope_base"] == config["linear"]["rope_base"] != config["model"]["rope_base"]
        assert {key: value for key, value in matched.items() if key != "attention"} == {
            key: value for key, value in linear.items() if key != "attention"}
        assert families.train_settings("linear_softmax", config) == families.train_settings("linear", config)
        assert families.train_settings("linear_softmax", config)["steps"] == config["linear"]["steps"]
        assert families.runs("linear_softmax", config) == families.runs("linear", config)
        assert families.trained_seeds("linear_softmax", config) == config["sweep"]["seed"]
    assert families.run_path("linear_softmax", {"pe": "rope", "seed": 3, "offset": 2}) == "linear_softmax/seed~3/offset~2"
    assert families.expected_settings("linear_softmax", smoke)["attention"] == "softmax"  # a linear head's file is refused


def test_train_settings_are_each_familys_section_sorted(smoke):
    assert families.train_settings("sweep", smoke) == smoke["train"]
    assert list(families.train_settings("sweep", smoke)) == sorted(smoke["train"])
    assert families.train_settings("linear", smoke) == {
        key: smoke["linear"][key] for key in ("batch_size", "lr", "steps", "warmup_fraction")}
    assert families.train_settings("transformer", smoke)["lr"] == smoke["transformer"]["lr"]
    changed = copy.deepcopy(smoke)
    changed["transformer"]["eval_samples"] += 1  # evaluation only: no training setting
    assert families.train_settings("transformer", changed) == families.train_settings("transformer", smoke)


def test_range_fits_group_the_single_heads_with_shared_runs_once(default):
    groups = families.range_fit_files(default)
    assert list(groups) == ["head", "linear", "linear_softmax", "log_length", "transformer"]
    heads = groups["head"]
    assert len(heads) == len(set(heads))
    shared = {"pe~rope/seed~0/offset~1", "pe~learned/seed~4/offset~3"}  # runs of both the sweep and the variants
    assert all(sum(path == f"models/{run}/range_fit.parquet" for path in heads) == 1 for run in shared)
    expected = {tuple(run.values()) for name in ("sweep", "variants") for run in families.runs(name, default)}
    assert len(heads) == len(expected)
    assert heads[:len(families.runs("sweep", default))] == families.model_files("sweep", default, "range_fit.parquet")


def test_the_report_names_each_summary_family():
    assert set(families.display_names()) == {each.range_fit_family for each in families.FAMILIES.values()}
    assert families.single_softmax_heads() == ("head", "log_length")


def test_the_default_config_trains_every_family(default):
    trained = [name for name in families.FAMILIES if families.trained_encodings(name, default)]
    assert trained == list(families.FAMILIES)


def test_the_families_import_no_torch():
    code = "import sys, lengthgen.experiments.families, lengthgen.pipeline.experiment_jobs; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                            env={"PYTHONPATH": str(REPO)})
    assert result.stdout.strip() == "False"


# --- Defaults: the schema's, written once.

MODEL_CLASSES = {"lengthgen/models/head.py": ("HeadConfig", ("model",)),
                 "lengthgen/models/transformer.py": ("TransformerConfig", ("transformer", "model")),
                 "lengthgen/models/encodings/base.py": ("EncodingConfig", ("model",)),
                 "lengthgen/training/loop.py": ("TrainConfig", ("train",))}


def literal_defaults(path, class_name):
    """The fields of ``class_name`` in ``path`` whose default is written there as a literal value."""
    tree = ast.parse((REPO / path).read_text())
    body = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == class_name).body
    return {node.target.id for node in body if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Constant)}


@pytest.mark.parametrize("path", MODEL_CLASSES)
def test_a_model_dataclass_writes_no_default_the_schema_has(path):
    class_name, sections = MODEL_CLASSES[path]
    properties = load_schema(SCHEMA)["properties"]
    schema_keys = {key for section in sections for key, spec in properties[section]["properties"].items()
                   if "default" in spec}
    assert not literal_defaults(path, class_name) & schema_keys


def test_the_model_dataclasses_take_the_schemas_defaults():
    from lengthgen.models.head import HeadConfig
    from lengthgen.models.transformer import TransformerConfig

    properties = load_schema(SCHEMA)["properties"]
    for config_class, sections in ((HeadConfig, ("model",)), (TransformerConfig, ("transformer", "model"))):
        defaults = {field.name: field.default for field in dataclasses.fields(config_class)}
        for section in sections:  # the first section that has a key gives its default
            for key, spec in properties[section]["properties"].items():
                if key in defaults and "default" in spec and section == next(
                        each for each in sections if key in properties[each]["properties"]):
                    assert defaults[key] == spec["default"], (config_class.__name__, key)
    assert HeadConfig(8, 16, "learned", 32).learned_init_std == properties["model"]["properties"][
        "learned_init_std"]["default"]


@pytest.mark.parametrize("name", families.FAMILIES)
def test_a_job_is_given_every_setting_the_schema_defaults_so_the_defaults_shape_no_output(name, default):
    """The dataclasses take the schema's defaults (lengthgen/models/defaults.py), but a training job is given every
    such setting in its params, so the schema is no input of any job and an edit to it retrains nothing."""
    from lengthgen.models.head import HeadConfig
    from lengthgen.models.transformer import TransformerConfig

    config_class = {"head": HeadConfig, "transformer": TransformerConfig}[families.family(name).trainer]
    properties = load_schema(SCHEMA)["properties"]
    defaulted = {field.name for field in dataclasses.fields(config_class)
                 if any("default" in properties[section]["properties"].get(field.name, {})
                        for section in ("model", "transformer"))}
    assert defaulted and defaulted <= set(families.model_settings(name, default))
