"""Tables of the shift experiments: logit changes when every position id is shifted."""

import pyarrow as pa

from lengthgen.tables.core import RUN_KEYS
from lengthgen.tables.io import TableSchema

# One row per (run, length, dtype, shift): the largest logit changes of that shift.
SHIFT_CHANGES = TableSchema("shift_changes", pa.schema(RUN_KEYS + [
    ("trained", pa.bool_()), ("length", pa.int32()), ("dtype", pa.string()), ("shift", pa.int64()),
    ("defined", pa.bool_()), ("attention_logit_change", pa.float64()), ("output_logit_change", pa.float64()),
    ("attention_logit_scale", pa.float64()),
]), ("pe", "offset", "seed", "length", "dtype", "shift"))
