"""Table schemas and file writes.

Every intermediate table is parquet with an explicit pyarrow schema below. Writes are
deterministic (rows sorted by the schema's key columns, no pandas or wall-clock
metadata), so an identical result has identical bytes and does not trigger downstream
reruns; and atomic (temp file in the same folder, then rename), so a killed job never
leaves a half-written output behind.
"""

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import torch

RUN_KEYS = [("pe", pa.string()), ("offset", pa.int32()), ("seed", pa.int32())]

SCHEMAS: dict[str, pa.Schema] = {
    # One row per evaluation sequence; tokens stored as a list column.
    "eval_set": pa.schema(
        [("offset", pa.int32()), ("length", pa.int32()), ("sample", pa.int32()),
         ("tokens", pa.list_(pa.int32())), ("target", pa.int32())]
    ),
    # One row per training step of one run.
    "training_curve": pa.schema(
        RUN_KEYS + [("step", pa.int32()), ("length", pa.int32()), ("loss", pa.float64()), ("accuracy", pa.float64())]
    ),
    # One row per (run, evaluation length).
    "accuracy_by_length": pa.schema(
        [("experiment", pa.string())] + RUN_KEYS
        + [("length", pa.int32()), ("in_training_range", pa.bool_()), ("accuracy", pa.float64()),
           ("target_attention", pa.float64()), ("loss", pa.float64())]
    ),
    # One row per (encoding, offset, length): statistics over seeds.
    "accuracy_summary": pa.schema(
        [("experiment", pa.string()), ("pe", pa.string()), ("offset", pa.int32()), ("length", pa.int32()),
         ("in_training_range", pa.bool_()), ("n_seeds", pa.int32()), ("mean", pa.float64()),
         ("ci_low", pa.float64()), ("ci_high", pa.float64())]
    ),
    # One row per claim: its statistic, the rule applied, and the verdict.
    "claims": pa.schema(
        [("experiment", pa.string()), ("claim", pa.string()), ("statistic", pa.string()),
         ("value", pa.float64()), ("rule", pa.string()), ("holds", pa.bool_())]
    ),
}

SORT_KEYS: dict[str, list[str]] = {
    "eval_set": ["offset", "length", "sample"],
    "training_curve": ["pe", "offset", "seed", "step"],
    "accuracy_by_length": ["experiment", "pe", "offset", "seed", "length"],
    "accuracy_summary": ["experiment", "pe", "offset", "length"],
    "claims": [],  # kept in the order the rules list them
}


def register_schema(kind: str, schema: pa.Schema, sort_keys: list[str]) -> None:
    """Add an experiment's table schema; rows are sorted by ``sort_keys`` when written."""
    if kind in SCHEMAS:
        raise ValueError(f"table schema {kind!r} is registered twice")
    missing = set(sort_keys) - set(schema.names)
    if missing:
        raise ValueError(f"sort keys {sorted(missing)} are not columns of {kind!r}")
    SCHEMAS[kind] = schema
    SORT_KEYS[kind] = sort_keys


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


def to_arrow(frame: pd.DataFrame, kind: str) -> pa.Table:
    """``frame`` as a table of schema ``kind``: columns checked, rows sorted, no metadata."""
    schema = SCHEMAS[kind]
    missing = set(schema.names) - set(frame.columns)
    if missing:
        raise ValueError(f"{kind} table is missing columns {sorted(missing)}")
    if SORT_KEYS[kind]:
        frame = frame.sort_values(SORT_KEYS[kind], kind="stable")
    table = pa.Table.from_pandas(frame[schema.names], schema=schema, preserve_index=False)
    return table.replace_schema_metadata(None)


def write_table(frame: pd.DataFrame, path: str | os.PathLike, kind: str) -> None:
    """Write ``frame`` as parquet of schema ``kind``, deterministically and atomically."""
    table = to_arrow(frame, kind)
    with atomic_path(path) as temp:
        pq.write_table(table, temp, compression="zstd")


def read_table(path: str | os.PathLike, kind: str) -> pd.DataFrame:
    """Read a parquet table and check it has the schema ``kind``, naming the file if not."""
    table = pq.read_table(path)
    expected = SCHEMAS[kind]
    if not table.schema.equals(expected):
        raise ValueError(f"{path} does not have the {kind} schema:\n{table.schema}\nexpected:\n{expected}")
    return table.to_pandas()


def read_tables(paths, kind: str) -> pd.DataFrame:
    """Concatenate several tables of one schema."""
    return pd.concat([read_table(path, kind) for path in paths], ignore_index=True)


def atomic_torch_save(obj, path: str | os.PathLike) -> None:
    with atomic_path(path) as temp:
        torch.save(obj, temp)


def atomic_write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as temp:
        temp.write_text(text)
