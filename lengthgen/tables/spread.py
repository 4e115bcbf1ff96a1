"""The seed bootstrap's table: how far each check's statistic moves when the seeds are resampled."""

import pyarrow as pa

from lengthgen.tables.core import CHECK_KEY_FIELDS
from lengthgen.tables.io import TableSchema

# One row per check of a claim, in the order of its claims table (``lengthgen.checks.bootstrap``): the
# statistic's percentile interval over seed resamples and the fraction of resamples in which it holds; and, the
# check computed on each seed alone, on how many seeds it has a value (n) and on how many of them it fails (k), both
# null where no single seed gives it a value (a statistic over seed pairs, a t-interval).
# <results>/spread/<section>.parquet per experiment, <results>/tables/claim_spread.parquet for all.
CLAIM_SPREAD = TableSchema("claim_spread", pa.schema(CHECK_KEY_FIELDS + [("n_seeds", pa.int32()),
    ("resamples", pa.int32()), ("spread_low", pa.float64()), ("spread_high", pa.float64()),
    ("holds_fraction", pa.float64()), ("seeds_checked", pa.int32()), ("seeds_failing", pa.int32()),
]))
