"""The mechanism at each robustness point, from its own tables: rope's errors, kernels and predictors' errors."""

import pandas as pd

from lengthgen.science.prediction_errors import DILUTION_LAW_PREDICTOR


def ranking_share_of_wrong(errors_by_length: pd.DataFrame) -> tuple[int, float]:
    """rope's wrong answers past the range, summed over seeds, K and lengths, and the share that are ranking errors."""
    past = errors_by_length[errors_by_length["past_training_range"] & (errors_by_length["pe"] == "rope")]
    wrong = int(past["n_wrong"].sum())
    return wrong, past["n_ranking_error"].sum() / wrong if wrong else float("nan")


def unseen_peak(kernel: pd.DataFrame) -> tuple[float, float]:
    """The kernel's largest value at untrained offsets over (ratio) and minus (gap) its value at K, median of heads."""
    ratios, gaps = [], []
    for (offset, _), head in kernel.groupby(["offset", "seed"]):
        at_target = head.loc[head["delta"] == offset, "mean_logit"].iloc[0]
        peak = head.loc[~head["seen"], "mean_logit"].max()
        ratios.append(peak / at_target)
        gaps.append(peak - at_target)
    return float(pd.Series(ratios).median()), float(pd.Series(gaps).median())


def predictor_maes(prop1_error: pd.DataFrame) -> dict[str, float]:
    """The dilution law's and the ranking predictor's MAE of rope's accuracy past the range, over all trained heads."""
    overall = prop1_error[(prop1_error["heads"] == "trained") & (prop1_error["scope"] == "all")
                          & (prop1_error["lengths"] == "beyond_training") & (prop1_error["quantity"] == "accuracy")]
    mae = overall.set_index("predictor")["mae"]
    return {"dilution": float(mae[DILUTION_LAW_PREDICTOR]), "ranking": float(mae["ranking"])}


def point_mechanism(point: str, errors_by_length: pd.DataFrame, kernel: pd.DataFrame,
                    prop1_error: pd.DataFrame) -> dict:
    """One ``robustness_mechanism`` row."""
    wrong, share = ranking_share_of_wrong(errors_by_length)
    ratio, gap = unseen_peak(kernel)
    mae = predictor_maes(prop1_error)
    better = DILUTION_LAW_PREDICTOR if mae["dilution"] < mae["ranking"] else "ranking"
    return {"point": point, "n_wrong": wrong, "ranking_share_of_wrong": share, "unseen_peak_ratio": ratio,
            "unseen_peak_gap": gap, "dilution_predictor": DILUTION_LAW_PREDICTOR, "dilution_mae": mae["dilution"],
            "ranking_mae": mae["ranking"], "better_predictor": better}
