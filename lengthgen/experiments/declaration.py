"""What an experiment declares: what it reads, which settings it takes, what it writes, when it runs.

An ``Experiment`` is plain data, read by the workflow at start-up (so this module imports no
torch): the workflow turns each declaration into one ``analyze_<name>`` and one ``plot_<name>``
job, and ``workflow/scripts/analyze.py`` hands the declared inputs, loaded, to the experiment's
module (``lengthgen/experiments/<name>/analysis.py``, see ``runner.py`` for what it defines).

Inputs are named sources, resolved to files by the workflow and loaded by the runner:

- ``Models(family, pe=...)``: the trained models of a family, as (run, model) pairs;
- ``Evaluations(family)`` / ``RangeFits(family)`` / ``TrainingCurves(family)``: those tables of
  every run of a family, concatenated;
- ``EvalSets()``: the evaluation token sets, {offset: {length: (tokens, targets)}};
- ``Table(name)``: a table another experiment (or the workflow) wrote, ``tables/<name>.parquet``.

Families: those of ``families.FAMILIES`` (``sweep``, ``variants``, ``linear``, ``linear_softmax``,
``log_length``, ``transformer``), which say where each family's runs are. An experiment ``per_offset`` runs once per
offset of a config list: its sections, tables and figures carry ``K{offset}``, and its sweep
models and evaluation sets are those of that offset.
"""

from dataclasses import dataclass, field
from typing import Callable

from lengthgen.experiments.families import family

Requirement = Callable[[dict], str | None]


@dataclass(frozen=True)
class Models:
    family: str = "sweep"
    pe: tuple[str, ...] | None = None  # only these encodings; all of the family by default


@dataclass(frozen=True)
class Evaluations:
    family: str = "sweep"


@dataclass(frozen=True)
class RangeFits:
    family: str = "sweep"


@dataclass(frozen=True)
class TrainingCurves:
    family: str = "sweep"


@dataclass(frozen=True)
class EvalSets:
    offsets: str = "sweep.offset"  # the config list of offsets whose sets it reads


@dataclass(frozen=True)
class Table:
    name: str  # its file: tables/<name>.parquet
    schema: str | None = None  # its schema's name, when not ``name`` (a per-offset table: shift_changes_K1)

    @property
    def schema_name(self) -> str:
        return self.schema or self.name


Source = Models | Evaluations | RangeFits | TrainingCurves | EvalSets | Table
SOURCE_KINDS = {kind.__name__: kind for kind in (Models, Evaluations, RangeFits, TrainingCurves, EvalSets, Table)}


def schema_read(source: Source) -> str | None:
    """The schema a job reads one declared input with; None for models, which are no table."""
    if isinstance(source, EvalSets):
        return "eval_set"
    if isinstance(source, Table):
        return source.schema_name
    if isinstance(source, Evaluations):
        return family(source.family).evaluation_table
    if isinstance(source, RangeFits):
        return "range_fit"
    if isinstance(source, TrainingCurves):
        return "training_curve"
    return None


def as_plain(source: Source) -> dict:
    """A source as plain data (a rule's params): its kind and fields."""
    return {"kind": type(source).__name__, **{name: getattr(source, name) for name in source.__dataclass_fields__}}


def from_plain(plain: dict) -> Source:
    fields = {name: tuple(value) if isinstance(value, list) else value for name, value in plain.items() if name != "kind"}
    return SOURCE_KINDS[plain["kind"]](**fields)


@dataclass(frozen=True)
class Experiment:
    """One experiment: its module is ``lengthgen/experiments/<name>/analysis.py``, its figure module
    ``lengthgen/experiments/<name>/figures.py``, its section text ``lengthgen/experiments/<name>/section.py``."""

    name: str
    reads: dict[str, Source]  # input name -> source; the module receives them loaded, by these names
    settings: tuple[str, ...]  # config keys it takes: a section ("task") or a dotted key ("prop1.n_samples")
    tables: tuple[str, ...]  # the tables it writes, each results/tables/<table>.parquet, schema of that name
    figures: tuple[str, ...]  # its figures, results/figures/<figure>.png
    needs: tuple[Requirement, ...] = ()  # when it can run under a config (see catalog.py)
    per_offset: str | None = None  # a config list of offsets: one section per offset (shift: "shift.offsets")
    figures_per: str | None = None  # a config list of offsets: one of each figure per offset, from one job
    headline_tables: tuple[str, ...] = field(default=())  # tables multiseed reads its headlines from

    def reason_left_out(self, config: dict) -> str | None:
        """The first unmet requirement, or None when the experiment runs under ``config``."""
        return next((reason for reason in (need(config) for need in self.needs) if reason), None)

    def offsets(self, config: dict, key: str | None) -> list[int]:
        return list(setting(config, key)) if key else []

    def section_names(self, config: dict) -> list[str]:
        if self.per_offset:
            return [f"{self.name}_K{offset}" for offset in self.offsets(config, self.per_offset)]
        return [self.name]


PER_OFFSET = "_K{offset}"  # how a per-offset table or figure is named: shift_changes_K{offset}


def schema_of(table: str) -> str:
    """The schema name of a declared table: its name, without the per-offset part."""
    return table.replace(PER_OFFSET, "")


def setting(config: dict, key: str):
    """``config``'s value at a dotted key (``prop1.n_samples``); a KeyError names the key."""
    value = config
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(f"an experiment reads config key {key!r}, which the config does not have")
        value = value[part]
    return value


def settings_of(experiment: Experiment, config: dict) -> dict:
    """The experiment's settings, nested as in the config: ``{"task": {...}, "prop1": {"n_samples": 64}}``."""
    settings: dict = {}
    for key in sorted(experiment.settings):
        *sections, last = key.split(".")
        node = settings
        for section in sections:
            node = node.setdefault(section, {})
        node[last] = setting(config, key)
    return settings
