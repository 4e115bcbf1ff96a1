"""What the registry states about each encoding, and the predicted class beside the measured one: without scipy,
shared by the variants' checks (``analysis.py``) and their section text (``section.py``, which the figure job writes)."""

import pandas as pd

from lengthgen.science.variant_predictions import ALLOWED_CLASSES, NO_PREDICTION, at_length, mechanism, predicted_class

def mechanisms(encodings) -> dict[str, dict]:
    """What the registry states about each encoding (``variant_predictions.mechanism``)."""
    return {pe: mechanism(pe) for pe in encodings}


def predictions(classes: pd.DataFrame, descriptions: dict[str, dict]) -> pd.DataFrame:
    """Per (encoding, offset) of ``classes``: the predicted class beside the measured one, and whether it
    matches (null where there is no prediction); the properties as they hold at the length the class is read at."""
    predicted = [predicted_class(at_length(descriptions[row.pe], row.far_length), row.offset)
                 for row in classes.itertuples()]
    matches = [None if prediction == NO_PREDICTION else row.category in ALLOWED_CLASSES[prediction]
               for prediction, row in zip(predicted, classes.itertuples())]
    return classes.assign(predicted=predicted, matches=matches)
