"""The rope_bases section of RESULTS.md: the rope-base variants' accuracy past the range, measured and predicted
from their parameters, and whether each predictor orders them as measured."""

import pandas as pd

from lengthgen.claims import checks_markdown
from lengthgen.table_schemas.rope_bases import ORDER_PREDICTORS
from lengthgen.thresholds import ORDER_MIN_ACCURACY_GAP, PROP1_CLAIM_PREDICTOR

SOURCES = ("measured", *ORDER_PREDICTORS)


def order_markdown(order: pd.DataFrame) -> str:
    """Per (offset, encoding): the mean accuracy past the range and its rank, measured and per predictor."""
    cells = order.assign(cell=[f"{row.mean_accuracy:.3f} ({row.rank})" for row in order.itertuples()])
    wide = cells.pivot(index=["offset", "pe"], columns="source", values="cell").reindex(columns=list(SOURCES))
    wide.columns = [f"{source}: mean accuracy (rank)" for source in wide.columns]
    return wide.rename_axis(["K", "encoding"]).reset_index().to_markdown(index=False, disable_numparse=True)


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    prediction = tables["rope_bases_prediction"]
    lengths = sorted(prediction["length"].unique())
    seeds = sorted(prediction["seed"].unique())
    return "\n\n".join([
        "## rope_bases: do the accounts predict the rope-base variants' order?",
        "The variants train rope at rotary bases " + ", ".join(sorted(prediction["pe"].unique())) + " (seeds "
        + ", ".join(map(str, seeds)) + "). Each head's accuracy at the lengths past the training range ("
        + ", ".join(map(str, lengths)) + ") is predicted from its parameters alone by the dilution law "
        f"(`{PROP1_CLAIM_PREDICTOR}`, prop1) and by the ranking account (`ranking`: some distractor outranks the "
        "target), and set beside the accuracy measured in the variants' evaluations. The test, fixed before the "
        "run: per offset, every pair of encodings whose measured mean accuracies past the range differ by at least "
        f"{ORDER_MIN_ACCURACY_GAP:g} must be predicted in the measured order (closer pairs are within the seeds' "
        "noise and decide nothing).",
        "Mean accuracy past the range over seeds and lengths (rank among the encodings, 1 = best):",
        order_markdown(tables["rope_bases_order"]),
        "![measured and predicted accuracy of rope at each rotary base](figures/rope_bases.png)",
        checks_markdown(checks),
    ])
