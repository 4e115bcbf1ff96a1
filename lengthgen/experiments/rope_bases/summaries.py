"""The rope-base variants' decided pairs and each predictor's accuracy error: torch-free, shared by its checks
(``analysis.py``) and its section text (``section.py``, which the figure job writes without loading a model)."""

from itertools import combinations

import numpy as np
import pandas as pd

from lengthgen.experiments.rope_bases.thresholds import ORDER_MIN_ACCURACY_GAP

EVERY_BASE = "every base"  # ``accuracy_errors``' row pooled over the encodings


def decided_pairs(order: pd.DataFrame, offset: int, predictor: str) -> list[tuple[str, str, bool]]:
    """Every pair of encodings at ``offset`` whose measured means past the range differ by at least
    ``ORDER_MIN_ACCURACY_GAP``, as (the better measured, the worse, whether ``predictor`` orders them the same
    way; a predicted tie does not)."""
    at = order[order["offset"] == offset].pivot(index="pe", columns="source", values="mean_accuracy")
    pairs = []
    for first, second in combinations(at.index, 2):
        measured_gap = at.loc[first, "measured"] - at.loc[second, "measured"]
        if abs(measured_gap) < ORDER_MIN_ACCURACY_GAP:
            continue
        better, worse = (first, second) if measured_gap > 0 else (second, first)
        in_order = np.sign(at.loc[first, predictor] - at.loc[second, predictor]) == np.sign(measured_gap)
        pairs.append((better, worse, bool(in_order)))
    return pairs


def accuracy_errors(prediction: pd.DataFrame) -> pd.DataFrame:
    """Each predictor's error on the accuracy past the range, over every (seed, length): per offset and encoding,
    per offset over every encoding (``pe`` "every base") and over all of them (``offset`` null). Columns:
    offset, pe, predictor, n, mae, bias (mean of predicted - measured)."""
    error = prediction.assign(error=prediction["predicted_accuracy"] - prediction["measured_accuracy"])
    scopes = [((offset, pe), rows) for (offset, pe), rows in error.groupby(["offset", "pe"], sort=True)]
    scopes += [((offset, EVERY_BASE), rows) for offset, rows in error.groupby("offset", sort=True)]
    scopes.append(((None, EVERY_BASE), error))
    frames = [rows.groupby("predictor", sort=True)["error"]
              .agg(n="size", mae=lambda values: values.abs().mean(), bias="mean")
              .reset_index().assign(offset=offset, pe=pe) for (offset, pe), rows in scopes]
    return (pd.concat(frames, ignore_index=True)[["offset", "pe", "predictor", "n", "mae", "bias"]]
            .astype({"offset": "Int64"}))
