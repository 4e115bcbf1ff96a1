"""Which experiments a config runs, and the reasons for the others (lengthgen/experiments/catalog.py)."""

import copy

import pandas as pd
import pytest
import yaml

from conftest import REPO, SCHEMA
from lengthgen.pipeline.config import prepare_config
from lengthgen.experiments.multiseed import analysis as multiseed
from lengthgen.experiments.catalog import CATALOG, Experiment, plan, seeds, trained
from lengthgen.experiments.declaration import schema_of

DEFAULT = yaml.safe_load((REPO / "config.yaml").read_text())


def config_with(**sweep):
    config = copy.deepcopy(DEFAULT)
    config["sweep"].update(sweep)
    prepare_config(config, SCHEMA)
    return config


def test_the_default_config_runs_every_experiment_in_report_order():
    result = plan(config_with())
    assert result.experiments == [experiment.name for experiment in CATALOG]
    assert result.sections == ["generalization", "mechanics", "shift_K1", "shift_K2", "shift_K3", "prop1", "frequency",
                               "linear", "variants", "cures", "errors", "rope_bases", "transformer", "multiseed"]
    assert result.left_out == {}


def test_rope_alone_leaves_out_what_compares_it_with_learned():
    result = plan(config_with(pe=["rope"]))
    assert set(result.left_out) == {"generalization", "mechanics", "cures", "errors", "transformer"}
    assert result.left_out["generalization"] == "needs rope and learned in sweep.pe, which has rope (missing: learned)"
    assert "shift_K1" in result.sections and "prop1" in result.sections and "multiseed" in result.sections


def test_learned_alone_leaves_out_what_needs_rope():
    result = plan(config_with(pe=["learned"]))
    assert set(result.left_out) == {"generalization", "mechanics", "prop1", "frequency", "cures", "errors", "transformer"}
    assert result.sections == ["shift_K1", "shift_K2", "shift_K3", "linear", "variants", "rope_bases", "multiseed"]


def test_one_seed_leaves_out_multiseed():
    result = plan(config_with(seed=[3]))
    assert result.left_out == {"multiseed": "needs at least 2 seeds in sweep.seed, which has 1"}


def test_a_new_experiment_is_one_entry():
    novel = Experiment("novel", reads={}, settings=(), tables=(), figures=(), needs=(trained("nope"), seeds(3)))
    catalog = [*CATALOG, novel]
    assert plan(config_with(), catalog).left_out == {
        "novel": "needs nope in sweep.pe, which has rope, learned (missing: nope)"}
    assert plan(config_with(pe=["rope", "learned", "nope"]), catalog).sections[-1] == "novel"


@pytest.mark.parametrize("pe", [["rope"], ["learned"], ["rope", "learned"]])
def test_multiseed_reads_headlines_only_of_experiments_that_run(pe):
    result = plan(config_with(pe=pe))
    reads = next(experiment for experiment in result.running if experiment.name == "multiseed").reads
    headlines = multiseed.headlines_of(dict.fromkeys(reads))
    left_out = {schema_of(table) for experiment in CATALOG if experiment.name in result.left_out
                for table in experiment.headline_tables}
    sources = {source for headline in headlines for source in headline.sources}
    assert headlines and not sources & left_out
    assert {table.schema_name for table in reads.values()} == sources
