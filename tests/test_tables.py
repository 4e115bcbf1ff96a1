import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lengthgen.tables.core import CLAIMS, TRAINING_CURVE
from lengthgen.tables.io import TableError, TableSchema, read_table, write_table


def curve(steps):
    return pd.DataFrame({"pe": "rope", "offset": 1, "seed": 0, "step": steps, "length": 8,
                         "lr": [1e-2] * len(steps), "loss": [0.5] * len(steps), "accuracy": [1.0] * len(steps)})


def test_writes_are_deterministic_whatever_the_row_order(tmp_path):
    write_table(curve([1, 2, 3]), tmp_path / "a.parquet", TRAINING_CURVE)
    write_table(curve([3, 1, 2]), tmp_path / "b.parquet", TRAINING_CURVE)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert list(read_table(tmp_path / "a.parquet", TRAINING_CURVE)["step"]) == [1, 2, 3]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "curve.parquet"
    write_table(curve([1]), path, TRAINING_CURVE)
    before = path.read_bytes()
    with pytest.raises(ValueError, match="missing columns"):
        write_table(curve([2]).drop(columns="loss"), path, TRAINING_CURVE)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["curve.parquet"]


def test_reading_a_table_of_another_schema_names_the_file_and_the_columns(tmp_path):
    path = tmp_path / "curve.parquet"
    write_table(curve([1]), path, TRAINING_CURVE)
    with pytest.raises(TableError, match="curve.parquet: does not have the claims schema: missing column 'experiment'.*"
                                         "extra column 'pe'.*delete it and rerun"):
        read_table(path, CLAIMS)


def test_a_missing_column_or_another_type_is_named(tmp_path):
    path = tmp_path / "curve.parquet"
    pq.write_table(pa.Table.from_pandas(curve([1]).drop(columns="loss"), preserve_index=False), path)
    with pytest.raises(TableError, match="curve.parquet: does not have the training_curve schema: missing column 'loss'"):
        read_table(path, TRAINING_CURVE)
    pq.write_table(pa.Table.from_pandas(curve([1]).astype({"step": "float64"}), preserve_index=False), path)
    with pytest.raises(TableError, match="column 'step' is double, expected int32"):
        read_table(path, TRAINING_CURVE)


@pytest.mark.parametrize("damage", [lambda data: data[: len(data) // 2], lambda data: b"not parquet at all",
                                    lambda data: b""])
def test_a_truncated_or_foreign_file_is_named_with_what_is_wrong(tmp_path, damage):
    path = tmp_path / "curve.parquet"
    write_table(curve([1, 2]), path, TRAINING_CURVE)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(TableError, match="curve.parquet: not a readable parquet table .*delete it and rerun"):
        read_table(path, TRAINING_CURVE)


def test_every_experiment_schema_is_listed():
    from lengthgen.tables.registry import describe_schemas

    listing = describe_schemas()
    for kind in ("accuracy_by_length", "claims", "mechanics_by_length", "shift_changes", "prop1_prediction",
                 "frequency_summary", "linear_by_length", "headline_summary"):
        assert f"\n{kind}: " in "\n" + listing


def test_a_schema_sorts_by_its_own_columns_only():
    with pytest.raises(ValueError, match="sort keys \\['step'\\] are not columns of 'tiny'"):
        TableSchema("tiny", CLAIMS.schema, ("step",))
