"""The robustness study's points: each ``robustness.points`` entry layered over the config as given, and checked.

A point's overrides are layered as a confirmation file is (``confirmation.layered_config``), with the study's
experiments as the config's ``experiments`` and no confirmation runs, into ``<results_dir>/robustness/<name>``. Read
by the workflow at start-up: no torch here.
"""

from dataclasses import dataclass
from pathlib import Path

from lengthgen.pipeline.config import ConfigError
from lengthgen.studies.confirmation.runs import PRESENTATION_KEYS, flat, layered_config
from lengthgen.experiments.catalog import plan
from lengthgen.studies.robustness import DEFAULT_POINT

POINT_PREFIX = "robust_"  # of a point's module and rules: robust_<point>_train_sweep
# What a point may not set: where and how a run is written and which studies it runs, and which experiments run
# (the study's list): a point varies what the experiments measure.
NOT_VARIED = (*PRESENTATION_KEYS, "experiments")


@dataclass
class RobustnessPoint:
    name: str
    changes: dict  # the keys it sets, as in robustness.points
    config: dict  # the layered config as given: the point's module derives its settings from it
    prepared: dict  # the same with defaults and derived settings filled in
    differences: list[str]  # "key: run -> this point", every key it sets to another value than the run's

    @property
    def results_dir(self) -> str:
        return self.prepared["results_dir"]


def point_layer(changes: dict, experiments: list[str]) -> dict:
    """What is layered over the config as given at a point: its changes, only the study's experiments, and no
    confirmation runs (the confirmation study is the run's, like the robustness study)."""
    return {**changes, "experiments": list(experiments), "confirmation": {"runs": []}}


def check_changes(name: str, changes: dict) -> None:
    """A point sets only keys that change what is measured."""
    for key in flat(changes):
        if key.startswith(NOT_VARIED):
            raise ConfigError(f"robustness.points: {name} sets {key}, which says where or how a run is written or what "
                              f"runs; allowed: keys of what the experiments measure (not {', '.join(NOT_VARIED)})")


def check_runs_experiments(where: str, prepared: dict, experiments: list[str]) -> None:
    """Every experiment of the study runs under ``prepared``; the error names the first left out and why."""
    left_out = plan(prepared).left_out
    for experiment in experiments:
        if experiment in left_out:
            raise ConfigError(f"{where}: robustness.experiments: {experiment} does not run there ({left_out[experiment]}); "
                              "allowed: experiments that run at every point (or robustness: {points: []}: no study)")


def changed_keys(prepared: dict, point: dict, changes: dict) -> list[str]:
    """``key: run -> point`` for every key the point sets to another value than the run's (the settings derived from
    them, which the study's experiments may not read, are left out)."""
    run, at_point = flat(prepared), flat(point)
    return [f"{key}: {run.get(key)} -> {at_point[key]}" for key in sorted(flat(changes)) if run.get(key) != at_point[key]]


def robustness_points(as_given: dict, prepared: dict, schema: Path) -> dict[str, RobustnessPoint]:
    """Every point of ``prepared["robustness"]["points"]`` (each a name and the keys it sets), by name, in config
    order, checked.

    ``as_given`` is the run's config before defaults and derived settings, ``prepared`` the same after
    ``prepare_config``. Raises ``ConfigError`` naming the point for a key it may not set, a layered config that
    breaks the schema or its checks, a point that changes nothing (the run is the default point), and an experiment
    of the study that does not run at a point or in the run.
    """
    study = prepared["robustness"]
    if not study["points"]:
        return {}
    check_runs_experiments("this config", prepared, study["experiments"])
    points = {}
    for entry in study["points"]:
        name, changes = entry["name"], entry["set"]
        if name == DEFAULT_POINT or name in points:
            raise ConfigError(f"robustness.points: {name} names {'the run itself' if name == DEFAULT_POINT else 'two points'}; "
                              f"allowed: distinct names other than {DEFAULT_POINT}")
        check_changes(name, changes)
        layered, point = layered_config(as_given, point_layer(changes, study["experiments"]),
                                        f"{prepared['results_dir']}/robustness/{name}", schema,
                                        f"robustness point {name} (its keys over this config)")
        changed = changed_keys(prepared, point, changes)
        if not changed:
            raise ConfigError(f"robustness.points: {name} changes nothing this config does not already set; allowed: "
                              f"overrides that differ from it (this config is the {DEFAULT_POINT} point)")
        check_runs_experiments(f"robustness point {name}", point, study["experiments"])
        points[name] = RobustnessPoint(name, changes, layered, point, changed)
    return points
