"""The confirmation runs: each file of ``confirmation.runs`` (``configs/confirm_<name>.yaml``) layered over the config
as ``snakemake --configfile`` layers it, run into ``<results_dir>/confirm/<name>`` (``workflow/rules/confirm.smk``),
checked before any job starts (fresh seeds, no confirmations of its own, a valid config; the error names the file).
"""

import copy
from dataclasses import dataclass
from pathlib import Path

import yaml
from snakemake.utils import update_config

from lengthgen.pipeline.config import ConfigError, prepare_config

RUN_PREFIX = "confirm_"
# Keys that say where and how a run is written and shown, or which other studies it runs, not what it measures.
PRESENTATION_KEYS = ("results_dir", "device", "figures", "confirmation", "robustness", "bootstrap", "report")
# Every list of seeds a run trains with: the sweep's, and the transformer's (variants' and cures' are the sweep's).
SEED_KEYS = ("sweep.seed", "transformer.seeds")


@dataclass
class StudyRun:
    """A run of a study: a confirmation run (named for its file, configs/confirm_<name>.yaml) or a robustness point."""
    name: str
    config: dict  # the layered config as given: the run's module derives its settings from it
    prepared: dict  # the same with defaults and derived settings filled in, as the run sees it
    changed: dict  # {key: (the studied run's value, this run's)}, every key it changes

    @property
    def results_dir(self) -> str:
        return self.prepared["results_dir"]

    @property
    def differences(self) -> list[str]:
        """Every key it changes, as ``key: the studied run's value -> this run's``."""
        return [f"{key}: {before} -> {after}" for key, (before, after) in self.changed.items()]

    @property
    def settings(self) -> str:
        """The values it sets, as a reader would name the run: ``model.init normal@std=0.1 and model.d_model 32``."""
        return " and ".join(f"{key} {after}" for key, (_, after) in self.changed.items())


def flat(config: dict, prefix: str = "") -> dict:
    """{dotted key: value} of every leaf of a nested config."""
    items = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        items.update(flat(value, f"{name}.") if isinstance(value, dict) else {name: value})
    return items


def changed_values(reference: dict, other: dict) -> dict:
    """Every key but presentation whose value differs between two prepared configs: {key: (reference's, other's)}."""
    left, right = flat(reference), flat(other)
    return {key: (left.get(key), right.get(key)) for key in sorted(set(left) | set(right))
            if left.get(key) != right.get(key) and not key.startswith(PRESENTATION_KEYS)}


def load_run_file(repository: Path, path: str) -> dict:
    file = repository / path
    if not file.is_file():
        raise ConfigError(f"confirmation.runs: {path} does not exist; allowed: files relative to {repository}")
    try:
        layer = yaml.safe_load(file.read_text())
    except yaml.YAMLError as error:
        raise ConfigError(f"confirmation.runs: {path} is not valid YAML ({error}); allowed: YAML mappings") from None
    if not isinstance(layer, dict):
        raise ConfigError(f"confirmation.runs: {path} is not a mapping of config keys; allowed: YAML mappings")
    return layer


def layered_config(as_given: dict, layer: dict, results_dir: str, schema: Path, what: str) -> tuple[dict, dict]:
    """(as given, prepared) of ``layer`` over the config, into ``results_dir``, without the studies and previous run
    that are the exploratory run's (robustness points would recurse); a ``ConfigError`` names ``what`` it is."""
    layered = copy.deepcopy(as_given)
    update_config(layered, layer)
    layered["results_dir"] = results_dir
    layered["report"] = {}
    layered["robustness"] = {**layered.get("robustness", {}), "points": []}
    layered["confirmation"] = {**layered.get("confirmation", {}), "out_of_sample": []}
    run = copy.deepcopy(layered)
    try:
        prepare_config(run, schema)
    except ConfigError as error:
        raise ConfigError(f"{what}: {error}") from None
    return layered, run


def confirmation_runs(as_given: dict, prepared: dict, repository: Path, schema: Path) -> dict[str, StudyRun]:
    """Every run of ``prepared["confirmation"]["runs"]`` by name, checked (module doc); ``as_given``: the exploratory
    config before ``prepare_config``, ``prepared`` after it."""
    runs, paths = {}, {}
    for path in prepared["confirmation"]["runs"]:
        name = Path(path).stem.removeprefix(RUN_PREFIX)  # configs/confirm_small_vocab.yaml: small_vocab
        if name in paths:
            raise ConfigError(f"confirmation.runs: {path} and {paths[name]} both name the run {name!r}; allowed: "
                              "files with distinct names")
        paths[name] = path
        layered, run = layered_config(as_given, load_run_file(repository, path),
                                      f"{prepared['results_dir']}/confirm/{name}", schema,
                                      f"confirmation run {name} ({path} over this config)")
        if run["confirmation"]["runs"]:
            raise ConfigError(f"{path}: confirmation.runs: a confirmation run runs no confirmations of its own; "
                              "allowed: [] (write confirmation: {runs: []} in the file)")
        seeds_of = lambda config, key: config[key.split(".")[0]][key.split(".")[1]]
        used = sorted({seed for key in SEED_KEYS for seed in seeds_of(prepared, key)})
        for key in SEED_KEYS:
            shared = sorted(set(seeds_of(run, key)) & set(used))
            if shared:
                raise ConfigError(f"{path}: {key}: {shared} are seeds of the run it confirms; allowed: fresh seeds "
                                  f"(none of {used})")
        runs[name] = StudyRun(name, layered, run, changed_values(prepared, run))
    return runs
