"""The robustness study's points: each ``robustness.points`` entry layered over the config as given, as a
confirmation file is (``confirmation.layered_config``), with the study's experiments and no confirmation runs, into
``<results_dir>/robustness/<name>``, and checked. Read by the workflow at start-up: no torch here.
"""

from pathlib import Path

from lengthgen.pipeline.config import ConfigError
from lengthgen.studies.confirmation.runs import PRESENTATION_KEYS, StudyRun, flat, layered_config
from lengthgen.experiments.catalog import plan
from lengthgen.studies.robustness import DEFAULT_POINT

POINT_PREFIX = "robust_"  # of a point's module and rules: robust_<point>_train_sweep
# What a point may not set: where and how a run is written, which studies and which experiments run.
NOT_VARIED = (*PRESENTATION_KEYS, "experiments")


def check_runs_experiments(where: str, prepared: dict, experiments: list[str]) -> None:
    """Every experiment of the study runs under ``prepared``; the error names the first left out and why."""
    left_out = plan(prepared).left_out
    for experiment in experiments:
        if experiment in left_out:
            raise ConfigError(f"{where}: robustness.experiments: {experiment} does not run there ({left_out[experiment]}); "
                              "allowed: experiments that run at every point (or robustness: {points: []}: no study)")


def robustness_points(as_given: dict, prepared: dict, schema: Path) -> dict[str, StudyRun]:
    """Every point by name, in config order (``as_given``: the config before ``prepare_config``, ``prepared`` after);
    a ``ConfigError`` names a point that sets a key it may not, breaks the config, changes nothing or drops an
    experiment of the study."""
    study = prepared["robustness"]
    if study["points"]:
        check_runs_experiments("this config", prepared, study["experiments"])
    points = {}
    for entry in study["points"]:
        name, changes = entry["name"], entry["set"]
        if name == DEFAULT_POINT or name in points:
            raise ConfigError(f"robustness.points: {name} names {'the run itself' if name == DEFAULT_POINT else 'two points'}; "
                              f"allowed: distinct names other than {DEFAULT_POINT}")
        for key in flat(changes):
            if key.startswith(NOT_VARIED):
                raise ConfigError(f"robustness.points: {name} sets {key}, which says where or how a run is written or "
                                  f"what runs; allowed: keys of what the experiments measure (not {', '.join(NOT_VARIED)})")
        layer = {**changes, "experiments": list(study["experiments"]), "confirmation": {"runs": []}}
        layered, point = layered_config(as_given, layer, f"{prepared['results_dir']}/robustness/{name}", schema,
                                        f"robustness point {name} (its keys over this config)")
        run, at_point = flat(prepared), flat(point)  # the settings derived from the keys set are left out
        changed = {key: (run.get(key), at_point[key]) for key in sorted(flat(changes))
                   if run.get(key) != at_point[key]}
        if not changed:
            raise ConfigError(f"robustness.points: {name} changes nothing this config does not already set; allowed: "
                              f"overrides that differ from it (this config is the {DEFAULT_POINT} point)")
        check_runs_experiments(f"robustness point {name}", point, study["experiments"])
        points[name] = StudyRun(name, layered, point, changed)
    return points


def shared_chance(config: dict, points: dict[str, StudyRun]) -> float | None:
    """Chance accuracy, 1 / V, where this run and every point share the vocabulary V; None where a point changes it."""
    chances = {1 / run["task"]["vocab_size"] for run in (config, *(point.prepared for point in points.values()))}
    return chances.pop() if len(chances) == 1 else None
