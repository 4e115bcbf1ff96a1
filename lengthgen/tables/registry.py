"""Find a table's schema by name: ``python -m lengthgen.tables`` lists them all.

Each table is a ``tables.TableSchema``: a name, an explicit pyarrow schema, and the key columns
its rows are sorted by when written, so an identical result has identical bytes. Schemas are
grouped by what writes them (``core`` here, and each experiment's or study's ``tables.py`` in its folder); a job imports only the
module of the tables it reads or writes, so adding a table to one experiment reruns nothing else.
These modules need pyarrow alone, so that jobs which only read tables start fast.
"""

import ast
import importlib
import pkgutil
from functools import cache
from pathlib import Path

from lengthgen.tables.io import TableSchema


def schema_modules() -> list[str]:
    """Every module of table schemas, sorted by its short name: this package's (``core``, ...), each
    experiment's ``lengthgen/experiments/<name>/tables.py`` and each study's (``lengthgen/studies/judgments/tables.py``,
    ``lengthgen/studies/robustness/tables.py``)."""
    package = Path(__file__).parents[1]
    modules = {info.name: f"lengthgen.tables.{info.name}" for info in pkgutil.iter_modules([str(Path(__file__).parent)])
               if info.name not in ("__main__", "registry", "io")}
    for tables in sorted([*package.glob("experiments/*/tables.py"), *package.glob("studies/*/tables.py")]):
        modules[tables.parent.name] = ".".join(tables.relative_to(package.parent).with_suffix("").parts)
    return [modules[name] for name in sorted(modules)]


def all_schemas() -> list[TableSchema]:
    """Every table schema of every schema module, once, in module order."""
    schemas = []
    for module in schema_modules():
        members = vars(importlib.import_module(module)).values()
        schemas += [member for member in members if isinstance(member, TableSchema) and member not in schemas]
    return schemas


def module_file(module: str) -> Path:
    """The file of a schema module (``lengthgen.experiments.prop1.tables``)."""
    return Path(__file__).parents[1].joinpath(*module.split(".")[1:]).with_suffix(".py")


@cache
def schema_index() -> dict[str, str]:
    """Schema name -> the module that declares it (``TableSchema("<name>", ...)``), read with ``ast``: a job
    imports only the modules of the tables it reads or writes, and the workflow names those modules as the
    job's inputs (``pipeline.sources.schema_sources``) without importing any."""
    index = {}
    for module in schema_modules():
        for node in ast.walk(ast.parse(module_file(module).read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "TableSchema" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                index.setdefault(node.args[0].value, module)
    return index


@cache
def schema_named(name: str) -> TableSchema:
    """The schema of the table ``name`` (a table file is named after its schema: ``tables/<name>.parquet``)."""
    members = vars(importlib.import_module(schema_named_module(name))).values()
    return next(member for member in members if isinstance(member, TableSchema) and member.name == name)


def schema_named_module(name: str) -> str:
    """The module that declares the schema ``name``."""
    index = schema_index()
    if name not in index:
        raise KeyError(f"no table schema named {name!r} in lengthgen/tables/ or lengthgen/experiments/*/tables.py "
                       f"(known: {', '.join(sorted(index))})")
    return index[name]


def describe_schemas() -> str:
    return "\n".join(f"{table.name}: " + ", ".join(f"{field.name} ({field.type})" for field in table.schema)
                     for table in all_schemas())
