"""Tables of the linear-attention control."""

import pyarrow as pa

from lengthgen.schemas.core import SEED_KEYS
from lengthgen.tables import TableSchema

# One row per (run, evaluation length): accuracy, loss, and mean weights per sequence.
LINEAR_BY_LENGTH = TableSchema("linear_by_length", pa.schema(SEED_KEYS + [
    ("length", pa.int32()), ("in_training_range", pa.bool_()), ("accuracy", pa.float64()), ("loss", pa.float64()),
    ("target_weight", pa.float64()), ("target_abs_weight", pa.float64()), ("distractor_weight", pa.float64()),
]), ("offset", "seed", "length"))

# One row per (run, solution, delta): the kernel, scaled to 1 at the target offset.
LINEAR_KERNEL = TableSchema("linear_kernel", pa.schema(SEED_KEYS + [
    ("solution", pa.string()), ("delta", pa.int32()), ("kernel", pa.float64()),
]), ("offset", "seed", "solution", "delta"))

# One row per run: trained kernel vs the min-norm one.
LINEAR_KERNEL_COMPARISON = TableSchema("linear_kernel_comparison", pa.schema(SEED_KEYS + [
    ("trained_target_kernel", pa.float64()), ("coefficient_cosine", pa.float64()), ("kernel_cosine", pa.float64()),
    ("trained_fit_error", pa.float64()), ("min_norm_fit_error", pa.float64()), ("norm_ratio", pa.float64()),
    ("row_space_fraction", pa.float64()), ("basis_rank", pa.int32()),
]), ("offset", "seed"))

# One row per (run, solution, length): the kernel's total |weight| off the target.
LINEAR_KERNEL_DILUTION = TableSchema("linear_kernel_dilution", pa.schema(SEED_KEYS + [
    ("solution", pa.string()), ("length", pa.int32()), ("distractor_weight", pa.float64()),
]), ("offset", "seed", "solution", "length"))
