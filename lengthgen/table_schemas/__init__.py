"""The schema of every table the workflow writes: ``python -m lengthgen.table_schemas`` lists them.

Each table is a ``tables.TableSchema``: a name, an explicit pyarrow schema, and the key columns
its rows are sorted by when written, so an identical result has identical bytes. Schemas are
grouped by what writes them (``core`` here, and each experiment's ``tables.py`` in its folder); a job imports only the
module of the tables it reads or writes, so adding a table to one experiment reruns nothing else.
These modules need pyarrow alone, so that jobs which only read tables start fast.
"""

import importlib
import pkgutil
from functools import cache
from pathlib import Path

from lengthgen.tables import TableSchema


def schema_modules() -> list[str]:
    """Every module of table schemas, sorted by its short name: this package's (``core``, ...) and each
    experiment's ``lengthgen/experiments/<name>/tables.py``."""
    modules = {info.name: f"{__name__}.{info.name}" for info in pkgutil.iter_modules(__path__) if info.name != "__main__"}
    for tables in sorted((Path(__file__).parents[1] / "experiments").glob("*/tables.py")):
        modules[tables.parent.name] = f"lengthgen.experiments.{tables.parent.name}.tables"
    return [modules[name] for name in sorted(modules)]


def all_schemas() -> list[TableSchema]:
    """Every table schema of every schema module, once, in module order."""
    schemas = []
    for module in schema_modules():
        members = vars(importlib.import_module(module)).values()
        schemas += [member for member in members if isinstance(member, TableSchema) and member not in schemas]
    return schemas


@cache
def schema_named(name: str) -> TableSchema:
    """The schema of the table ``name`` (a table file is named after its schema: ``tables/<name>.parquet``)."""
    found = {schema.name: schema for schema in all_schemas()}
    if name not in found:
        raise KeyError(f"no table schema named {name!r} in lengthgen/table_schemas/ or lengthgen/experiments/*/tables.py (known: {', '.join(sorted(found))})")
    return found[name]


def describe_schemas() -> str:
    return "\n".join(f"{table.name}: " + ", ".join(f"{field.name} ({field.type})" for field in table.schema)
                     for table in all_schemas())
