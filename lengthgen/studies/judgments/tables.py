"""The judgments' table: every claim, in every condition, at every K, by its one rule (lengthgen/checks/judgment.py)."""

import pyarrow as pa

from lengthgen.tables.io import TableSchema

# One row per (claim, condition, offset). The condition: its name (``this run``, a confirmation run's, a robustness
# point's), its kind (run, confirmation, robustness), whether its data had been seen when the rules were fixed
# (``seen``: false only for a confirmation run added to the config after them, the out-of-sample test), what it
# changes (``key: this run's value -> its value``, or its file's note) and the values it sets (``settings``). The claim's primary statistic over seeds: n_seeds, mean, the 95% seed-bootstrap interval, the seeds whose
# own value clears the threshold; the rule (comparison, threshold); the baseline's mean over the same seeds (NaN
# where there is none); and the verdict at that K (holds, does not hold, inconclusive, untestable).
CLAIM_JUDGMENTS = TableSchema("claim_judgments", pa.schema([
    ("claim", pa.string()), ("condition", pa.string()), ("kind", pa.string()), ("seen", pa.bool_()),
    ("changes", pa.string()), ("settings", pa.string()), ("offset", pa.int32()), ("n_seeds", pa.int32()), ("mean", pa.float64()),
    ("ci_low", pa.float64()), ("ci_high", pa.float64()), ("seeds_clearing", pa.int32()),
    ("comparison", pa.string()), ("threshold", pa.float64()), ("baseline", pa.float64()), ("verdict", pa.string()),
]), ("claim", "condition", "offset"))

# One row per (statistic, condition, offset): every secondary statistic of a claim, mean and interval over seeds.
CLAIM_SECONDARY = TableSchema("claim_secondary", pa.schema([
    ("statistic", pa.string()), ("condition", pa.string()), ("offset", pa.int32()), ("n_seeds", pa.int32()),
    ("mean", pa.float64()), ("ci_low", pa.float64()), ("ci_high", pa.float64()),
]), ("statistic", "condition", "offset"))
