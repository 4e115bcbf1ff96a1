"""The workflow config beyond its JSON schema: settings derived from the task, and checks.

The schema (``workflow/schemas/config.schema.yaml``) checks types and names. An experiment
setting that refers to the sweep or the task (which offsets, which lengths) may be left out:
``derive_settings`` fills it from them, so a config that changes only the sweep and the task
runs every experiment. ``check_config`` then checks how keys relate; each error names the key.
"""

from lengthgen.encodings import PositionalEncoding, resolve_encoding


class ConfigError(ValueError):
    """A config value that would make the run fail or mean something else than intended."""


# (section, key): how the setting follows from the rest of the config when it is left out.
DERIVED_SETTINGS = {
    ("shift", "offsets"): lambda config: list(config["sweep"]["offset"]),  # one shift_K<offset> per offset
    ("shift", "lengths"): lambda config: [config["task"]["train_length_max"]],  # the longest training length
    ("variants", "seeds"): lambda config: list(config["sweep"]["seed"][:3]),  # a few minutes of training
    ("variants", "offsets"): lambda config: list(config["sweep"]["offset"]),
    ("cures", "seeds"): lambda config: list(config["sweep"]["seed"]),  # paired with every sweep rope head
    # The transformer trains a model per (pe, seed, offset) like the sweep, on a CPU-sized subset of it.
    ("transformer", "pe"): lambda config: list(config["sweep"]["pe"]),
    ("transformer", "seeds"): lambda config: list(config["sweep"]["seed"][:3]),
    ("transformer", "offsets"): lambda config: list(config["sweep"]["offset"][:2]),
}


def derive_settings(config: dict) -> None:
    """Fill, in place, every setting of ``DERIVED_SETTINGS`` that is absent or null."""
    for (section, key), derive in DERIVED_SETTINGS.items():
        if config.setdefault(section, {}).get(key) is None:
            config[section][key] = derive(config)


def check_encodings(key: str, names: list[str]) -> None:
    """Each name resolves in the registry (with its parameters); the error names the key."""
    for name in names:
        try:
            resolve_encoding(name)
        except ValueError as error:
            raise ConfigError(f"{key}: {error}") from None


def check_config(config: dict) -> None:
    task, model, sweep, variants = config["task"], config["model"], config["sweep"], config["variants"]
    check_encodings("sweep.pe", sweep["pe"])
    check_encodings("variants.pe", variants["pe"])
    check_encodings("shift.pe_at_init", config["shift"].get("pe_at_init", []))
    for key, values, sweep_key in (("seeds", variants["seeds"], "seed"), ("offsets", variants["offsets"], "offset")):
        outside = sorted(set(values) - set(sweep[sweep_key]))
        if outside:  # the variants share the sweep's evaluation sets and runs
            raise ConfigError(f"variants.{key}: {outside} not in sweep.{sweep_key} {sweep[sweep_key]}")
    if task["train_length_min"] > task["train_length_max"]:
        raise ConfigError(f"task.train_length_min ({task['train_length_min']}) is larger than "
                          f"task.train_length_max ({task['train_length_max']})")
    check_offsets("sweep.offset", sweep["offset"], task["train_length_min"])
    longest = max(task["eval_lengths"])
    if longest > model["max_positions"]:
        raise ConfigError(f"task.eval_lengths: length {longest} exceeds model.max_positions ({model['max_positions']})")
    for offset in config["shift"]["offsets"]:
        if offset not in sweep["offset"]:
            raise ConfigError(f"shift.offsets: offset {offset} is not in sweep.offset {sweep['offset']}")
    for length in config["shift"]["lengths"]:
        if length not in task["eval_lengths"]:
            raise ConfigError(f"shift.lengths: length {length} is not in task.eval_lengths")
    for seed in config["cures"]["seeds"]:
        if seed not in sweep["seed"]:
            raise ConfigError(f"cures.seeds: seed {seed} is not in sweep.seed {sweep['seed']}: the log-length head "
                              "is compared with the sweep's rope head of the same seed")
    if 4 * task["train_length_max"] not in task["eval_lengths"]:
        raise ConfigError(f"task.eval_lengths must include 4 x task.train_length_max = {4 * task['train_length_max']}: "
                          "the base and linear claims are tested there")
    if model["d_model"] % 2:
        raise ConfigError(f"model.d_model must be even (rotary blocks are pairs), got {model['d_model']}")
    if config["linear"]["min_norm"]["d_model"] % 2:
        raise ConfigError("linear.min_norm.d_model must be even (cos and sin of each frequency), got "
                          f"{config['linear']['min_norm']['d_model']}")
    check_transformer(config)


def check_offsets(key: str, offsets: list[int], train_length_min: int) -> None:
    """Every offset must leave a target in the shortest training sequence."""
    for offset in offsets:
        if offset >= train_length_min:
            raise ConfigError(f"{key}: offset {offset} must be smaller than task.train_length_min ({train_length_min})")


def check_transformer(config: dict) -> None:
    transformer, task = config["transformer"], config["task"]
    check_encodings("transformer.pe", transformer["pe"])
    for name in transformer["pe"]:
        if resolve_encoding(name)[0].sample_positions is not PositionalEncoding.sample_positions:
            raise ConfigError(f"transformer.pe: {name} draws position ids per sequence, which only the single head "
                              "supports")
    check_offsets("transformer.offsets", transformer["offsets"], task["train_length_min"])
    if transformer["d_model"] % transformer["n_heads"]:
        raise ConfigError(f"transformer.d_model ({transformer['d_model']}) must be a multiple of "
                          f"transformer.n_heads ({transformer['n_heads']})")
    if (transformer["d_model"] // transformer["n_heads"]) % 2:
        raise ConfigError("transformer.d_model / transformer.n_heads, the head width, must be even (rotary blocks "
                          f"are pairs), got {transformer['d_model'] // transformer['n_heads']}")
    if transformer["eval_samples"] > task["eval_samples"]:
        raise ConfigError(f"transformer.eval_samples ({transformer['eval_samples']}) exceeds task.eval_samples "
                          f"({task['eval_samples']}): it evaluates on the first sequences of the shared sets")
