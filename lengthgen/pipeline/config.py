"""The workflow config: readable schema errors, settings derived from the task, and checks.

``prepare_config`` runs these steps before any job starts (``workflow/rules/common.smk``); each
raises ``ConfigError`` with one line that names the key, what is wrong and what is allowed:

- ``validate_config`` checks types and names against the JSON schema
  (``workflow/schemas/config.schema.yaml``) and rewrites the first error for a reader: an
  unknown key gets the close known names, a number YAML read as text gets the spelling it needs
  (Snakemake's own ``validate`` prints the whole schema instead); ``fill_defaults`` then fills
  the schema's defaults as Snakemake's ``validate(..., set_default=True)`` does, so a default lives
  in the schema alone (config.yaml sets only what differs from it);
- ``derive_settings`` fills every setting of ``DERIVED_SETTINGS`` that is left out (or null)
  from the sweep and the task, so a config that changes only those two runs every experiment;
- ``check_config`` checks how keys relate (an offset must be shorter than the shortest training
  sequence, a randomized encoding's id range must cover the longest evaluation length, ...).

The filled config lists its keys in the schema's order, whichever file set them (RESULTS.md prints it).

The workflow prepares a config per confirmation run and robustness point, and again in each one's module (27
times for the default config): the schema file is parsed once per process (``load_schema``), not per call.
"""

import copy
import difflib
from functools import cache
from pathlib import Path

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

# The registry as its source states it: the checks need names, parameters and whether an encoding
# draws its positions, and the workflow parses this at every start, so torch stays out of it.
from lengthgen.models.encodings_table import (DEFAULT_NOISE_MAX_LENGTH, DeclarationError, encoding_description,
                                              resolve_encoding_name)
from lengthgen.experiments.catalog import CATALOG
from lengthgen.models.init import parse_init
from lengthgen.experiments.shift.thresholds import SHIFT_ENCODINGS


class ConfigError(ValueError):
    """A config value that would make the run fail or mean something else than intended."""


# (section, key): how the setting follows from the rest of the config when it is left out.
DERIVED_SETTINGS = {
    ("shift", "offsets"): lambda config: list(config["sweep"]["offset"]),  # one shift_K<offset> per offset
    ("shift", "lengths"): lambda config: [longest_in_training_range(config["task"])],
    # Every encoding the shift claims compare: those the sweep does not train, at their seeded init.
    ("shift", "pe_at_init"): lambda config: [pe for pe in SHIFT_ENCODINGS if pe not in config["sweep"]["pe"]],
    ("variants", "seeds"): lambda config: list(config["sweep"]["seed"][:5]),
    ("variants", "offsets"): lambda config: list(config["sweep"]["offset"]),
    ("cures", "seeds"): lambda config: list(config["sweep"]["seed"]),  # paired with every sweep rope head
    # The transformer trains a model per (pe, seed, offset) like the sweep, on a CPU-sized subset of it.
    ("transformer", "pe"): lambda config: list(config["sweep"]["pe"]),
    ("transformer", "seeds"): lambda config: list(config["sweep"]["seed"][:3]),
    # Every offset, as every other claim is judged at every K.
    ("transformer", "offsets"): lambda config: list(config["sweep"]["offset"]),
}


# The task keys each kind of job reads, and no others: a job's params hold only these, so changing another key
# reruns none of its jobs (new evaluation lengths retrain no model). Jobs that train a model, or run a trained
# one over the evaluation sets (which label each length as in or past the training range), read the training
# distribution; the jobs that make the evaluation sets read what the sets are drawn from.
TASK_READ_BY = {
    "models": ("train_length_max", "train_length_min", "vocab_size"),
    "eval_sets": ("eval_lengths", "eval_samples", "eval_seed", "vocab_size"),
}


def job_task(config: dict, job: str) -> dict:
    """The task as a ``job`` of ``TASK_READ_BY`` sees it, one dict (its rule's ``task`` param), keys sorted so
    that reordering the config changes no job's params."""
    return {key: config["task"][key] for key in sorted(TASK_READ_BY[job])}


def prepare_config(config: dict, schema_path: Path) -> None:
    """Validate ``config`` in place against the schema file, fill its defaults and derived settings, and check it."""
    schema = load_schema(schema_path)
    validate_config(config, schema)
    # Validates again (it passes) and sets every default the schema gives a key the config leaves out.
    fill_defaults(config, schema)
    add_encodings(config["variants"])
    derive_settings(config)
    check_config(config)
    order_as_schema(config, schema)


def load_schema(schema_path: Path) -> dict:
    """The schema file, parsed once per process and again only if the file changes. Shared: read it, never change it
    (``fill_defaults`` copies each default it sets)."""
    path = Path(schema_path).resolve()
    stat = path.stat()
    return _parsed_schema(str(path), stat.st_mtime_ns, stat.st_size)


@cache
def _parsed_schema(path: str, mtime_ns: int, size: int) -> dict:
    import yaml

    # libyaml's parser where PyYAML has it: the same safe constructor, 1.7 ms a parse of this schema here against 14.
    return yaml.load(Path(path).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _set_defaults(validator, properties, instance, schema):
    """The ``properties`` keyword of a validator that first sets every default of ``properties`` that ``instance``
    lacks: a copy of it, so that no two configs, nor the cached schema, share a mutable default."""
    for name, subschema in properties.items():
        if "default" in subschema:
            instance.setdefault(name, copy.deepcopy(subschema["default"]))
    yield from Draft202012Validator.VALIDATORS["properties"](validator, properties, instance, schema)


# Snakemake's ``validate(..., set_default=True)`` validator (jsonschema's FAQ recipe), with copied defaults.
_DefaultFillingValidator = validators.extend(Draft202012Validator, {"properties": _set_defaults})


def fill_defaults(config: dict, schema: dict) -> None:
    """Set, in place, every default ``schema`` gives a key ``config`` leaves out, at every level, as Snakemake's
    ``validate(config, schema, set_default=True)`` does (raises jsonschema's ``ValidationError`` if the filled config
    breaks the schema); without re-reading the schema file each time."""
    _DefaultFillingValidator(schema).validate(config)


def order_as_schema(config: dict, schema: dict) -> None:
    """Reorder, in place, every section's keys as the schema lists them: filled defaults and derived settings
    would otherwise follow the keys the files set."""
    properties = list(schema.get("properties", {}))
    for key in sorted(config, key=properties.index):
        config[key] = config.pop(key)
        if isinstance(config[key], dict):
            order_as_schema(config[key], schema["properties"][key])


def longest_in_training_range(task: dict) -> int:
    """The longest evaluation length not past ``train_length_max`` (``check_config`` ensures one)."""
    return max((length for length in task["eval_lengths"] if length <= task["train_length_max"]),
               default=min(task["eval_lengths"]))


def add_encodings(variants: dict) -> None:
    """Append ``variants.add_pe`` to ``variants.pe`` (each encoding not in it already), and drop the key: an overlay
    list replaces the list below it, so this is how an overlay adds one encoding to the default list."""
    variants["pe"] = [*variants["pe"], *(pe for pe in variants.pop("add_pe") if pe not in variants["pe"])]


def derive_settings(config: dict) -> None:
    """Fill, in place, every setting of ``DERIVED_SETTINGS`` that is absent or null."""
    for (section, key), derive in DERIVED_SETTINGS.items():
        if config.setdefault(section, {}).get(key) is None:
            config[section][key] = derive(config)


def validate_config(config: dict, schema: dict) -> None:
    """Raise ``ConfigError`` for the first way ``config`` breaks ``schema``, in one readable line."""
    error = best_match(Draft202012Validator(schema).iter_errors(config))
    if error is not None:
        raise ConfigError(schema_error_message(error, schema))


def schema_error_message(error: ValidationError, schema: dict) -> str:
    """``<key>: <what is wrong>; allowed: <what the schema allows there>``."""
    keys = [part for part in error.absolute_path if isinstance(part, str)]
    where = ".".join(keys) or "the config"
    if error.validator == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(known))
        close = [match for name in unknown for match in difflib.get_close_matches(name, known, n=1)]
        hint = f" (did you mean {', '.join(repr(name) for name in close)}?)" if close else ""
        section = f"section {where}" if keys else "the config"
        return (f"{'.'.join([*keys, unknown[0]])}: unknown key in {section}{hint}; "
                f"allowed: {', '.join(known)}")
    key_schema = schema
    for key in keys:
        key_schema = key_schema["properties"][key]
    if error.validator == "required":
        missing = next(key for key in error.validator_value if key not in error.instance)
        return f"{'.'.join([*keys, missing])}: missing; allowed: {describe(key_schema['properties'][missing])}"
    path = list(error.absolute_path)
    item = f" (item {path[-1] + 1})" if path and isinstance(path[-1], int) else ""
    return f"{where}: {error.message}{item}{number_as_text_hint(error)}; allowed: {describe(key_schema)}"


def number_as_text_hint(error: ValidationError) -> str:
    """YAML 1.1 reads ``1e-3`` (no dot) as text; say how to write it as a number."""
    if error.validator != "type" or not isinstance(error.instance, str):
        return ""
    try:
        float(error.instance)
    except ValueError:
        return ""
    return f" (YAML reads {error.instance} as text; write a number with a dot, e.g. 1.0e-3)"


_NOUNS = {"integer": "integer", "number": "number", "string": "text"}


def describe(schema: dict, plural: bool = False) -> str:
    """What ``schema`` allows, in words: 'an integer >= 1', 'a non-empty list of distinct integers >= 0'."""
    types = schema.get("type", [])
    types = [types] if isinstance(types, str) else list(types)
    nullable = "null" in types
    kind = next((t for t in types if t != "null"), "")
    if "description" in schema and kind in ("string", "object"):
        text = schema["description"]
    elif kind == "array":
        lists = ("non-empty " if schema.get("minItems", 0) >= 1 else "") + ("lists" if plural else "list")
        items = ("distinct " if schema.get("uniqueItems") else "") + describe(schema.get("items", {}), plural=True)
        text = f"{lists if plural else 'a ' + lists} of {items}"
    elif kind == "object":
        text = f"{'sections' if plural else 'a section'} with keys {', '.join(schema.get('properties', {}))}"
    else:
        noun = _NOUNS.get(kind, "value") + ("s" if plural and kind in _NOUNS else "")
        text = noun if plural else f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"
        bounds = [f"{symbol} {schema[keyword]:g}" for keyword, symbol in
                  (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<"))
                  if keyword in schema]
        if bounds:
            text += " " + " and ".join(bounds)
    # A key whose description says what null means needs no more; the others follow the sweep and the task.
    return text + (", or null to follow the sweep and the task" if nullable and "description" not in schema else "")


def check_encodings(key: str, names: list[str]) -> None:
    """Each name resolves in the registry (with its parameters); the error names the key. A declaration the table
    cannot read is no fault of the key: its error names the module, the encoding and the property alone."""
    for name in names:
        try:
            resolve_encoding_name(name)
        except DeclarationError as error:
            raise ConfigError(str(error)) from None
        except ValueError as error:
            raise ConfigError(f"{key}: {error}") from None


def check_init(key: str, name: str) -> None:
    """The init name resolves (``initialization.parse_init``); the error names the key."""
    try:
        parse_init(name)
    except ValueError as error:
        raise ConfigError(f"{key}: {error}") from None


def check_offsets(key: str, offsets: list[int], train_length_min: int) -> None:
    """Every offset must leave a target in the shortest training sequence."""
    for offset in offsets:
        if offset >= train_length_min:
            raise ConfigError(f"{key}: offset {offset} is not shorter than task.train_length_min "
                              f"({train_length_min}); allowed: offsets < {train_length_min}")


def check_subset(key: str, values: list, sweep_key: str, sweep_values: list, why: str) -> None:
    outside = sorted(set(values) - set(sweep_values))
    if outside:
        raise ConfigError(f"{key}: {outside} not in {sweep_key} {sweep_values}; allowed: values of {sweep_key} "
                          f"({why}; or leave {key} out: it follows the sweep)")


def check_position_range(key: str, names: list[str], longest: int) -> None:
    """A randomized encoding draws the ids of a sequence from [0, noise_max_length): every evaluation
    length must fit in that range."""
    for name in names:
        if not encoding_description(name)["random_positions"]:
            continue
        _, parameters = resolve_encoding_name(name)
        noise_max_length = parameters.get("noise_max_length", DEFAULT_NOISE_MAX_LENGTH)
        if longest > noise_max_length:
            raise ConfigError(f"{key}: {name} draws position ids from [0, {noise_max_length:g}), fewer than the "
                              f"longest task.eval_lengths ({longest}); allowed: {name.partition('@')[0]}"
                              f"@noise_max_length=N with N >= {longest}, or shorter evaluation lengths")


def check_experiment_names(key: str, names: list[str] | None) -> None:
    """Every name is an experiment of the catalog."""
    known = [experiment.name for experiment in CATALOG]
    unknown = [name for name in names or [] if name not in known]
    if unknown:
        raise ConfigError(f"{key}: {', '.join(unknown)} not in the catalog; allowed: {', '.join(known)}")


def check_config(config: dict) -> None:
    task, model, sweep, shift = config["task"], config["model"], config["sweep"], config["shift"]
    check_experiment_names("experiments", config["experiments"])
    check_experiment_names("robustness.experiments", config["robustness"]["experiments"])
    check_encodings("sweep.pe", sweep["pe"])
    check_encodings("shift.pe_at_init", shift["pe_at_init"])
    if task["train_length_min"] > task["train_length_max"]:
        raise ConfigError(f"task.train_length_min ({task['train_length_min']}) is larger than "
                          f"task.train_length_max ({task['train_length_max']}); allowed: min <= max")
    check_offsets("sweep.offset", sweep["offset"], task["train_length_min"])
    for length in task["eval_lengths"]:
        if length <= max(sweep["offset"]):
            raise ConfigError(f"task.eval_lengths: length {length} is not longer than the largest sweep.offset "
                              f"({max(sweep['offset'])}); allowed: lengths > {max(sweep['offset'])}")
    in_range = [length for length in task["eval_lengths"]
                if task["train_length_min"] <= length <= task["train_length_max"]]
    if not in_range:
        raise ConfigError(f"task.eval_lengths: no length in the training range [{task['train_length_min']}, "
                          f"{task['train_length_max']}]; allowed: lists with one (the in-range checks use it)")
    if 4 * task["train_length_max"] not in task["eval_lengths"]:
        raise ConfigError(f"task.eval_lengths must include 4 x task.train_length_max = {4 * task['train_length_max']}: "
                          "the generalization and linear claims are tested there")
    check_subset("shift.offsets", shift["offsets"], "sweep.offset", sweep["offset"], "shift measures the sweep's heads")
    for length in shift["lengths"]:
        if length not in task["eval_lengths"]:
            raise ConfigError(f"shift.lengths: length {length} is not in task.eval_lengths {task['eval_lengths']}; "
                              "allowed: evaluation lengths (or leave shift.lengths out: it follows the task)")
    check_init("model.init", model["init"])
    if model["d_model"] % 2:
        raise ConfigError(f"model.d_model: {model['d_model']} is odd; allowed: even numbers (rotary blocks are pairs)")
    if config["linear"]["min_norm"]["d_model"] % 2:
        raise ConfigError(f"linear.min_norm.d_model: {config['linear']['min_norm']['d_model']} is odd; allowed: even "
                          "numbers (cos and sin of each frequency)")
    variants = config["variants"]
    check_encodings("variants.pe", variants["pe"])
    for key, names in (("sweep.pe", sweep["pe"]), ("variants.pe", variants["pe"])):
        check_position_range(key, names, max(task["eval_lengths"]))
    # The variants share the sweep's evaluation sets and runs; the log-length head is compared with
    # the sweep's rope head of the same seed.
    check_subset("variants.seeds", variants["seeds"], "sweep.seed", sweep["seed"], "the variants share its runs")
    check_subset("variants.offsets", variants["offsets"], "sweep.offset", sweep["offset"], "the variants share its runs")
    check_subset("cures.seeds", config["cures"]["seeds"], "sweep.seed", sweep["seed"],
                 "the log-length head is compared with the sweep's rope head of the same seed")
    check_transformer(config)


def check_transformer(config: dict) -> None:
    transformer, task = config["transformer"], config["task"]
    check_encodings("transformer.pe", transformer["pe"])
    check_init("transformer.init", transformer["init"])
    for name in transformer["pe"]:
        if encoding_description(name)["random_positions"]:
            raise ConfigError(f"transformer.pe: {name} draws position ids per sequence; allowed: encodings with "
                              "shared positions (only the single head takes per-sequence ones)")
    check_offsets("transformer.offsets", transformer["offsets"], task["train_length_min"])
    if transformer["d_model"] % transformer["n_heads"]:
        raise ConfigError(f"transformer.d_model ({transformer['d_model']}) is not a multiple of "
                          f"transformer.n_heads ({transformer['n_heads']}); allowed: multiples")
    if (transformer["d_model"] // transformer["n_heads"]) % 2:
        raise ConfigError("transformer.d_model / transformer.n_heads, the head width, is "
                          f"{transformer['d_model'] // transformer['n_heads']}; allowed: even widths (rotary blocks "
                          "are pairs)")
    if transformer["eval_samples"] > task["eval_samples"]:
        raise ConfigError(f"transformer.eval_samples ({transformer['eval_samples']}) exceeds task.eval_samples "
                          f"({task['eval_samples']}); allowed: at most task.eval_samples (it evaluates on the first "
                          "sequences of the shared sets)")
