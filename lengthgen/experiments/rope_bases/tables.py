"""Tables of the rope_bases experiment: the rope-base variants' accuracy past the range, predicted and measured."""

import pyarrow as pa

from lengthgen.tables.core import RUN_KEYS
from lengthgen.tables.io import TableSchema
from lengthgen.science.prediction_errors import DILUTION_LAW_PREDICTOR

# The predictors the prediction table holds, in the order the figure and the prose show them: the dilution law
# and the ranking account of prop1.
ORDER_PREDICTORS = (DILUTION_LAW_PREDICTOR, "ranking")

# One row per (run, length past the training range, predictor): the accuracy the predictor gives from the
# head's parameters and the accuracy measured on the evaluation set (repeated on each predictor's row).
ROPE_BASES_PREDICTION = TableSchema("rope_bases_prediction", pa.schema(RUN_KEYS + [
    ("length", pa.int32()), ("predictor", pa.string()), ("predicted_accuracy", pa.float64()),
    ("measured_accuracy", pa.float64()),
]), ("pe", "offset", "seed", "length", "predictor"))

# One row per (offset, encoding, source): source is "measured" or a predictor; the mean accuracy over seeds and
# lengths past the training range, and the encoding's rank by it among the encodings of that offset and source.
ROPE_BASES_ORDER = TableSchema("rope_bases_order", pa.schema([
    ("offset", pa.int32()), ("pe", pa.string()), ("source", pa.string()), ("mean_accuracy", pa.float64()),
    ("rank", pa.int32()),
]), ("offset", "source", "pe"))
