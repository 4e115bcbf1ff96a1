"""Tables of prop1, the attention-dilution law: predictions from parameters vs measurements."""

import pyarrow as pa

from lengthgen.tables.io import TableSchema

PREDICTION_COLUMNS = pa.schema([
    ("offset", pa.int32()), ("seed", pa.int32()), ("length", pa.int32()), ("in_training_range", pa.bool_()),
    ("predictor", pa.string()), ("predicted_attention", pa.float64()), ("measured_attention", pa.float64()),
    ("predicted_accuracy", pa.float64()), ("measured_accuracy", pa.float64()),
])
# One row per (offset, seed, length, predictor): prediction from parameters vs measurement.
# ranking predicts accuracy only: its predicted_attention repeats mean_field's (lengthgen/science/dilution.py).
PROP1_PREDICTION = TableSchema("prop1_prediction", PREDICTION_COLUMNS, ("offset", "seed", "length", "predictor"))
# The same for each rope head of the sweep at its seeded init (the baseline), measured by prop1.
PROP1_UNTRAINED_PREDICTION = TableSchema("prop1_untrained_prediction", PREDICTION_COLUMNS,
                                         ("offset", "seed", "length", "predictor"))

# One row per (heads, scope, lengths, predictor, quantity): errors of predicted vs measured over every
# (offset, seed, length) point in the scope. heads is "trained" or "untrained"; scope is "K=<offset>"
# or "all"; lengths is "beyond_training" (length > train_length_max) or "all"; predictor is one of
# prop1's predictors or a trivial baseline (chance, no_decay).
PROP1_ERROR = TableSchema("prop1_error", pa.schema([
    ("heads", pa.string()), ("scope", pa.string()), ("lengths", pa.string()), ("predictor", pa.string()),
    ("quantity", pa.string()), ("n", pa.int32()), ("mae", pa.float64()), ("bias", pa.float64()),
    ("correlation", pa.float64()),
]), ("heads", "scope", "lengths", "predictor", "quantity"))

# One row per (offset, seed, delta), delta = 1 .. longest evaluation length - 1: a trained rope head's
# logit kernel. seen: delta < train_length_max (an offset training showed). mean_logit: content-averaged
# logit; mean_relative: minus its value at K. gap_*: over token triples (query a, target t, key b != t) of
# s_ab(delta) - s_at(K); beat_probability: share of uniform triples where a key at delta outranks the target.
PROP1_KERNEL = TableSchema("prop1_kernel", pa.schema([
    ("offset", pa.int32()), ("seed", pa.int32()), ("delta", pa.int32()), ("seen", pa.bool_()),
    ("mean_logit", pa.float64()), ("mean_relative", pa.float64()), ("gap_min", pa.float64()),
    ("gap_q05", pa.float64()), ("gap_median", pa.float64()), ("gap_q95", pa.float64()), ("gap_max", pa.float64()),
    ("beat_probability", pa.float64()),
]), ("offset", "seed", "delta"))

# One row per (offset, seed): the kernel's summary over distractor offsets (delta != K), seen and unseen.
# first_unseen_beating_delta: the smallest unseen delta whose gap_max > 0 (null: none up to the longest
# length); expected_unseen_beaters: sum of beat_probability over unseen deltas at the longest length.
PROP1_KERNEL_SUMMARY = TableSchema("prop1_kernel_summary", pa.schema([
    ("offset", pa.int32()), ("seed", pa.int32()), ("target_mean_logit", pa.float64()),
    ("max_mean_relative_seen", pa.float64()), ("max_mean_relative_unseen", pa.float64()),
    ("delta_of_max_mean_relative_unseen", pa.int32()), ("max_gap_seen", pa.float64()),
    ("max_gap_unseen", pa.float64()), ("first_unseen_beating_delta", pa.int32()),
    ("expected_unseen_beaters", pa.float64()),
]), ("offset", "seed"))
