"""Tables of the multiseed experiment: every headline number per run, and over runs."""

import pyarrow as pa

from lengthgen.tables.io import TableSchema

# One row per (headline, offset, seed).
HEADLINE_BY_SEED = TableSchema("headline_by_seed", pa.schema([
    ("headline", pa.string()), ("offset", pa.int32()), ("seed", pa.int32()), ("value", pa.float64()),
]), ("headline", "offset", "seed"))

# One row per (headline, offset or "all"): statistics over runs and the rule's threshold.
HEADLINE_SUMMARY = TableSchema("headline_summary", pa.schema([
    ("headline", pa.string()), ("offset", pa.string()), ("n_seeds", pa.int32()), ("mean", pa.float64()),
    ("ci_low", pa.float64()), ("ci_high", pa.float64()), ("threshold", pa.float64()), ("comparison", pa.string()),
    ("fraction_of_runs_meeting", pa.float64()),
]), ("headline", "offset"))
