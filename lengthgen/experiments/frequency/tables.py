"""Tables of the frequency experiment: the rotary frequency decomposition of each head's kernel."""

import pyarrow as pa

from lengthgen.tables.core import SEED_KEYS
from lengthgen.tables.io import TableSchema

# One row per rotary block of one head.
FREQUENCY_BLOCKS = TableSchema("frequency_blocks", pa.schema(SEED_KEYS + [
    ("block", pa.int32()), ("theta", pa.float64()), ("amplitude", pa.float64()), ("phase", pa.float64()),
    ("energy", pa.float64()), ("energy_share", pa.float64()), ("energy_rank", pa.int32()), ("alignment", pa.float64()),
]), ("offset", "seed", "block"))

# One row per head: concentration and alignment of its carrier. top_blocks: how many of its n_blocks the frequency
# checks judge, max(1, D/16); top_share and top_alignment: those blocks' energy share and energy-weighted alignment.
FREQUENCY_SUMMARY = TableSchema("frequency_summary", pa.schema(SEED_KEYS + [
    ("n_blocks", pa.int32()), ("top1_share", pa.float64()), ("top2_share", pa.float64()), ("top4_share", pa.float64()),
    ("top_blocks", pa.int32()), ("top_share", pa.float64()), ("top_alignment", pa.float64()),
    ("participation_ratio", pa.float64()), ("entropy_rank", pa.float64()), ("top1_alignment", pa.float64()),
    ("top4_alignment", pa.float64()), ("amplitude_alignment", pa.float64()), ("peak_delta", pa.int32()),
    ("singular_rank90", pa.int32()),
]), ("offset", "seed"))

# One row per head at its seeded initialization (before training): the baseline of the summary.
FREQUENCY_UNTRAINED_SUMMARY = TableSchema("frequency_untrained_summary", FREQUENCY_SUMMARY.schema, ("offset", "seed"))

# One row per singular value of one head's position kernel matrix, largest first.
FREQUENCY_SINGULAR_VALUES = TableSchema("frequency_singular_values", pa.schema(SEED_KEYS + [
    ("index", pa.int32()), ("singular_value", pa.float64()), ("energy_share", pa.float64()),
]), ("offset", "seed", "index"))
