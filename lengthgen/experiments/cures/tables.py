"""Tables of cures: rope and learned heads under evaluation-time length scalings, and predictions."""

import pyarrow as pa

from lengthgen.tables.io import TableSchema

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

# One row per (cure, source): the fraction of rope's lost accuracy past the training range a cure
# wins back, mean(cured - uncured) / mean(1 - uncured); source "measured" or a prop1 predictor;
# cure "hard_attention" is the limit of unbounded sharpening (measured). NaN where nothing was lost.
CURES_RECOVERY = TableSchema("cures_recovery", pa.schema([
    ("cure", pa.string()), ("source", pa.string()), ("recovered_fraction", pa.float64()),
]), ("cure", "source"))
