"""The rope_bases page: the rope-base variants' accuracy past the range, measured, predicted and ordered."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.rope_bases.summaries import EVERY_BASE, accuracy_errors, decided_pairs
from lengthgen.experiments.rope_bases.tables import ORDER_PREDICTORS
from lengthgen.experiments.rope_bases.thresholds import ORDER_MIN_ACCURACY_GAP
from lengthgen.experiments.sections import distinct, wide_markdown
from lengthgen.science.prediction_errors import DILUTION_LAW_PREDICTOR


def by_source_markdown(frame: pd.DataFrame, column: str, names: tuple[str, ...], label: str) -> str:
    """One row per (K, encoding) in the frame's order, one column per name in ``column`` (in ``names``' order)."""
    cells = frame[frame[column].isin(names)]
    cells = cells.assign(rank=cells[column].map(names.index)).sort_values("rank", kind="stable")
    return wide_markdown(cells.set_index(["K", "pe", column])["cell"], ["K", "encoding"], f"{{}}: {label}".format,
                         sort=False)


def errors_markdown(errors: pd.DataFrame) -> str:
    """Each account's accuracy MAE (bias) past the range per (K, encoding), pooled per K and over every K."""
    cells = errors.assign(cell=[f"{row.mae:.3f} ({row.bias:+.3f})" for row in errors.itertuples()],
                          K=errors["offset"].map(lambda offset: "all" if pd.isna(offset) else str(int(offset))))
    # The offsets in order, then all of them; per offset, the encodings, then every base pooled.
    cells = cells.assign(pooled=cells["pe"] == EVERY_BASE).sort_values(["offset", "pooled", "pe"], na_position="last")
    return by_source_markdown(cells, "predictor", ORDER_PREDICTORS, "MAE (bias)")


def order_sentence(order: pd.DataFrame) -> str:
    """Where each account orders a decided pair against the measurement, and the offsets with no decided pair."""
    offsets = sorted(order["offset"].unique())
    wrong = {predictor: "; ".join(f"K={offset} ({worse} predicted at least as high as {better})"
                                  for offset in offsets for better, worse, in_order
                                  in decided_pairs(order, offset, predictor) if not in_order)
             for predictor in ORDER_PREDICTORS}
    said = ("; ".join(f"`{predictor}` gets the order wrong at {where}" if where else
                      f"`{predictor}` orders every decided pair as measured" for predictor, where in wrong.items())
            if any(wrong.values()) else "Every account orders every decided pair as measured, at every offset: the "
                                        "order does not tell the accounts apart")
    undecided = [f"K={offset}" for offset in offsets if not decided_pairs(order, offset, ORDER_PREDICTORS[0])]
    return said + (f"; at {', '.join(undecided)} no pair is decided, so no account is tested there" if undecided
                   else "") + "."


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    prediction, order = tables["rope_bases_prediction"], tables["rope_bases_order"]
    return "\n\n".join([
        "## rope_bases: do the accounts predict the rope-base variants' order?",
        f"The variants train rope at rotary bases {distinct(prediction['pe'])} (seeds {distinct(prediction['seed'])})."
        f" Each head's accuracy past the training range (lengths {distinct(prediction['length'])}) is predicted from "
        f"its parameters alone by the dilution law (`{DILUTION_LAW_PREDICTOR}`) and the ranking account (`ranking`), "
        "beside the measured one. The test, "
        "fixed before the run: per K, every pair of encodings whose measured means differ by at least "
        f"{ORDER_MIN_ACCURACY_GAP:g} must be predicted in the measured order (closer pairs decide nothing).",
        "Mean accuracy past the range over seeds and lengths (rank, 1 = best):",
        by_source_markdown(order.sort_values(["offset", "pe"]).assign(
                          K=lambda frame: frame["offset"].astype(str),
                          cell=lambda frame: [f"{row.mean_accuracy:.3f} ({row.rank})" for row in frame.itertuples()]),
                      "source", ("measured", *ORDER_PREDICTORS), "mean accuracy (rank)"),
        order_sentence(order),
        "Each account's accuracy error past the range: MAE (bias, predicted - measured), per K and encoding, pooled "
        "per K and over every K:",
        errors_markdown(accuracy_errors(prediction)),
        "![measured and predicted accuracy of rope at each rotary base](figures/rope_bases.png)",
        checks_markdown(checks),
    ])
