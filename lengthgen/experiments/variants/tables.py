"""Tables of the variants experiment: its summary over seeds (the columns of ``accuracy_summary``), classes, and the
threshold each ``fire`` model learned."""

import pyarrow as pa

from lengthgen.tables.core import ACCURACY_SUMMARY, RUN_KEYS
from lengthgen.tables.io import TableSchema

VARIANTS_SUMMARY = TableSchema("variants_summary", ACCURACY_SUMMARY.schema, ACCURACY_SUMMARY.sort_keys)

# One row per (encoding, offset): what its class is decided on, and the class.
VARIANTS_CLASSES = TableSchema("variants_classes", pa.schema([
    ("pe", pa.string()), ("offset", pa.int32()), ("lowest_in_range", pa.float64()), ("far_length", pa.int32()),
    ("far_mean", pa.float64()), ("far_ci_low", pa.float64()), ("far_ci_high", pa.float64()),
    ("longest_length", pa.int32()), ("longest_mean", pa.float64()), ("category", pa.string()),
    ("n_seeds", pa.int64()), ("n_fitted", pa.int64()),
]), ("pe", "offset"))

# One row per trained ``fire`` model (seed, offset): the threshold L it started from and the one it ended at. Below L
# FIRE's bias is a function of the offset alone; ``fire_fixed`` keeps L where it starts.
VARIANTS_FIRE_THRESHOLDS = TableSchema("variants_fire_thresholds", pa.schema(RUN_KEYS + [
    ("initial_threshold", pa.float64()), ("learned_threshold", pa.float64()),
]), ("pe", "offset", "seed"))
