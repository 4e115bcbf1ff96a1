"""Tables of cures: rope and learned heads under evaluation-time length scalings, and predictions."""

import pyarrow as pa

from lengthgen.tables import TableSchema

_KEYS = [("head", pa.string()), ("cure", pa.string()), ("offset", pa.int32()), ("seed", pa.int32()),
         ("length", pa.int32())]

# One row per (head, cure, offset, seed, length). head: rope, learned (the sweep's heads), or
# rope_log_length (trained with log-length scaling, cure "none"). hard_accuracy: accuracy when
# each sequence attends only to its highest-logit key.
CURES_BY_LENGTH = TableSchema("cures_by_length", pa.schema(_KEYS + [
    ("in_training_range", pa.bool_()), ("accuracy", pa.float64()), ("target_attention", pa.float64()),
    ("hard_accuracy", pa.float64()),
]), ("head", "cure", "offset", "seed", "length"))

# One row per (head, cure, offset, seed, length, predictor): prop1's law on the (cured) rope head.
CURES_PREDICTION = TableSchema("cures_prediction", pa.schema(_KEYS + [
    ("predictor", pa.string()), ("predicted_attention", pa.float64()), ("predicted_accuracy", pa.float64()),
]), ("head", "cure", "offset", "seed", "length", "predictor"))
