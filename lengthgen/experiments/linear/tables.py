"""Tables of the linear experiment: arm 1, the min-norm control, and arm 2, the linear-attention head."""

import pyarrow as pa

from lengthgen.tables.io import TableSchema

# The two arms, and arm 2's matched softmax head (arm 2 with its softmax: only its accuracy and weights by length), by
# the name their rows carry in the ``arm`` column.
ARMS = {"min_norm_control": "arm 1 (min-norm control)", "attention_head": "arm 2 (linear-attention head)",
        "matched_softmax_head": "matched softmax head (arm 2's base)"}
ARM_KEYS = [("arm", pa.string()), ("offset", pa.int32()), ("seed", pa.int32())]

# One row per (arm, run, evaluation length), the matched softmax head's too: accuracy and mean weights per sequence,
# raw units.
# far_key_weight: mean |weight| of the keys at delta in [n/2, n), target excluded.
LINEAR_BY_LENGTH = TableSchema("linear_by_length", pa.schema(ARM_KEYS + [
    ("length", pa.int32()), ("in_training_range", pa.bool_()), ("accuracy", pa.float64()),
    ("target_weight", pa.float64()), ("target_abs_weight", pa.float64()), ("distractor_weight", pa.float64()),
    ("far_key_weight", pa.float64()),
]), ("arm", "offset", "seed", "length"))

# One row per (arm, run, solution, delta < 4 L): the trained and the compared min-norm kernel, target = 1.
LINEAR_KERNEL = TableSchema("linear_kernel", pa.schema(ARM_KEYS + [
    ("solution", pa.string()), ("delta", pa.int32()), ("kernel", pa.float64()),
]), ("arm", "offset", "seed", "solution", "delta"))

_MATCH_FIELDS = [
    ("rtol", pa.float64()), ("rank", pa.int32()), ("min_norm_norm", pa.float64()),
    ("min_norm_fit_error", pa.float64()), ("kernel_cosine", pa.float64()), ("max_kernel_error", pa.float64()),
    ("relative_error", pa.float64()), ("coefficient_cosine", pa.float64()), ("norm_ratio", pa.float64()), ("row_space_fraction", pa.float64()),
    ("min_norm_far_key_weight", pa.float64()),
]

# One row per (arm, run, singular-value cut-off): the min-norm solution at that cut-off against the trained kernel.
LINEAR_CUTOFFS = TableSchema("linear_cutoffs", pa.schema(ARM_KEYS + _MATCH_FIELDS), ("arm", "offset", "seed", "rtol"))

# One row per (arm, run): the comparison at arm 1's exact solution or arm 2's most favourable cut-off.
LINEAR_COMPARISON = TableSchema("linear_comparison", pa.schema(ARM_KEYS + _MATCH_FIELDS + [
    ("condition_number", pa.float64()), ("trained_target_kernel", pa.float64()), ("trained_fit_error", pa.float64()),
    ("trained_far_key_weight", pa.float64()),
]), ("arm", "offset", "seed"))

# One row per (arm-1 run, logged step): its loss and its kernel against the closed-form min-norm kernel.
LINEAR_CONVERGENCE = TableSchema("linear_convergence", pa.schema([("offset", pa.int32()), ("seed", pa.int32()),
    ("step", pa.int32()), ("loss", pa.float64()), ("kernel_cosine", pa.float64()), ("max_kernel_error", pa.float64()),
]), ("offset", "seed", "step"))

# One row per (arm-2 run, window of steps): mean training accuracy over the window ending at until_step.
LINEAR_TRAINING_PROGRESS = TableSchema("linear_training_progress", pa.schema([
    ("offset", pa.int32()), ("seed", pa.int32()), ("until_step", pa.int32()), ("accuracy", pa.float64()),
]), ("offset", "seed", "until_step"))

# One row per (width d, rotary base, offset) of arm 1's sweep: the closed-form min-norm interpolant (no training)
# at singular-value cut-off rtol. far_key_weight: its mean |k| over [n/2, n) at the longest evaluation length n,
# target = 1; accuracy: its accuracy at that length, on the offset's evaluation set.
LINEAR_MIN_NORM_SWEEP = TableSchema("linear_min_norm_sweep", pa.schema([
    ("d_model", pa.int32()), ("rope_base", pa.float64()), ("offset", pa.int32()), ("condition_number", pa.float64()),
    ("rtol", pa.float64()), ("rank", pa.int32()), ("length", pa.int32()), ("far_key_weight", pa.float64()),
    ("accuracy", pa.float64()),
]), ("d_model", "rope_base", "offset"))
