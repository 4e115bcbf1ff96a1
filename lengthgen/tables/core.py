"""Tables of the core pipeline: evaluation sets, training curves, accuracy, and claims."""

import pyarrow as pa

from lengthgen.tables.io import TableSchema

RUN_KEYS = [("pe", pa.string()), ("offset", pa.int32()), ("seed", pa.int32())]
SEED_KEYS = [("offset", pa.int32()), ("seed", pa.int32())]
# A check (lengthgen/checks/check.py): its key (experiment, claim, statistic, offset; offset null when pooled),
# the section it is reported in, its value against a comparison and threshold, the rule's text, its kind.
CHECK_KEY_FIELDS = [("experiment", pa.string()), ("section", pa.string()), ("claim", pa.string()),
                    ("statistic", pa.string()), ("offset", pa.int32())]
_CLAIM_FIELDS = CHECK_KEY_FIELDS + [("value", pa.float64()), ("comparison", pa.string()), ("threshold", pa.float64()),
                                    ("rule", pa.string()), ("holds", pa.bool_()), ("kind", pa.string())]

# One row per evaluation sequence; tokens stored as a list column.
EVAL_SET = TableSchema("eval_set", pa.schema([
    ("offset", pa.int32()), ("length", pa.int32()), ("sample", pa.int32()), ("tokens", pa.list_(pa.int32())),
    ("target", pa.int32()),
]), ("offset", "length", "sample"))

# One row per training step of one run.
TRAINING_CURVE = TableSchema("training_curve", pa.schema(RUN_KEYS + [
    ("step", pa.int32()), ("length", pa.int32()), ("lr", pa.float64()), ("loss", pa.float64()),
    ("accuracy", pa.float64()),
]), ("pe", "offset", "seed", "step"))

# One row per trained model: how well it fits its training range (training.range_fit).
RANGE_FIT = TableSchema("range_fit", pa.schema(RUN_KEYS + [
    ("heldout_accuracy", pa.float64()), ("final_loss", pa.float64()), ("fitted", pa.bool_()),
    ("settled", pa.bool_()), ("converged", pa.bool_()),
]), ("pe", "offset", "seed"))

# Every trained model's range fit, by model family (sweep, linear, log_length, transformer).
TRAINING_SUMMARY = TableSchema("training_summary", pa.schema([pa.field("family", pa.string()), *RANGE_FIT.schema,
                                                      pa.field("why", pa.string())]),
                               ("family", "pe", "offset", "seed"))

# One row per (run, evaluation length).
ACCURACY_BY_LENGTH = TableSchema("accuracy_by_length", pa.schema([("experiment", pa.string())] + RUN_KEYS + [
    ("length", pa.int32()), ("in_training_range", pa.bool_()), ("accuracy", pa.float64()),
    ("target_attention", pa.float64()), ("loss", pa.float64()),
]), ("experiment", "pe", "offset", "seed", "length"))

# One row per (encoding, offset, length): statistics over seeds.
ACCURACY_SUMMARY = TableSchema("accuracy_summary", pa.schema([
    ("experiment", pa.string()), ("pe", pa.string()), ("offset", pa.int32()), ("length", pa.int32()),
    ("in_training_range", pa.bool_()), ("n_seeds", pa.int32()), ("mean", pa.float64()), ("ci_low", pa.float64()),
    ("ci_high", pa.float64()),
]), ("experiment", "pe", "offset", "length"))

# One row per check of a claim, in the order the experiment lists them; every experiment's together in
# <results>/tables/claims.parquet.
CLAIMS = TableSchema("claims", pa.schema(_CLAIM_FIELDS))
