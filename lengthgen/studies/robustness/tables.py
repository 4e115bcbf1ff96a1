"""The robustness study's table: the mechanism measured at each point."""

import pyarrow as pa

from lengthgen.tables.io import TableSchema

# One row per point: the mechanism there. rope's wrong answers past the training range (n_wrong, summed over seeds,
# offsets and lengths, from errors_by_length) and the share of them that are ranking errors; the carrier kernel
# (the content-averaged logit kernel of prop1_kernel) of each rope head: its largest value at offsets never seen in
# training, over its value at the target offset (unseen_peak_ratio) and minus it (unseen_peak_gap, in logits: > 0
# when a distractor there outranks the target on average), each the median over rope heads (seeds x offsets); and
# the MAE of the accuracy past the training range that the dilution law (prop1's claim predictor) and the ranking
# predictor give, over every trained rope head (prop1_error), with the one of lower MAE.
ROBUSTNESS_MECHANISM = TableSchema("robustness_mechanism", pa.schema([
    ("point", pa.string()), ("n_wrong", pa.int64()), ("ranking_share_of_wrong", pa.float64()),
    ("unseen_peak_ratio", pa.float64()), ("unseen_peak_gap", pa.float64()), ("dilution_predictor", pa.string()),
    ("dilution_mae", pa.float64()), ("ranking_mae", pa.float64()), ("better_predictor", pa.string()),
]), ("point",))
