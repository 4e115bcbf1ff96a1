"""The schema of every table the workflow writes: ``python -m lengthgen.table_schemas`` lists them.

Each table is a ``tables.TableSchema``: a name, an explicit pyarrow schema, and the key columns
its rows are sorted by when written, so an identical result has identical bytes. Schemas are
grouped by what writes them (``core``, and one module per experiment); a job imports only the
module of the tables it reads or writes, so adding a table to one experiment reruns nothing else.
These modules need pyarrow alone, so that jobs which only read tables start fast.
"""

import importlib
import pkgutil
from functools import cache

from lengthgen.tables import TableSchema


def all_schemas() -> list[TableSchema]:
    """Every table schema of every module of this package, once, in module order."""
    schemas = []
    for module in sorted(info.name for info in pkgutil.iter_modules(__path__) if info.name != "__main__"):
        members = vars(importlib.import_module(f"{__name__}.{module}")).values()
        schemas += [member for member in members if isinstance(member, TableSchema) and member not in schemas]
    return schemas


@cache
def schema_named(name: str) -> TableSchema:
    """The schema of the table ``name`` (a table file is named after its schema: ``tables/<name>.parquet``)."""
    found = {schema.name: schema for schema in all_schemas()}
    if name not in found:
        raise KeyError(f"no table schema named {name!r} in lengthgen/table_schemas/ (known: {', '.join(sorted(found))})")
    return found[name]


def describe_schemas() -> str:
    return "\n".join(f"{table.name}: " + ", ".join(f"{field.name} ({field.type})" for field in table.schema)
                     for table in all_schemas())
