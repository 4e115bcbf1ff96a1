"""Tables of the transformer experiment: accuracy per position, windows of it, every head of each rope model with its
carrier, trained and at its seeded initialization (their baseline), and the steps.

Its shift measurements have the columns of the shift experiment's table (``schemas.shift.SHIFT_CHANGES``).
"""

import pyarrow as pa

from lengthgen.tables.core import RUN_KEYS, SEED_KEYS
from lengthgen.experiments.frequency.tables import FREQUENCY_BLOCKS, FREQUENCY_SUMMARY
from lengthgen.experiments.shift.tables import SHIFT_CHANGES
from lengthgen.tables.io import TableSchema

TRANSFORMER_SHIFT_CHANGES = TableSchema("transformer_shift_changes", SHIFT_CHANGES.schema, SHIFT_CHANGES.sort_keys)
_HEAD_KEYS = SEED_KEYS + [("layer", pa.int32()), ("head", pa.int32())]


def _fields_after_keys(kind: TableSchema) -> list[pa.Field]:
    """A frequency table's columns without its (offset, seed) keys."""
    return [field for field in kind.schema if field.name not in ("offset", "seed")]


# One row per (run, evaluation length, position t >= K): the full-sequence task's accuracy and loss there.
TRANSFORMER_BY_POSITION = TableSchema("transformer_by_position", pa.schema(RUN_KEYS + [
    ("length", pa.int32()), ("position", pa.int32()), ("accuracy", pa.float64()), ("loss", pa.float64()),
]), ("pe", "offset", "seed", "length", "position"))

# One row per (run, evaluation length): accuracy over the last train_length_max positions.
TRANSFORMER_WINDOWS = TableSchema("transformer_windows", pa.schema(RUN_KEYS + [
    ("length", pa.int32()), ("window_start", pa.int32()), ("in_training_range", pa.bool_()),
    ("past_training_range", pa.bool_()), ("accuracy", pa.float64()),
]), ("pe", "offset", "seed", "length"))

# One row per (rope model, layer, head, offset delta): mean attention weight at that offset, in range.
TRANSFORMER_HEADS = TableSchema("transformer_heads", pa.schema(_HEAD_KEYS + [
    ("delta", pa.int32()), ("mean_weight", pa.float64()),
]), ("offset", "seed", "layer", "head", "delta"))

# One row per rotary block of every head of each rope model (the frequency_blocks columns).
TRANSFORMER_BLOCKS = TableSchema("transformer_blocks", pa.schema(_HEAD_KEYS + _fields_after_keys(FREQUENCY_BLOCKS)),
                                 ("offset", "seed", "layer", "head", "block"))

# One row per (rope model, layer, head): its attention at offset K, whether it retrieves (``summaries.retrieves``),
# and its carrier (frequency_summary columns) with the carrier kernel's correlation with its realized logits.
TRANSFORMER_CARRIER = TableSchema("transformer_carrier", pa.schema(_HEAD_KEYS + [
    ("attention_at_offset", pa.float64()), ("retrieves", pa.bool_()), ("kernel_logit_correlation", pa.float64()),
] + _fields_after_keys(FREQUENCY_SUMMARY)), ("offset", "seed", "layer", "head"))

# The same for every head of each rope model at its seeded initialization, measured on the same sequences: the
# baseline of transformer_carrier (each retrieving head against the same (layer, head) here).
TRANSFORMER_UNTRAINED_CARRIER = TableSchema("transformer_untrained_carrier", TRANSFORMER_CARRIER.schema,
                                            TRANSFORMER_CARRIER.sort_keys)

# One row per step in a run's accuracy by position (``experiments.transformer.find_steps``): where it falls, and the
# mean accuracy over the window of train_length_max positions before and from there on.
TRANSFORMER_STEPS = TableSchema("transformer_steps", pa.schema(RUN_KEYS + [
    ("position", pa.int32()), ("accuracy_before", pa.float64()), ("accuracy_after", pa.float64()),
]), ("pe", "offset", "seed", "position"))

# One row per rope model: the step the carrier kernel of its strongest head (the most attention at K) predicts (null:
# none in the evaluated lengths), the kernel's value at K, its lead over the in-range median, the closest an unseen
# offset comes to s(K) (in leads), and the first step found past the range (null: none).
TRANSFORMER_STEP_PREDICTIONS = TableSchema("transformer_step_predictions", pa.schema(_HEAD_KEYS + [
    ("kernel_at_offset", pa.float64()), ("kernel_lead", pa.float64()), ("closest_unseen_gap", pa.float64()),
    ("predicted_step", pa.int32()), ("found_step", pa.int32()),
]), ("offset", "seed"))
