"""Tables of the errors experiment: every wrong answer split into ranking and dilution errors."""

import pyarrow as pa

from lengthgen.tables.core import RUN_KEYS
from lengthgen.tables.io import TableSchema

# One row per (run, evaluation length). n_ranking_error: wrong answers whose highest-logit key is not the
# target; n_dilution_error: wrong answers whose highest-logit key is the target; n_outranked: sequences,
# right or wrong, whose highest-logit key is not the target. Of the ranking errors, n_winning_seen have
# their winning key at an offset (query position minus key position) seen in training, 0..train_length_max-1,
# n_winning_unseen at a larger one; median_winning_offset is NaN without ranking errors. Shares are of all
# answers, and of wrong answers (NaN without wrong answers).
ERRORS_BY_LENGTH = TableSchema("errors_by_length", pa.schema(RUN_KEYS + [
    ("length", pa.int32()), ("past_training_range", pa.bool_()), ("n_sequences", pa.int32()),
    ("n_wrong", pa.int32()), ("n_ranking_error", pa.int32()), ("n_dilution_error", pa.int32()),
    ("n_outranked", pa.int32()), ("n_winning_seen", pa.int32()), ("n_winning_unseen", pa.int32()),
    ("median_winning_offset", pa.float64()), ("accuracy", pa.float64()), ("ranking_share", pa.float64()),
    ("dilution_share", pa.float64()), ("ranking_share_of_wrong", pa.float64()),
    ("dilution_share_of_wrong", pa.float64()),
]), ("pe", "offset", "seed", "length"))

# One row per (run, length, bin of winning offsets up to the longest length), with the number of ranking
# errors whose winning key lies in it: the bins double in width (0, 1, 2-3, 4-7, ...) with train_length_max
# an edge, so each is wholly seen in training or wholly unseen; bins past a length's own offsets count 0.
ERRORS_WINNING_OFFSET = TableSchema("errors_winning_offset", pa.schema(RUN_KEYS + [
    ("length", pa.int32()), ("winning_offset_min", pa.int32()), ("winning_offset_max", pa.int32()),
    ("seen", pa.bool_()), ("count", pa.int32()),
]), ("pe", "offset", "seed", "length", "winning_offset_min"))

# One row per (rope run, length, predictor): the shares of all answers that are ranking and dilution errors,
# predicted from the head's parameters by the predictor (the dilution law: no ranking errors, its predicted
# error as dilution; ranking: the answers a key of another token outranks the target in, no dilution errors)
# and measured.
ERRORS_PREDICTED_SPLIT = TableSchema("errors_predicted_split", pa.schema(RUN_KEYS + [
    ("length", pa.int32()), ("past_training_range", pa.bool_()), ("predictor", pa.string()),
    ("predicted_ranking_share", pa.float64()), ("predicted_dilution_share", pa.float64()),
    ("measured_ranking_share", pa.float64()), ("measured_dilution_share", pa.float64()),
]), ("pe", "offset", "seed", "length", "predictor"))
