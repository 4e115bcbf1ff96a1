"""Tables of prop1, the attention-dilution law: predictions from parameters vs measurements."""

import pyarrow as pa

from lengthgen.tables import TableSchema

# One row per (offset, seed, length, predictor): prediction from parameters vs measurement.
PROP1_PREDICTION = TableSchema("prop1_prediction", pa.schema([
    ("offset", pa.int32()), ("seed", pa.int32()), ("length", pa.int32()), ("in_training_range", pa.bool_()),
    ("predictor", pa.string()), ("predicted_attention", pa.float64()), ("measured_attention", pa.float64()),
    ("predicted_accuracy", pa.float64()), ("measured_accuracy", pa.float64()),
]), ("offset", "seed", "length", "predictor"))

# One row per (scope, lengths, predictor, quantity): errors of predicted vs measured over every
# (offset, seed, length) point in the scope. scope is "K=<offset>" or "all"; lengths is
# "beyond_training" (length > train_length_max) or "all".
PROP1_ERROR = TableSchema("prop1_error", pa.schema([
    ("scope", pa.string()), ("lengths", pa.string()), ("predictor", pa.string()), ("quantity", pa.string()),
    ("n", pa.int32()), ("mae", pa.float64()), ("bias", pa.float64()), ("correlation", pa.float64()),
]), ("scope", "lengths", "predictor", "quantity"))
