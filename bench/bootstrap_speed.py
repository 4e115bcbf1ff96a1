"""The seed bootstrap by seed sums against recomputing every check per resample, on a finished run.

For each experiment whose checks are all statistics of seed sums (``lengthgen/checks/seed_sums.py``): the CPU seconds
(``time.process_time``, the median of ``--repeats``) of ``bootstrap.seed_bootstrap`` both ways, with the same draws
and the config's resamples, and the largest distance between their interval ends. Recomputing is what every
bootstrap did before seed sums (on the checks as they are now). Prints a markdown table.

    python bench/bootstrap_speed.py --workdir <folder of a finished run> --configfile tests/smoke_config.yaml
"""

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lengthgen.checks.bootstrap import seed_bootstrap  # noqa: E402
from lengthgen.checks.check import with_keys  # noqa: E402
from lengthgen.pipeline.config import prepare_config  # noqa: E402
from lengthgen.experiments.catalog import CATALOG  # noqa: E402
from lengthgen.experiments.declaration import Evaluations, Table, schema_of, schema_read, settings_of  # noqa: E402
from lengthgen.experiments.runner import experiment_module  # noqa: E402
from lengthgen.tables.registry import schema_named  # noqa: E402
from lengthgen.tables.io import read_table, read_tables  # noqa: E402

EXPERIMENTS = ("cures", "prop1", "variants", "errors", "generalization", "frequency", "mechanics", "shift",
               "transformer", "linear", "rope_bases")


def declaration(experiment: str):
    return next(entry for entry in CATALOG if entry.name == experiment)


def job_offsets(experiment: str, config: dict) -> list[int | None]:
    """The offset of each of the experiment's analysis jobs: one per offset of a per-offset experiment (shift), else
    one job, None."""
    entry = declaration(experiment)
    return entry.offsets(config, entry.per_offset) if entry.per_offset else [None]


def experiment_settings(experiment: str, config: dict, offset: int | None = None) -> dict:
    """The settings the experiment's analysis job (of ``offset``, per offset) gets: its declared config keys, and
    its offset (workflow/rules/common.smk, ``experiment_settings``)."""
    return {**settings_of(declaration(experiment), config), **({"offset": offset} if offset is not None else {})}


def checked_tables(experiment: str, results: Path, config: dict, offset: int | None = None) -> dict[str, pd.DataFrame]:
    """The tables ``experiment``'s checks read (``CHECKED``), from a finished run's ``results`` folder, as its
    analysis job (of ``offset``, per offset) loads them: a table from its file (an own table named by schema, from
    its file of that offset: shift_changes from shift_changes_K1); the variants' evaluations and range fits from
    their runs' files."""
    entry = declaration(experiment)
    own = {schema_of(table): Table(table.format(offset=offset), schema_of(table)) for table in entry.tables}
    sources = {**own, **entry.reads}
    return {name: read_checked(sources[name], results, config) for name in experiment_module(experiment).CHECKED}


def read_checked(source, results: Path, config: dict) -> pd.DataFrame:
    if isinstance(source, Table):
        return read_table(results / "tables" / f"{source.name}.parquet", schema_named(source.schema_name))
    if source.family != "variants":
        raise ValueError(f"no reader here for the runs of family {source.family!r}")
    # Where the workflow writes a variants run's files (workflow/rules/common.smk, RUN_FOLDER).
    runs = itertools.product(*(config["variants"][key] for key in ("pe", "seeds", "offsets")))
    folders = [f"pe~{pe}/seed~{seed}/offset~{offset}" for pe, seed, offset in runs]
    files = ([results / "evaluations" / f"{folder}.parquet" for folder in folders] if isinstance(source, Evaluations)
             else [results / "models" / folder / "range_fit.parquet" for folder in folders])
    return read_tables(files, schema_named(schema_read(source)))


def claims_functions(experiment: str, settings: dict):
    """(by seed sums, recomputed): the experiment's checks as the runner makes them, and the same checks without
    their seed sums, which the bootstrap then recomputes on every resample."""
    module = experiment_module(experiment)

    def summed(**tables):
        return with_keys(module.checks(tables, settings), experiment, experiment)

    def recomputed(**tables):
        return summed(**tables).assign(seed_sums=None)

    return summed, recomputed


def timed(function, repeats: int):
    """(the result of ``function()``, the median CPU seconds of ``repeats`` calls)."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        result = function()
        times.append(time.process_time() - start)
    return result, statistics.median(times)


def experiment_row(experiment: str, offset: int | None, results: Path, config: dict, resamples: int,
                   repeats: int) -> str:
    tables = checked_tables(experiment, results, config, offset)
    summed, recomputed = claims_functions(experiment, experiment_settings(experiment, config, offset))
    (before, seconds_before), (after, seconds_after) = (
        timed(lambda: seed_bootstrap(claims_of, tables, resamples, seed=0), repeats) for claims_of in (recomputed, summed))
    distance = max(float(np.nanmax(np.abs(after[column] - before[column]), initial=0.0))
                   for column in ("spread_low", "spread_high"))
    same = before["holds_fraction"].equals(after["holds_fraction"]) and before["seeds_failing"].equals(
        after["seeds_failing"])
    section = experiment if offset is None else f"{experiment}_K{offset}"
    return (f"| {section} | {len(before)} | {before['n_seeds'].iloc[0]} | {resamples} | {seconds_before:.2f} | "
            f"{seconds_after:.3f} | {seconds_before / seconds_after:.0f}x | {distance:.1e} | {'yes' if same else 'NO'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=REPO, help="the folder of a finished run (holds results/)")
    parser.add_argument("--configfile", type=Path, default=REPO / "config.yaml", help="the run's config")
    parser.add_argument("--repeats", type=int, default=1, help="timings per experiment and way (median)")
    args = parser.parse_args()
    config = yaml.safe_load(args.configfile.read_text())
    prepare_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml")
    resamples = config["bootstrap"]["resamples"]
    print("| experiment | checks | seeds | resamples | recomputed (CPU s) | seed sums (CPU s) | speed-up | "
          "largest interval change | same shares and per-seed counts |")
    print("|---|---|---|---|---|---|---|---|---|")
    for experiment in EXPERIMENTS:
        for offset in job_offsets(experiment, config):
            print(experiment_row(experiment, offset, args.workdir / "results", config, resamples, args.repeats),
                  flush=True)


if __name__ == "__main__":
    main()
