"""The mechanism at each robustness point, from its own tables: rope's errors, kernels and predictors' errors."""

import pandas as pd

from lengthgen.experiments.errors.summaries import past_range_cells
from lengthgen.science.prediction_errors import DILUTION_LAW_PREDICTOR, beyond_mae


def unseen_peak(kernel: pd.DataFrame) -> tuple[float, float]:
    """The kernel's largest value at untrained offsets over (ratio) and minus (gap) its value at K, median of heads."""
    ratios, gaps = [], []
    for (offset, _), head in kernel.groupby(["offset", "seed"]):
        at_target = head.loc[head["delta"] == offset, "mean_logit"].iloc[0]
        peak = head.loc[~head["seen"], "mean_logit"].max()
        ratios.append(peak / at_target)
        gaps.append(peak - at_target)
    return float(pd.Series(ratios).median()), float(pd.Series(gaps).median())


def point_mechanism(point: str, errors_by_length: pd.DataFrame, kernel: pd.DataFrame,
                    prop1_error: pd.DataFrame) -> dict:
    """One ``robustness_mechanism`` row: rope's wrong answers past the range (summed over seeds, K and lengths) and
    the share that are ranking errors, its kernels' unseen peak, and both accounts' accuracy MAE past the range."""
    past = past_range_cells(errors_by_length, "rope")
    wrong = int(past["n_wrong"].sum())
    ratio, gap = unseen_peak(kernel)
    dilution, ranking = (beyond_mae(prop1_error, "trained", "all", predictor, "accuracy")
                         for predictor in (DILUTION_LAW_PREDICTOR, "ranking"))
    return {"point": point, "n_wrong": wrong,
            "ranking_share_of_wrong": past["n_ranking_error"].sum() / wrong if wrong else float("nan"),
            "unseen_peak_ratio": ratio, "unseen_peak_gap": gap, "dilution_predictor": DILUTION_LAW_PREDICTOR,
            "dilution_mae": dilution, "ranking_mae": ranking,
            "better_predictor": DILUTION_LAW_PREDICTOR if dilution < ranking else "ranking"}
