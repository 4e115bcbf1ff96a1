"""The replication table: every check of the exploratory run and of each confirmation run, side by side."""

import pyarrow as pa

from lengthgen.tables import TableSchema

# One row per (run, check, instance): the check's identity (lengthgen.claims.check_identity), its text, rule,
# value and outcome in that run with its seed spread, whether the check replicates there (yes / no; empty for
# the exploratory run and for checks it does not measure) and the cause where it does not (measurement, rule,
# claim), the verdict of its experiment in that run, and its experiment's replication verdict over the study.
REPLICATION = TableSchema("replication", pa.schema([
    ("run", pa.string()), ("family", pa.string()), ("check", pa.string()), ("instance", pa.string()),
    ("experiment", pa.string()), ("claim", pa.string()), ("statistic", pa.string()), ("rule", pa.string()),
    ("value", pa.float64()), ("holds", pa.bool_()), ("n_seeds", pa.int32()), ("resamples", pa.int32()),
    ("spread_low", pa.float64()), ("spread_high", pa.float64()), ("holds_fraction", pa.float64()),
    ("decided", pa.bool_()), ("outcome", pa.string()), ("replicates", pa.string()), ("cause", pa.string()),
    ("claim_verdict", pa.string()), ("replication", pa.string()),
]))
