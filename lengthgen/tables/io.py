"""Tables and file writes: deterministic, atomic parquet with an explicit schema (``lengthgen.tables``).

Writes are deterministic (rows sorted by the schema's key columns, no pandas or wall-clock
metadata), so an identical result has identical bytes and does not trigger downstream
reruns; and atomic (temp file in the same folder, then rename), so a killed job never
leaves a half-written output behind.
"""

import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


@dataclass(frozen=True)
class TableSchema:
    """A kind of table: its name, its columns and types, and the columns its rows are sorted by
    when written (none: rows keep the order they were written in)."""

    name: str
    schema: pa.Schema
    sort_keys: tuple[str, ...] = ()

    def __post_init__(self):
        missing = set(self.sort_keys) - set(self.schema.names)
        if missing:
            raise ValueError(f"sort keys {sorted(missing)} are not columns of {self.name!r}")


@contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temp path beside ``path``; rename it over ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        yield Path(temp)
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.remove(temp)


def to_arrow(frame: pd.DataFrame, kind: TableSchema) -> pa.Table:
    """``frame`` as a table of schema ``kind``: columns checked, rows sorted, no metadata."""
    missing = set(kind.schema.names) - set(frame.columns)
    if missing:
        raise ValueError(f"{kind.name} table is missing columns {sorted(missing)}")
    if kind.sort_keys:
        frame = frame.sort_values(list(kind.sort_keys), kind="stable")
    table = pa.Table.from_pandas(frame[kind.schema.names], schema=kind.schema, preserve_index=False)
    return table.replace_schema_metadata(None)


def write_table(frame: pd.DataFrame, path: str | os.PathLike, kind: TableSchema) -> None:
    """Write ``frame`` as parquet of schema ``kind``, deterministically and atomically."""
    table = to_arrow(frame, kind)
    with atomic_path(path) as temp:
        pq.write_table(table, temp, compression="zstd")


class TableError(ValueError):
    """A table file that cannot be read, or is not of the kind its reader expects."""


REGENERATE = "delete it and rerun to regenerate it"


def read_table(path: str | os.PathLike, kind: TableSchema) -> pd.DataFrame:
    """Read a parquet table of schema ``kind``; ``TableError`` names the file and what is wrong
    when it is not parquet (truncated, foreign) or not of that schema."""
    if not os.path.exists(path):
        raise TableError(f"{path}: no such file; the workflow run that writes it has not finished")
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as error:
        raise TableError(f"{path}: not a readable parquet table ({error}); {REGENERATE}") from error
    if not table.schema.equals(kind.schema):
        raise TableError(f"{path}: does not have the {kind.name} schema: "
                         f"{schema_differences(table.schema, kind.schema)}; {REGENERATE}")
    frame = table.to_pandas()
    # An integer column with nulls (a check pooled over offsets has none) stays integer, not float.
    nullable = [field.name for field in kind.schema if pa.types.is_integer(field.type) and table[field.name].null_count]
    return frame.astype({name: "Int64" for name in nullable}) if nullable else frame


def schema_differences(found: pa.Schema, expected: pa.Schema) -> str:
    """How ``found`` differs from ``expected``, in words: missing and extra columns, other types."""
    differences = [f"missing column {name!r}" for name in expected.names if name not in found.names]
    differences += [f"extra column {name!r}" for name in found.names if name not in expected.names]
    differences += [f"column {field.name!r} is {found.field(field.name).type}, expected {field.type}"
                    for field in expected if field.name in found.names
                    and not found.field(field.name).type.equals(field.type)]
    return ", ".join(differences) or f"columns {found.names}, expected {expected.names} (order or nullability)"


def read_tables(paths, kind: TableSchema) -> pd.DataFrame:
    """Concatenate several tables of one schema."""
    return pd.concat([read_table(path, kind) for path in paths], ignore_index=True)


def atomic_write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as temp:
        temp.write_text(text)
