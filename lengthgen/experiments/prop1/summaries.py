"""The predictors prop1 compares and the best of them, read from its error table: torch-free, shared by its checks
(``analysis.py``) and its section text (``section.py``, which the figure job writes without loading a model)."""

import pandas as pd

from lengthgen.science.prediction_errors import PROFILE_PREDICTORS

# The predictors ``best_predictor`` compares on each quantity: every one that predicts it but ``exact`` (the
# kernel's own softmax, a consistency check rather than an approximation); ranking predicts accuracy only.
COMPARED_PREDICTORS = {"target_attention": PROFILE_PREDICTORS, "accuracy": (*PROFILE_PREDICTORS, "ranking")}


def best_predictor(errors: pd.DataFrame, quantity: str = "target_attention") -> str:
    """Among the predictors compared on ``quantity`` (``COMPARED_PREDICTORS``), the one with the lowest MAE
    over all offsets at lengths beyond the training range, on the trained heads."""
    overall = errors[(errors["heads"] == "trained") & (errors["scope"] == "all")
                     & (errors["lengths"] == "beyond_training") & (errors["quantity"] == quantity)
                     & errors["predictor"].isin(COMPARED_PREDICTORS[quantity])]
    return str(overall.loc[overall["mae"].idxmin(), "predictor"])


def scope_offset(scope: str) -> int:
    """The offset of a per-offset scope of ``prop1_error`` (``K=2``)."""
    return int(scope.removeprefix("K="))
