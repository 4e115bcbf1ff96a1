"""The config as users write it: derived settings, and one readable error per mistake.

Every bad configuration below goes through ``prepare_config``, the function the workflow runs
before any job (common.smk); a representative subset also goes through the real command line
(tests/test_bad_input.py).
"""

import copy
import os

import pytest
import yaml

from conftest import REPO, SCHEMA, SMOKE_CONFIG
from lengthgen.pipeline.config import ConfigError, describe, fill_defaults, job_task, load_schema, prepare_config
from lengthgen.models.encodings_table import DEFAULT_NOISE_MAX_LENGTH

DEFAULT = yaml.safe_load((REPO / "config.yaml").read_text())
SMOKE = yaml.safe_load(SMOKE_CONFIG.read_text())


def prepared(config):
    config = copy.deepcopy(config)
    prepare_config(config, SCHEMA)
    return config


def test_default_and_smoke_configs_are_valid():
    prepared(DEFAULT)
    prepared(SMOKE)


def test_left_out_settings_follow_the_sweep_and_the_task():
    config = copy.deepcopy(DEFAULT)
    config["sweep"].update(pe=["learned"], offset=[2, 5])
    config["task"].update(train_length_min=6, train_length_max=24, eval_lengths=[16, 24, 96, 300])
    derived = prepared(config)
    assert derived["shift"]["offsets"] == [2, 5]
    assert derived["shift"]["lengths"] == [24]  # the longest evaluation length in the training range
    assert derived["shift"]["pe_at_init"] == ["rope", "sinusoidal"]  # what the shift claims compare, untrained


def test_given_settings_are_kept():
    config = copy.deepcopy(DEFAULT)
    config["shift"].update(lengths=[16], pe_at_init=[])
    derived = prepared(config)
    assert derived["shift"]["lengths"] == [16] and derived["shift"]["pe_at_init"] == []


def test_schema_defaults_are_filled():
    config = copy.deepcopy(SMOKE)
    del config["task"]["eval_seed"], config["train"]["log_every"]
    derived = prepared(config)
    assert derived["task"]["eval_seed"] == 0 and derived["train"]["log_every"] == 100
    assert derived["results_dir"] == "results" and derived["device"] == "cpu"


@pytest.mark.parametrize("config", [DEFAULT, SMOKE, {key: value for key, value in SMOKE.items()
                                                    if key not in ("figures", "bootstrap", "confirmation", "robustness")}],
                         ids=["default", "smoke", "sections left out"])
def test_defaults_are_filled_as_snakemakes_validate_fills_them(config):
    # fill_defaults replaced snakemake.utils.validate(set_default=True), which parsed the schema file at every call
    # (twice per config with ours, 59 parses a dry run): the same values, types and key order.
    from snakemake.utils import validate

    ours, snakemakes = copy.deepcopy(config), copy.deepcopy(config)
    fill_defaults(ours, load_schema(SCHEMA))
    validate(snakemakes, str(SCHEMA), set_default=True)
    assert repr(ours) == repr(snakemakes)


def test_configs_share_no_default_with_each_other_or_the_cached_schema():
    first, second = prepared(SMOKE), prepared(SMOKE)
    first["linear"]["min_norm"]["sweep_d_model"].append(2048)
    first["robustness"]["experiments"].clear()
    assert second["linear"]["min_norm"]["sweep_d_model"] == [64, 256, 1024]
    assert prepared(SMOKE) == second
    assert load_schema(SCHEMA) == yaml.safe_load(SCHEMA.read_text())


def test_an_edited_schema_file_is_read_again(tmp_path):
    # The parsed schema is cached on the file's path, mtime and size: an edit that keeps one of the two is still seen.
    schema = tmp_path / "schema.yaml"
    schema.write_text("type: object\nrequired: [a]\n")
    stamp = schema.stat().st_mtime_ns
    assert load_schema(schema)["required"] == ["a"]
    schema.write_text("type: object\nrequired: [b]\n")  # the same size, a later mtime
    os.utime(schema, ns=(stamp + 10**9, stamp + 10**9))
    assert load_schema(schema)["required"] == ["b"]
    schema.write_text("type: object\nrequired: [c, d]\n")  # another size, the same mtime
    os.utime(schema, ns=(stamp + 10**9, stamp + 10**9))
    assert load_schema(schema)["required"] == ["c", "d"]


def defaults_repeated(config: dict, schema: dict, where: str = "") -> list[str]:
    """The keys of ``config`` set to the default ``schema`` gives them."""
    repeated = []
    for key, value in config.items():
        key_schema = schema["properties"][key]
        if isinstance(value, dict) and "properties" in key_schema:
            repeated += defaults_repeated(value, key_schema, f"{where}{key}.")
        elif "default" in key_schema and key_schema["default"] == value:
            repeated.append(f"{where}{key}")
    return repeated


def test_config_yaml_sets_only_what_differs_from_the_schemas_defaults():
    # A default lives in the schema alone: repeated in config.yaml, the two could disagree, and config.yaml's won.
    assert defaults_repeated(DEFAULT, yaml.safe_load(SCHEMA.read_text())) == []
    assert defaults_repeated({"model": {"d_model": 64, "rope_base": 10000.0}}, yaml.safe_load(SCHEMA.read_text())) == [
        "model.rope_base"]


def test_the_filled_config_lists_its_keys_in_the_schemas_order():
    config = copy.deepcopy(SMOKE)
    config = {"train": config.pop("train"), **config}  # a file's order
    config["train"] = dict(reversed(config["train"].items()))
    schema = yaml.safe_load(SCHEMA.read_text())
    filled = prepared(config)
    assert list(filled) == [key for key in schema["properties"] if key in filled]
    assert list(filled["train"]) == list(schema["properties"]["train"]["properties"])
    assert list(filled)[:2] == ["results_dir", "device"]


def test_the_experiments_settings_follow_the_sweep_unless_given():
    config = copy.deepcopy(DEFAULT)
    config["sweep"].update(seed=[7, 8, 9, 10], offset=[2, 3, 5])
    derived = prepared(config)
    assert derived["variants"]["seeds"] == [7, 8, 9, 10] and derived["variants"]["offsets"] == [2, 3, 5]
    assert derived["cures"]["seeds"] == [7, 8, 9, 10]
    assert derived["transformer"]["seeds"] == [7, 8, 9] and derived["transformer"]["offsets"] == [2, 3, 5]
    assert derived["transformer"]["pe"] == DEFAULT["sweep"]["pe"]
    given = copy.deepcopy(DEFAULT)
    given["variants"]["offsets"], given["cures"]["seeds"], given["transformer"]["seeds"] = [1], [0, 2], [4]
    derived = prepared(given)
    assert derived["variants"]["offsets"] == [1] and derived["cures"]["seeds"] == [0, 2]
    assert derived["transformer"]["seeds"] == [4]


def test_default_transformer_has_three_seeds_every_offset_rope_and_learned():
    config = prepared(DEFAULT)["transformer"]
    assert len(config["seeds"]) >= 3 and config["offsets"] == DEFAULT["sweep"]["offset"]
    assert {"rope", "learned"} <= set(config["pe"])


def with_change(path: str, value):
    """The smoke config with the key at dotted ``path`` set to ``value`` (DELETE: removed)."""
    config = copy.deepcopy(SMOKE)
    *sections, key = path.split(".")
    target = config
    for section in sections:
        target = target.setdefault(section, {})
    if value is DELETE:
        del target[key]
    else:
        target[key] = value
    return config


class _Delete:
    """Marks a key ``with_change`` removes. Its repr is fixed, so the test ids that show it are the same in every
    process (mutmut and pytest-xdist match tests by id across processes; an object()'s repr has its address)."""

    def __repr__(self) -> str:
        return "DELETE"


DELETE = _Delete()

# (key set, value, the start of the message: the key, what is wrong; then what must follow "allowed:")
BAD_CONFIGS = [
    # wrong types, and non-numeric strings
    ("train.steps", "many", "train.steps: 'many' is not of type 'integer'", "an integer >= 1"),
    ("train.lr", "fast", "train.lr: 'fast' is not of type 'number'", "a number > 0"),
    ("prop1.n_samples", "4k", "prop1.n_samples: '4k' is not of type 'integer'", "an integer >= 1"),
    ("task.eval_lengths", 64, "task.eval_lengths: 64 is not of type 'array'", "a non-empty list of distinct integers >= 2"),
    ("sweep.pe", "rope", "sweep.pe: 'rope' is not of type 'array'", "a non-empty list of distinct texts"),
    ("task", None, "task: None is not of type 'object'", "a section with keys vocab_size"),
    # a number YAML reads as text (1e-3 without a dot)
    ("train.lr", "1e-3", "train.lr: '1e-3' is not of type 'number' (YAML reads 1e-3 as text", "a number > 0"),
    # booleans where numbers go (JSON schema does not count true as an integer)
    ("train.steps", True, "train.steps: True is not of type 'integer'", "an integer >= 1"),
    ("sweep.seed", [0, True], "sweep.seed: True is not of type 'integer' (item 2)", "a non-empty list of distinct integers >= 0"),
    ("linear.lr", False, "linear.lr: False is not of type 'number'", "a number > 0"),
    # zero or negative sizes
    ("model.d_model", 0, "model.d_model: 0 is less than the minimum of 2", "an integer >= 2"),
    ("train.batch_size", -5, "train.batch_size: -5 is less than the minimum of 1", "an integer >= 1"),
    ("task.vocab_size", 1, "task.vocab_size: 1 is less than the minimum of 2", "an integer >= 2"),
    ("task.eval_samples", 0, "task.eval_samples: 0 is less than the minimum of 1", "an integer >= 1"),
    ("linear.lr", 0, "linear.lr: 0 is less than or equal to the minimum of 0", "a number > 0"),
    ("figures.dpi", 5, "figures.dpi: 5 is less than the minimum of 10", "an integer >= 10"),
    ("model.rope_base", 1, "model.rope_base: 1 is less than or equal to the minimum of 1", "a number > 1"),
    ("results_dir", "", "results_dir: '' should be non-empty", "a folder path"),
    # unknown encodings
    ("sweep.pe", ["rope", "rotary"], "sweep.pe: unknown positional encoding 'rotary'", "learned, nope, randomized"),
    ("shift.pe_at_init", ["alibi2"], "shift.pe_at_init: unknown positional encoding 'alibi2'", "learned, nope"),
    # empty or duplicate sweep lists
    ("sweep.pe", [], "sweep.pe: [] should be non-empty", "a non-empty list of distinct texts"),
    ("sweep.seed", [0, 0], "sweep.seed: [0, 0] has non-unique elements", "a non-empty list of distinct integers >= 0"),
    ("sweep.offset", [], "sweep.offset: [] should be non-empty", "a non-empty list of distinct integers >= 1"),
    ("sweep.offset", [0], "sweep.offset: 0 is less than the minimum of 1 (item 1)", "a non-empty list"),
    # offsets too large
    ("sweep.offset", [1, 9], "sweep.offset: offset 9 is not shorter than task.train_length_min (4)", "offsets < 4"),
    ("shift.offsets", [3], "shift.offsets: [3] not in sweep.offset [1, 2]", "values of sweep.offset"),
    # a training range whose minimum exceeds its maximum
    ("task.train_length_min", 10, "task.train_length_min (10) is larger than task.train_length_max (8)", "min <= max"),
    # evaluation lengths past a randomized encoding's id range, or not fitting the task
    ("variants.pe", ["randomized_rope@noise_max_length=16"],
     "variants.pe: randomized_rope@noise_max_length=16 draws position ids from [0, 16), fewer than the longest "
     "task.eval_lengths (32)", "randomized_rope@noise_max_length=N with N >= 32"),
    ("task.eval_lengths", [8, 16], "task.eval_lengths must include 4 x task.train_length_max = 32", None),
    ("task.eval_lengths", [16, 32], "task.eval_lengths: no length in the training range [4, 8]", "lists with one"),
    ("shift.lengths", [12], "shift.lengths: length 12 is not in task.eval_lengths [8, 16, 32]", "evaluation lengths"),
    ("model.d_model", 15, "model.d_model: 15 is odd", "even numbers"),
    # unknown and misspelled keys and sections
    ("train.stpes", 10, "train.stpes: unknown key in section train (did you mean 'steps'?)", "steps, batch_size, lr"),
    ("trian", {"steps": 10}, "trian: unknown key in the config (did you mean 'train'?)", "results_dir, device, cpu_kernels, sweep"),
    ("model.width", 64, "model.width: unknown key in section model", "d_model, rope_base, learned_init_std"),
    ("train.lr", DELETE, "train.lr: missing", "a number > 0"),
    ("linear", DELETE, "linear: missing", "a section with keys steps, batch_size, lr"),
    # a device that does not exist
    ("device", "gpu", "device: 'gpu' does not match", "auto, cpu, cuda or cuda:N"),
    ("device", "cuda:x", "device: 'cuda:x' does not match", "auto, cpu, cuda or cuda:N"),
    ("cpu_kernels", "avx512", "cpu_kernels: 'avx512' is not one of ['native', 'portable']", "native (the CPU's own"),
    # the experiments' own settings
    ("variants.pe", ["rope", "alibi@slop=1"], "variants.pe: positional encoding 'alibi@slop=1': alibi has no parameter 'slop'",
     None),
    ("variants.pe", ["rope@base=100", "rope base"], "variants.pe: positional encoding 'rope base' is not of the form",
     None),
    ("variants.seeds", [0, 9], "variants.seeds: [9] not in sweep.seed [0, 1]", "values of sweep.seed"),
    ("variants.offsets", [4], "variants.offsets: [4] not in sweep.offset [1, 2]", "values of sweep.offset"),
    ("cures.seeds", [0, 9], "cures.seeds: [9] not in sweep.seed [0, 1]", "values of sweep.seed"),
    ("linear.min_norm.d_model", 15, "linear.min_norm.d_model: 15 is odd", "even numbers"),
    ("linear.min_norm.rope_base", 0, "linear.min_norm.rope_base: 0 is less than or equal to the minimum of 0", None),
    ("transformer.pe", ["rotary"], "transformer.pe: unknown positional encoding 'rotary'", "learned, nope"),
    ("transformer.pe", ["rope", "randomized_rope"], "transformer.pe: randomized_rope draws position ids per sequence",
     "encodings with shared positions"),
    ("transformer.offsets", [8], "transformer.offsets: offset 8 is not shorter than task.train_length_min (4)",
     "offsets < 4"),
    ("transformer.n_heads", 3, "transformer.d_model (16) is not a multiple of transformer.n_heads (3)", "multiples"),
    ("transformer.n_heads", 16, "transformer.d_model / transformer.n_heads, the head width, is 1", "even widths"),
    ("transformer.eval_samples", 5000, "transformer.eval_samples (5000) exceeds task.eval_samples (64)",
     "at most task.eval_samples"),
    ("transformer.precision", "fp16", "transformer.precision: 'fp16' is not one of ['float32', 'bf16']", None),
    # model inits (lengthgen/models/init.py), parsed as the encodings are
    ("model.init", "xavier", "model.init: unknown model init 'xavier'", "nanogpt, normal, torch_default"),
    ("model.init", "normal", "model.init: model init 'normal': normal needs a std", "normal@std=S"),
    ("model.init", "normal@std=0", "model.init: model init 'normal@std=0': std 0 is not positive", "S > 0"),
    ("model.init", "normal@mean=0", "model.init: model init 'normal@mean=0': normal has no parameter 'mean' "
     "(parameters: std)", None),
    ("model.init", "normal@std=x", "model.init: model init 'normal@std=x' is not of the form name or "
     "name@key=value,key=value", None),
    ("model.init", 0.02, "model.init: 0.02 is not of type 'string'", None),
    ("transformer.init", "normal@std=1e", "transformer.init: model init 'normal@std=1e': std=1e is not a number", None),
]


@pytest.mark.parametrize("path, value, message, allowed", BAD_CONFIGS,
                         ids=[f"{path}={value!r}"[:40] for path, value, *_ in BAD_CONFIGS])
def test_a_bad_config_gives_one_line_naming_the_key_and_what_is_allowed(path, value, message, allowed):
    with pytest.raises(ConfigError) as raised:
        prepared(with_change(path, value))
    text = str(raised.value)
    assert text.startswith(message), text
    assert "\n" not in text
    if allowed:
        assert "allowed: " in text and allowed in text.split("allowed: ", 1)[1], text


def test_the_table_covers_at_least_25_mistakes():
    assert len(BAD_CONFIGS) >= 25


@pytest.mark.parametrize("schema, words", [
    ({"type": "integer", "minimum": 1}, "an integer >= 1"),
    ({"type": "number", "exclusiveMinimum": 0, "maximum": 1}, "a number > 0 and <= 1"),
    ({"type": ["array", "null"], "items": {"type": "integer", "minimum": 1}, "minItems": 1},
     "a non-empty list of integers >= 1, or null to follow the sweep and the task"),
    ({"type": "string", "description": "auto or cpu"}, "auto or cpu"),
    ({}, "a value"),  # a schema without a type allows any value
    # the order of a type list means nothing in JSON schema
    ({"type": ["null", "integer"], "minimum": 0}, "an integer >= 0, or null to follow the sweep and the task"),
    ({"type": "array", "items": {"type": "array", "items": {"type": "integer"}, "minItems": 1}},
     "a list of non-empty lists of integers"),
    ({"type": "array", "items": {"type": "object", "properties": {"a": {}, "b": {}}}}, "a list of sections with keys a, b"),
])
def test_schemas_are_described_in_words(schema, words):
    assert describe(schema) == words


# --- Mutation testing (docs/mutation.md): each check at its boundary, the last value it allows and the first it
# refuses. The smoke config trains on lengths 4..8 with offsets 1, 2 and evaluates at 8, 16, 32.

def changed(**changes):
    config = copy.deepcopy(SMOKE)
    for path, value in changes.items():
        *sections, key = path.split("__")
        target = config
        for section in sections:
            target = target[section]
        target[key] = value
    return config


def refusal(config) -> str:
    with pytest.raises(ConfigError) as raised:
        prepared(config)
    return str(raised.value)


@pytest.mark.parametrize("key", ["sweep__offset", "transformer__offsets"])
def test_an_offset_one_shorter_than_the_shortest_training_length_is_allowed_and_equal_to_it_is_not(key):
    # The shortest training sequence, 4 tokens, has a target 3 places before its last one, none 4 places before.
    others = {"shift__offsets": [1], "variants__offsets": [1]} if key == "sweep__offset" else {}
    prepared(changed(**{**others, "transformer__offsets": [1, 3], key: [1, 3]}))
    assert refusal(changed(**{key: [1, 4]}, **others)).startswith(
        f"{key.replace('__', '.')}: offset 4 is not shorter than task.train_length_min (4); allowed: offsets < 4")


def test_an_evaluation_length_must_be_longer_than_every_offset():
    # Lengths 8..32 around a training range 8..8 and an offset 7 (train_length_min 8): length 8 is one longer.
    base = dict(task__train_length_min=8, task__eval_lengths=[8, 16, 32], shift__offsets=[1], variants__offsets=[1],
                transformer__offsets=[1])
    prepared(changed(**base, sweep__offset=[1, 7]))
    assert refusal(changed(**{**base, "task__eval_lengths": [7, 8, 16, 32]}, sweep__offset=[1, 7])).startswith(
        "task.eval_lengths: length 7 is not longer than the largest sweep.offset (7); allowed: lengths > 7")


def test_a_training_range_of_one_length_is_allowed_and_evaluation_lengths_at_its_ends_are_in_it():
    # min == max is a range; an evaluation length equal to min (or max) is in range.
    prepared(changed(task__train_length_min=8, task__train_length_max=8))
    prepared(changed(task__eval_lengths=[4, 16, 32], shift__lengths=[4]))  # 4 == train_length_min: in range
    assert refusal(changed(task__train_length_min=9, task__train_length_max=8)).startswith(
        "task.train_length_min (9) is larger than task.train_length_max (8)")
    assert refusal(changed(task__eval_lengths=[3, 16, 32], shift__lengths=[3])).startswith(
        "task.eval_lengths: no length in the training range [4, 8]")
    assert refusal(changed(task__eval_lengths=[9, 16, 32], shift__lengths=[9])).startswith(
        "task.eval_lengths: no length in the training range [4, 8]")


def test_a_randomized_encodings_id_range_may_equal_the_longest_evaluation_length():
    prepared(changed(variants__pe=["rope", "randomized_rope@noise_max_length=32"]))
    assert refusal(changed(variants__pe=["rope", "randomized_rope@noise_max_length=31"])).startswith(
        "variants.pe: randomized_rope@noise_max_length=31 draws position ids from [0, 31)")
    assert refusal(changed(sweep__pe=["rope", "randomized_rope@noise_max_length=31"])).startswith("sweep.pe: ")


def test_a_randomized_encoding_named_without_parameters_draws_from_the_default_range_and_is_told_how_to_widen_it():
    # The smoke variants list the bare name randomized_rope: its range is the registry's DEFAULT_NOISE_MAX_LENGTH.
    prepared(changed(task__eval_lengths=[8, 16, 32, DEFAULT_NOISE_MAX_LENGTH]))
    longest = DEFAULT_NOISE_MAX_LENGTH + 1
    assert refusal(changed(task__eval_lengths=[8, 16, 32, longest])) == (
        f"variants.pe: randomized_rope draws position ids from [0, {DEFAULT_NOISE_MAX_LENGTH}), fewer than the "
        f"longest task.eval_lengths ({longest}); allowed: randomized_rope@noise_max_length=N with N >= {longest}, "
        "or shorter evaluation lengths")


def test_the_transformer_may_evaluate_on_every_shared_sequence_but_not_more():
    prepared(changed(transformer__eval_samples=64))
    assert refusal(changed(transformer__eval_samples=65)).startswith(
        "transformer.eval_samples (65) exceeds task.eval_samples (64)")


def test_the_longest_in_range_length_is_the_longest_evaluation_length_up_to_the_training_maximum():
    from lengthgen.pipeline.config import longest_in_training_range
    assert longest_in_training_range({"eval_lengths": [16, 8, 4, 32], "train_length_max": 8}) == 8
    assert longest_in_training_range({"eval_lengths": [16, 7, 4, 32], "train_length_max": 8}) == 7
    assert longest_in_training_range({"eval_lengths": [32, 16], "train_length_max": 8}) == 16  # none: the shortest


def test_the_transformers_head_width_errors_are_written_out_in_full():
    assert refusal(changed(transformer__n_heads=16)) == (
        "transformer.d_model / transformer.n_heads, the head width, is 1; allowed: even widths (rotary blocks are "
        "pairs)")
    assert refusal(changed(transformer__n_heads=3)) == (
        "transformer.d_model (16) is not a multiple of transformer.n_heads (3); allowed: multiples")
    assert refusal(changed(transformer__eval_samples=65)) == (
        "transformer.eval_samples (65) exceeds task.eval_samples (64); allowed: at most task.eval_samples (it "
        "evaluates on the first sequences of the shared sets)")
    prepared(changed(transformer__n_heads=8))  # a head width of 2: one rotary block


# --- What each job sees of the config (workflow/rules/common.smk passes these as rule params).

def test_a_training_job_sees_the_keys_that_shape_a_model_and_an_evaluation_set_job_those_that_draw_the_sets():
    default = prepared(DEFAULT)
    assert list(job_task(default, "models").items()) == [
        ("train_length_max", 32), ("train_length_min", 8), ("vocab_size", 16)]
    assert list(job_task(default, "eval_sets").items()) == [
        ("eval_lengths", [16, 32, 64, 128, 256, 512, 1024]), ("eval_samples", 1000), ("eval_seed", 0), ("vocab_size", 16)]
    # New evaluation lengths redraw the sets and retrain no model; a longer training range retrains the models
    # and redraws no set.
    longer_eval = copy.deepcopy(default)
    longer_eval["task"]["eval_lengths"] = [16, 32, 128, 2048]
    assert job_task(longer_eval, "models") == job_task(default, "models")
    assert job_task(longer_eval, "eval_sets")["eval_lengths"] == [16, 32, 128, 2048]
    longer_train = copy.deepcopy(default)
    longer_train["task"].update(train_length_max=48, vocab_size=20)
    assert job_task(longer_train, "models") == {"train_length_max": 48, "train_length_min": 8, "vocab_size": 20}
    assert job_task(longer_train, "eval_sets") == {**job_task(default, "eval_sets"), "vocab_size": 20}


def test_a_job_task_lists_its_keys_in_the_same_order_whatever_the_configs_order():
    default = prepared(DEFAULT)
    reordered = {**default, "task": dict(reversed(default["task"].items()))}
    for job in ("models", "eval_sets"):
        assert list(job_task(reordered, job)) == list(job_task(default, job)) == sorted(job_task(default, job))


# --- The whole line a user reads for representative mistakes: the key, what is wrong, what is allowed and why.

def two_misspelled_keys():
    return with_change("train", {**SMOKE["train"], "stpes": 1, "bach_size": 2})


FULL_MESSAGES = [
    # schema errors: with and without a number hint, a close name, a description
    ("train.steps", lambda: with_change("train.steps", "many"),
     "train.steps: 'many' is not of type 'integer'; allowed: an integer >= 1"),
    ("train.lr", lambda: with_change("train.lr", "1e-3"),
     "train.lr: '1e-3' is not of type 'number' (YAML reads 1e-3 as text; write a number with a dot, e.g. 1.0e-3); "
     "allowed: a number > 0"),
    ("model.d_model", lambda: with_change("model.d_model", 0),
     "model.d_model: 0 is less than the minimum of 2; allowed: an integer >= 2"),
    ("train.warmup_fraction", lambda: with_change("train.warmup_fraction", 1),
     "train.warmup_fraction: 1 is greater than or equal to the maximum of 1; allowed: a number > 0 and < 1"),
    ("model.width", lambda: with_change("model.width", 64),
     "model.width: unknown key in section model; allowed: d_model, rope_base, learned_init_std, init"),
    ("train.stpes+bach_size", two_misspelled_keys,
     "train.bach_size: unknown key in section train (did you mean 'batch_size', 'steps'?); "
     "allowed: steps, batch_size, lr, warmup_fraction, log_every"),
    ("linear.min_norm", lambda: with_change("linear.min_norm", DELETE),
     "linear.min_norm: missing; allowed: arm 1, the min-norm control (rotary features, plain SGD from zero, squared "
     "loss)"),
    ("shift.pe_at_init", lambda: with_change("shift.pe_at_init", "rope"),
     "shift.pe_at_init: 'rope' is not of type 'array', 'null'; "
     "allowed: a list of distinct texts, or null to follow the sweep and the task"),
    ("report.previous_claims", lambda: with_change("report.previous_claims", 3),
     "report.previous_claims: 3 is not of type 'string', 'null'; "
     "allowed: a path, relative to the repository, of a claims.parquet of an earlier run, or null for none"),
    # a config file that is not a mapping (a direct caller, e.g. bench/benchmark.py, reading an empty config.yaml)
    ("the config", lambda: None,
     "the config: None is not of type 'object'; "
     "allowed: lengthgen configuration (config.yaml). Unknown keys are errors, so a typo stops the run."),
    # how keys relate
    ("task.eval_lengths", lambda: with_change("task.eval_lengths", [8, 16]),
     "task.eval_lengths must include 4 x task.train_length_max = 32: the generalization and linear claims are tested "
     "there"),
    ("shift.offsets", lambda: with_change("shift.offsets", [3]),
     "shift.offsets: [3] not in sweep.offset [1, 2]; allowed: values of sweep.offset (shift measures the sweep's "
     "heads; or leave shift.offsets out: it follows the sweep)"),
    ("shift.lengths", lambda: with_change("shift.lengths", [12]),
     "shift.lengths: length 12 is not in task.eval_lengths [8, 16, 32]; allowed: evaluation lengths (or leave "
     "shift.lengths out: it follows the task)"),
    ("variants.seeds", lambda: with_change("variants.seeds", [0, 9]),
     "variants.seeds: [9] not in sweep.seed [0, 1]; allowed: values of sweep.seed (the variants share its runs; or "
     "leave variants.seeds out: it follows the sweep)"),
    ("variants.offsets", lambda: with_change("variants.offsets", [4]),
     "variants.offsets: [4] not in sweep.offset [1, 2]; allowed: values of sweep.offset (the variants share its "
     "runs; or leave variants.offsets out: it follows the sweep)"),
    ("cures.seeds", lambda: with_change("cures.seeds", [0, 9]),
     "cures.seeds: [9] not in sweep.seed [0, 1]; allowed: values of sweep.seed (the log-length head is compared "
     "with the sweep's rope head of the same seed; or leave cures.seeds out: it follows the sweep)"),
    ("variants.pe", lambda: with_change("variants.pe", ["randomized_rope@noise_max_length=16"]),
     "variants.pe: randomized_rope@noise_max_length=16 draws position ids from [0, 16), fewer than the longest "
     "task.eval_lengths (32); allowed: randomized_rope@noise_max_length=N with N >= 32, or shorter evaluation "
     "lengths"),
]


@pytest.mark.parametrize("config, message", [case[1:] for case in FULL_MESSAGES], ids=[case[0] for case in FULL_MESSAGES])
def test_a_representative_mistake_reads_in_full(config, message):
    assert refusal(config()) == message


def schema_fragments(schema: dict, where: str = ""):
    """(dotted key, schema) of every key of ``schema``, nested sections' and list items' included."""
    for key, fragment in schema.get("properties", {}).items():
        yield f"{where}{key}", fragment
        yield from schema_fragments(fragment, f"{where}{key}.")
        if "items" in fragment:
            yield f"{where}{key}[]", fragment["items"]


def test_every_key_of_the_schema_has_a_type_describe_names_and_every_section_and_list_says_what_it_holds():
    # describe's fallbacks (a kind it has no noun for, a section without keys, a list without items) would give a
    # user's "allowed:" no content.
    for key, fragment in schema_fragments(yaml.safe_load(SCHEMA.read_text())):
        types = [fragment["type"]] if isinstance(fragment["type"], str) else fragment["type"]
        assert set(types) - {"null"} <= {"integer", "number", "string", "array", "object"}, key
        assert "array" not in types or "items" in fragment, key
        assert "object" not in types or fragment.get("properties"), key


def test_add_pe_appends_the_encodings_not_listed_and_leaves_no_key():
    config = copy.deepcopy(DEFAULT)
    listed = list(config["variants"]["pe"])
    config["variants"]["add_pe"] = ["rope@base=1e5", listed[0]]
    prepared_config = prepared(config)
    assert prepared_config["variants"]["pe"] == [*listed, "rope@base=1e5"]
    assert "add_pe" not in prepared_config["variants"]
    assert prepared(copy.deepcopy(DEFAULT))["variants"]["pe"] == listed


def test_a_bad_name_in_add_pe_is_refused_like_one_in_pe():
    config = copy.deepcopy(DEFAULT)
    config["variants"]["add_pe"] = ["alibi@slop=1"]
    with pytest.raises(ConfigError, match="alibi has no parameter 'slop'"):
        prepared(config)


def test_a_declaration_the_table_cannot_read_is_named_without_the_config_key(monkeypatch):
    """A broken declaration is a module's fault, whichever key's name first built the table: its message stands alone."""
    from lengthgen.models.encodings_table import DeclarationError
    from lengthgen.pipeline import config as config_module

    def broken(name):
        raise DeclarationError("lengthgen/models/encodings/x.py: encoding 'x': monotone_in_offset is written 'not False'")

    monkeypatch.setattr(config_module, "resolve_encoding_name", broken)
    with pytest.raises(ConfigError) as raised:
        config_module.check_encodings("sweep.pe", ["x"])
    assert str(raised.value).startswith("lengthgen/models/encodings/x.py: encoding 'x': monotone_in_offset")
