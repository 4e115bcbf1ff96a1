"""One experiment's analysis job: load its declared inputs, run its module, check, bootstrap, write.

An experiment's module (``lengthgen/experiments/<name>/analysis.py``) defines:

- ``analyze(inputs, settings) -> {table name: DataFrame}``: its tables, one per declared table
  (named by schema: ``shift_changes`` for ``shift_changes_K{offset}``);
- ``CHECKED``: the tables (its inputs' names or its tables' names) its checks are a function of;
- ``checks(tables, settings) -> DataFrame``: its checks (``claims.check``), from those tables
  alone, so that the seed bootstrap can recompute them on resampled seeds.

``settings`` is the declared config keys, nested as in the config, plus ``offset`` for an experiment
that runs per offset. Its section text is written by its figure job (``lengthgen/experiments/sections.py``),
so that editing the text reruns no analysis.
"""

import importlib
import logging
from dataclasses import dataclass

import pandas as pd

from lengthgen.checks.bootstrap import seed_bootstrap
from lengthgen.checks.check import with_keys
from lengthgen.experiments.declaration import (EvalSets, Evaluations, Models, RangeFits, Source, Table,
                                               TrainingCurves, from_plain, schema_read)
from lengthgen.experiments.families import family
from lengthgen.tables.registry import schema_named
from lengthgen.tables.core import CLAIMS
from lengthgen.tables.spread import CLAIM_SPREAD
from lengthgen.tables.io import read_table, read_tables, write_table

log = logging.getLogger(__name__)

def experiment_module(name: str):
    return importlib.import_module(f"lengthgen.experiments.{name}.analysis")


@dataclass
class ModelSet:
    """Trained models of one family: iterating loads them one at a time, as (run, model) pairs."""

    runs: list[dict]  # {pe, seed, offset} per model
    files: list[str]
    expected: dict  # the settings every model file must hold (checkpoint.load_model)
    family: str
    device: str

    def __iter__(self):
        from lengthgen.models.loading import load_models  # torch: only jobs that read models pay for it

        if family(self.family).trainer == "head":
            return load_models(self.runs, self.files, self.expected)
        from lengthgen.runtime.device import resolve_device
        from lengthgen.models.transformer import load_transformer

        device = resolve_device(self.device)
        return load_models(self.runs, self.files, self.expected,
                           lambda path, expected: load_transformer(path, device, expected))


def load_source(source: Source, files: list[str], details: dict, device: str):
    """One declared input, loaded: models as a ``ModelSet``, tables as one DataFrame, evaluation sets as
    {offset: {length: (tokens, targets)}}. ``details``: the workflow's runs and expected settings (models),
    or offsets (evaluation sets)."""
    if isinstance(source, Models):
        return ModelSet(details["runs"], files, details["expected"], source.family, device)
    if isinstance(source, EvalSets):
        from lengthgen.data import eval_sets_from_frame

        eval_set = schema_named(schema_read(source))
        return {offset: eval_sets_from_frame(read_table(path, eval_set)) for offset, path in zip(details["offsets"], files)}
    if isinstance(source, Table):
        return read_table(files[0], schema_named(schema_read(source)))
    if isinstance(source, (Evaluations, RangeFits, TrainingCurves)):
        return read_tables(files, schema_named(schema_read(source)))
    raise TypeError(f"unknown input source {source!r}")


def load_inputs(reads: dict[str, dict], files: dict[str, list[str]], details: dict[str, dict], device: str,
                threads: int) -> dict:
    """Every declared input (``reads``: name -> source as plain data), loaded from its files."""
    sources = {name: from_plain(plain) for name, plain in reads.items()}
    if any(isinstance(source, (Models, EvalSets)) for source in sources.values()):
        from lengthgen.runtime.device import configure_torch

        configure_torch(threads)
    return {name: load_source(source, files[name], details.get(name, {}), device) for name, source in sources.items()}


def run_experiment(name: str, section: str, inputs: dict, settings: dict, bootstrap: dict,
                   outputs: dict[str, str]) -> None:
    """Analyze and check one experiment, and write its tables, checks and their seed spread. ``outputs``: each
    table's path by its schema name, and ``claims``, ``spread``."""
    module = experiment_module(name)
    log.info("analyzing %s", section)
    tables = module.analyze(inputs, settings)
    missing = sorted(set(outputs) - {"claims", "spread"} - set(tables))
    if missing:
        raise ValueError(f"experiment {name} declares tables it did not return: {', '.join(missing)}")
    available = {**inputs, **tables}
    checked = {table: available[table] for table in module.CHECKED}

    def checks_of(**resampled: pd.DataFrame) -> pd.DataFrame:
        return with_keys(module.checks(resampled, settings), name, section)

    checks = checks_of(**checked)
    log.info("%d checks, %d hold; seed bootstrap", len(checks), int(checks["holds"].sum()))
    for table, frame in tables.items():
        write_table(frame, outputs[table], schema_named(table))
    write_table(checks, outputs["claims"], CLAIMS)
    write_table(seed_bootstrap(checks_of, checked, **bootstrap), outputs["spread"], CLAIM_SPREAD)
