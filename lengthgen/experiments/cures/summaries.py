"""The cures by name, and the measured and predicted rows side by side: torch-free, shared by the cures' checks
(``analysis.py``) and their section text (``section.py``, which the figure job writes without loading a model)."""

import pandas as pd

# cure -> the head options it sets; "none" is the head as trained.
CURES = {
    "none": {},
    "log_length": {"logit_scale": "log_length"},
    "yarn": {"logit_scale": "yarn"},
    "interpolate": {"position_scale": "interpolate"},
}
SHARPENING = ("log_length", "yarn")
# The head trained with log-length scaling from the start, as the ``head`` column names it.
TRAINED_HEAD = "rope_log_length"


def comparison(by_length: pd.DataFrame, predictions: pd.DataFrame, predictor: str) -> pd.DataFrame:
    """Measured and predicted values of every rope row, side by side, for one predictor."""
    chosen = predictions[predictions["predictor"] == predictor].drop(columns="predictor")
    return by_length[by_length["head"] == "rope"].merge(chosen, on=["head", "cure", "offset", "seed", "length"],
                                                        how="inner", validate="one_to_one")
