"""The replication table: every check of the exploratory run and of each confirmation run, side by side."""

import pyarrow as pa

from lengthgen.tables.core import CHECK_KEY_FIELDS
from lengthgen.tables.io import TableSchema

# One row per (run, check, offset): the check's key and section (as in all_claims; the offset is null for a
# check pooled over offsets), its kind, its value, comparison, threshold, rule text and outcome in that run with
# its seed spread and on how many seeds it fails computed on each alone (k of n; null where no single seed gives
# it a value), whether the check replicates there (yes / no; empty for the exploratory run and for checks it
# does not measure) and the cause where it does not (measurement, rule, claim), the verdict of its experiment in
# that run (evidence only), and its experiment's replication verdict over the study (from evidence checks only).
REPLICATION = TableSchema("replication", pa.schema([("run", pa.string()), *CHECK_KEY_FIELDS] + [
    ("kind", pa.string()), ("value", pa.float64()), ("comparison", pa.string()), ("threshold", pa.float64()),
    ("rule", pa.string()), ("holds", pa.bool_()), ("n_seeds", pa.int32()), ("resamples", pa.int32()),
    ("spread_low", pa.float64()), ("spread_high", pa.float64()), ("holds_fraction", pa.float64()),
    ("seeds_checked", pa.int32()), ("seeds_failing", pa.int32()), ("decided", pa.bool_()),
    ("outcome", pa.string()), ("replicates", pa.string()), ("cause", pa.string()),
    ("claim_verdict", pa.string()), ("replication", pa.string()),
]))
