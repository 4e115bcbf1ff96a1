"""Tables of the mechanics experiment: where each head attends at every evaluation length."""

import pyarrow as pa

from lengthgen.tables.core import RUN_KEYS
from lengthgen.tables.io import TableSchema

# One row per (run, evaluation length): argmax and attention-mass statistics.
MECHANICS_BY_LENGTH = TableSchema("mechanics_by_length", pa.schema(RUN_KEYS + [
    ("length", pa.int32()), ("past_training_range", pa.bool_()), ("n_sequences", pa.int32()),
    ("modal_position", pa.int32()), ("modal_fraction", pa.float64()), ("modal_in_training_range", pa.bool_()),
    ("mass_in_training_range", pa.float64()), ("target_attention", pa.float64()), ("max_weight", pa.float64()),
]), ("pe", "offset", "seed", "length"))

# The same rows for each head at its seeded initialization (before training): the baseline of the checks.
MECHANICS_UNTRAINED_BY_LENGTH = TableSchema("mechanics_untrained_by_length", MECHANICS_BY_LENGTH.schema,
                                            ("pe", "offset", "seed", "length"))

# One row per (run, length, key position) that is the argmax of at least one sequence.
MECHANICS_ARGMAX_HISTOGRAM = TableSchema("mechanics_argmax_histogram", pa.schema(RUN_KEYS + [
    ("length", pa.int32()), ("position", pa.int32()), ("count", pa.int32()),
]), ("pe", "offset", "seed", "length", "position"))

# One row per (run, length, key position): the mean attention weight there.
MECHANICS_ATTENTION_PROFILE = TableSchema("mechanics_attention_profile", pa.schema(RUN_KEYS + [
    ("length", pa.int32()), ("position", pa.int32()), ("mean_weight", pa.float64()),
]), ("pe", "offset", "seed", "length", "position"))
