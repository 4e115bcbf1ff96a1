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
    config["sweep"]["seed"] = [7, 8, 9, 10]
    derived_and_checked(config)
    assert config["variants"]["seeds"] == [7, 8, 9] and config["variants"]["offsets"] == [2, 3]
    assert derived_and_checked(changed("variants", "offsets", [1]))["variants"]["offsets"] == [1]


def test_shift_settings_follow_the_sweep_and_the_task_unless_given():
    config = changed("sweep", "offset", [2, 5])
    config["task"].update(train_length_min=6, train_length_max=24, eval_lengths=[24, 96])
    derived_and_checked(config)
    assert config["shift"]["offsets"] == [2, 5] and config["shift"]["lengths"] == [24]
    given = changed("shift", "lengths", [16])
    assert derived_and_checked(given)["shift"]["lengths"] == [16]


def test_cures_seeds_follow_the_sweep_unless_given_and_must_be_sweep_seeds():
    assert derived_and_checked(copy.deepcopy(DEFAULT))["cures"]["seeds"] == DEFAULT["sweep"]["seed"]
    assert derived_and_checked(changed("cures", "seeds", [0, 2]))["cures"]["seeds"] == [0, 2]
    with pytest.raises(ConfigError, match="cures.seeds: seed 9 is not in sweep.seed"):
        derived_and_checked(changed("cures", "seeds", [0, 9]))


def test_transformer_runs_a_subset_of_the_sweep_unless_given():
    config = derived_and_checked(changed("sweep", "seed", [4, 5, 6, 7]))
    assert config["transformer"]["seeds"] == [4, 5, 6]
    assert config["transformer"]["offsets"] == DEFAULT["sweep"]["offset"][:2]
    assert config["transformer"]["pe"] == DEFAULT["sweep"]["pe"]
    assert derived_and_checked(changed("transformer", "seeds", [9]))["transformer"]["seeds"] == [9]


def test_default_transformer_has_three_seeds_two_offsets_rope_and_learned():
    config = derived_and_checked(copy.deepcopy(DEFAULT))["transformer"]
    assert len(config["seeds"]) >= 3 and len(config["offsets"]) >= 2 and {"rope", "learned"} <= set(config["pe"])


@pytest.mark.parametrize("section, key, value", [
    ("train", "steps", "many"), ("task", "eval_lengths", 64), ("model", "d_model", 0), ("train", "stpes", 10),
    ("transformer", "precision", "fp16"),
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
    ("transformer", "pe", ["rotary"], "transformer.pe: unknown positional encoding 'rotary'"),
    ("transformer", "offsets", [8], "transformer.offsets: offset 8 must be smaller than task.train_length_min"),
    ("transformer", "n_heads", 3, "transformer.d_model \\(64\\) must be a multiple of transformer.n_heads"),
    ("transformer", "n_heads", 64, "head width, must be even"),
    ("transformer", "eval_samples", 5000, "transformer.eval_samples \\(5000\\) exceeds task.eval_samples"),
    ("variants", "pe", ["rope", "alibi@slop=1"], "variants.pe: .*alibi has no parameter 'slop'"),
    ("variants", "pe", ["rope@base=100", "rope base"], "variants.pe: .*'rope base' is not of the form"),
    ("variants", "seeds", [0, 9], "variants.seeds: \\[9\\] not in sweep.seed"),
    ("variants", "offsets", [4], "variants.offsets: \\[4\\] not in sweep.offset"),
    ("transformer", "pe", ["rope", "randomized_rope"], "transformer.pe: randomized_rope draws position ids per sequence"),
])
def test_cross_key_checks_name_the_key(section, key, value, message):
    with pytest.raises(ConfigError, match=message):
        derived_and_checked(changed(section, key, value))


def test_the_min_norm_control_needs_an_even_number_of_features_and_a_positive_base():
    config = copy.deepcopy(DEFAULT)
    config["linear"]["min_norm"]["d_model"] = 63
    with pytest.raises(ConfigError, match="linear.min_norm.d_model must be even"):
        derived_and_checked(config)
    config["linear"]["min_norm"].update(d_model=64, rope_base=0.0)
    with pytest.raises(WorkflowError, match="rope_base"):
        validate(config, SCHEMA)
