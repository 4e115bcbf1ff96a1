"""The rope_bases section of RESULTS.md: the rope-base variants' accuracy past the range, measured and predicted
from their parameters, whether each predictor orders them as measured, and each predictor's error."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.rope_bases.summaries import EVERY_BASE, accuracy_errors, decided_pairs
from lengthgen.experiments.rope_bases.tables import ORDER_PREDICTORS
from lengthgen.science.prediction_errors import DILUTION_LAW_PREDICTOR
from lengthgen.experiments.rope_bases.thresholds import ORDER_MIN_ACCURACY_GAP

SOURCES = ("measured", *ORDER_PREDICTORS)


def order_markdown(order: pd.DataFrame) -> str:
    """Per (offset, encoding): the mean accuracy past the range and its rank, measured and per predictor."""
    cells = order.assign(cell=[f"{row.mean_accuracy:.3f} ({row.rank})" for row in order.itertuples()])
    wide = cells.pivot(index=["offset", "pe"], columns="source", values="cell").reindex(columns=list(SOURCES))
    wide.columns = [f"{source}: mean accuracy (rank)" for source in wide.columns]
    return wide.rename_axis(["K", "encoding"]).reset_index().to_markdown(index=False, disable_numparse=True)


def errors_markdown(errors: pd.DataFrame) -> str:
    """Per (offset, encoding), with every base pooled per offset and over all offsets: each predictor's
    accuracy MAE past the range and its bias."""
    cells = errors.assign(cell=[f"{row.mae:.3f} ({row.bias:+.3f})" for row in errors.itertuples()],
                          K=errors["offset"].map(lambda offset: "all" if pd.isna(offset) else str(offset)))
    wide = cells.pivot(index=["K", "pe"], columns="predictor", values="cell").reindex(columns=list(ORDER_PREDICTORS))
    wide.columns = [f"{predictor}: MAE (bias)" for predictor in wide.columns]
    order = sorted(wide.index, key=lambda key: (key[0] == "all", int(key[0]) if key[0] != "all" else 0,
                                                key[1] == EVERY_BASE, key[1]))
    return wide.loc[order].rename_axis(["K", "encoding"]).reset_index().to_markdown(index=False, disable_numparse=True)


def errors_sentence(errors: pd.DataFrame) -> str:
    """Which account predicts the rope-base variants' accuracy better: over all of them, and in how many
    (offset, encoding) cells each has the lower MAE."""
    overall = errors[errors["offset"].isna()].set_index("predictor")["mae"]
    best = overall.idxmin()
    cells = errors[errors["offset"].notna() & (errors["pe"] != EVERY_BASE)].pivot(
        index=["offset", "pe"], columns="predictor", values="mae")
    lower = (cells[best] < cells.drop(columns=best).min(axis=1)).sum()
    others = ", ".join(f"`{name}`'s {overall[name]:.3f}" for name in ORDER_PREDICTORS if name != best)
    return (f"Over every rope-base head and length past the range, `{best}` predicts the accuracy with the lower "
            f"MAE, {overall[best]:.3f} against {others}; it is the lower in {int(lower)} of the {len(cells)} "
            "(offset, encoding) cells.")


def order_sentence(order: pd.DataFrame) -> str:
    """Where each predictor orders a decided pair against the measurement, and offsets with no decided pair."""
    offsets = sorted(order["offset"].unique())
    wrong = {predictor: [(offset, better, worse) for offset in offsets
                         for better, worse, in_order in decided_pairs(order, offset, predictor) if not in_order]
             for predictor in ORDER_PREDICTORS}
    if not any(wrong.values()):
        parts = ["Every account orders every decided pair as measured, at every offset: the order does not tell the "
                 "accounts apart"]
    else:
        parts = [f"`{predictor}` gets the order wrong at " + "; ".join(
                     f"K={offset} ({worse} predicted at least as high as {better})" for offset, better, worse in pairs)
                 if pairs else f"`{predictor}` orders every decided pair as measured"
                 for predictor, pairs in wrong.items()]
    undecided = [offset for offset in offsets if not decided_pairs(order, offset, ORDER_PREDICTORS[0])]
    tail = (f"; at {', '.join(f'K={offset}' for offset in undecided)} no pair is decided, so no account is tested "
            "there" if undecided else "")
    return "; ".join(parts) + tail + "."


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    prediction = tables["rope_bases_prediction"]
    errors = accuracy_errors(prediction)
    lengths = sorted(prediction["length"].unique())
    seeds = sorted(prediction["seed"].unique())
    return "\n\n".join([
        "## rope_bases: do the accounts predict the rope-base variants' order?",
        "The variants train rope at rotary bases " + ", ".join(sorted(prediction["pe"].unique())) + " (seeds "
        + ", ".join(map(str, seeds)) + "). Each head's accuracy at the lengths past the training range ("
        + ", ".join(map(str, lengths)) + ") is predicted from its parameters alone by the dilution law "
        f"(`{DILUTION_LAW_PREDICTOR}`, prop1) and by the ranking account (`ranking`: some distractor outranks the "
        "target), and set beside the accuracy measured in the variants' evaluations. The test, fixed before the "
        "run: per offset, every pair of encodings whose measured mean accuracies past the range differ by at least "
        f"{ORDER_MIN_ACCURACY_GAP:g} must be predicted in the measured order (closer pairs are within the seeds' "
        "noise and decide nothing).",
        "Mean accuracy past the range over seeds and lengths (rank among the encodings, 1 = best):",
        order_markdown(tables["rope_bases_order"]),
        order_sentence(tables["rope_bases_order"]),
        "Each account's error on the accuracy past the range, over seeds and lengths: MAE (bias, the mean of "
        "predicted - measured), per offset and encoding, pooled over the encodings per offset and over all offsets:",
        errors_markdown(errors),
        errors_sentence(errors),
        "![measured and predicted accuracy of rope at each rotary base](figures/rope_bases.png)",
        checks_markdown(checks),
    ])
