import copy

import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from conftest import REPO
from lengthgen.config import ConfigError, check_config, derive_settings

SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")
DEFAULT = yaml.safe_load((REPO / "config.yaml").read_text())


def changed(section, key, value):
    config = copy.deepcopy(DEFAULT)
    config[section][key] = value
    return config


def derived_and_checked(config):
    derive_settings(config)
    check_config(config)
    return config


def test_default_config_is_valid():
    config = copy.deepcopy(DEFAULT)
    validate(config, SCHEMA)
    derived_and_checked(config)


def test_variants_seeds_and_offsets_follow_the_sweep_unless_given():
    config = changed("sweep", "offset", [2, 3])
    del config["variants"]["seeds"]
    derived_and_checked(config)
    assert config["variants"]["seeds"] == DEFAULT["sweep"]["seed"] and config["variants"]["offsets"] == [2, 3]
    assert derived_and_checked(changed("variants", "offsets", [1]))["variants"]["offsets"] == [1]


def test_shift_settings_follow_the_sweep_and_the_task_unless_given():
    config = changed("sweep", "offset", [2, 5])
    config["task"].update(train_length_min=6, train_length_max=24, eval_lengths=[24, 96])
    derived_and_checked(config)
    assert config["shift"]["offsets"] == [2, 5] and config["shift"]["lengths"] == [24]
    given = changed("shift", "lengths", [16])
    assert derived_and_checked(given)["shift"]["lengths"] == [16]


@pytest.mark.parametrize("section, key, value", [
    ("train", "steps", "many"), ("task", "eval_lengths", 64), ("model", "d_model", 0), ("train", "stpes", 10),
])
def test_schema_rejects_bad_types_and_unknown_keys(section, key, value):
    with pytest.raises(WorkflowError, match=key):
        validate(changed(section, key, value), SCHEMA)


@pytest.mark.parametrize("section, key, value, message", [
    ("sweep", "pe", ["rope", "rotary"], "sweep.pe: unknown positional encoding 'rotary'"),
    ("sweep", "offset", [1, 8], "sweep.offset: offset 8 must be smaller than task.train_length_min"),
    ("task", "eval_lengths", [16, 2048], "task.eval_lengths: length 2048 exceeds model.max_positions"),
    ("task", "train_length_min", 40, "task.train_length_min \\(40\\) is larger than task.train_length_max"),
    ("model", "d_model", 63, "model.d_model must be even"),
    ("variants", "pe", ["rope", "alibi@slop=1"], "variants.pe: .*alibi has no parameter 'slop'"),
    ("variants", "pe", ["rope@base=100", "rope base"], "variants.pe: .*'rope base' is not of the form"),
    ("variants", "seeds", [0, 9], "variants.seeds: \\[9\\] not in sweep.seed"),
    ("variants", "offsets", [4], "variants.offsets: \\[4\\] not in sweep.offset"),
])
def test_cross_key_checks_name_the_key(section, key, value, message):
    with pytest.raises(ConfigError, match=message):
        derived_and_checked(changed(section, key, value))
