"""The prop1 section of RESULTS.md: the dilution law's predictors against the measured decay, and its checks."""

import numpy as np
import pandas as pd

from lengthgen.claims import checks_markdown
from lengthgen.experiments.prop1 import PREDICTOR_LABELS, PREDICTORS, QUANTITIES, best_predictor, scope_offset
from lengthgen.thresholds import PROP1_CLAIM_PREDICTOR


def error_cells(row: pd.Series) -> list[str]:
    correlation = "n/a" if np.isnan(row["correlation"]) else f"{row['correlation']:.3f}"
    return [f"{row['mae']:.3f}", f"{row['bias']:+.3f}", correlation]


def errors_markdown(errors: pd.DataFrame) -> str:
    """Beyond-range errors: one row per (scope, predictor), MAE / bias / r for both quantities."""
    beyond = errors[errors["lengths"] == "beyond_training"]
    rows = []
    for scope in sorted(set(beyond["scope"]) - {"all"}, key=scope_offset) + ["all"]:
        for predictor in PREDICTORS:
            cells = [scope, predictor]
            for quantity in QUANTITIES:
                found = beyond[(beyond["scope"] == scope) & (beyond["predictor"] == predictor)
                               & (beyond["quantity"] == quantity)]
                cells += ["-"] * 3 if found.empty else error_cells(found.iloc[0])
            rows.append(cells)
    header = ["scope", "predictor"] + [f"{quantity} {stat}" for quantity in QUANTITIES for stat in ("MAE", "bias", "r")]
    # The cells are already formatted (a sign on the bias): tabulate must not reformat them as numbers.
    return pd.DataFrame(rows, columns=header).to_markdown(index=False, disable_numparse=True)


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    errors, train_length_max = tables["prop1_error"], settings["task"]["train_length_max"]
    offsets = sorted(scope_offset(scope) for scope in set(errors["scope"]) - {"all"})
    n_points = errors.loc[(errors["scope"] == "all") & (errors["lengths"] == "beyond_training"), "n"].max()
    best_attention, best_accuracy = best_predictor(errors, "target_attention"), best_predictor(errors, "accuracy")
    figures = "\n\n".join(f"![prop1 validation, K={offset}](figures/prop1_validation_K{offset}.png)"
                          for offset in offsets)
    predictors = "\n".join(f"- `{name}`: {PREDICTOR_LABELS[name]}" for name in PREDICTORS)
    return "\n\n".join([
        "## prop1: the attention-dilution law",
        "From each trained RoPE head's parameters alone we build the exact logit kernel s_ab(delta) "
        "(query token a, key token b, delta = 0..n-1 positions back; delta = 0 is the query itself) and predict "
        "the mean softmax weight on the target at every evaluation length; nothing is fitted to measurements. "
        "Accuracy is predicted by passing seeded random sequences through the head's exact value and unembedding "
        "weights with the attention fixed to each predictor's weight profile. Predictors:\n\n" + predictors,
        f"Errors of predicted vs measured values past the training range (length > {train_length_max}), "
        f"pooled over seeds and lengths, and over offsets in the row 'all' ({n_points} (offset, seed, length) "
        "points); "
        "bias = mean(predicted - measured), r = Pearson correlation (n/a where a prediction is constant).",
        errors_markdown(errors),
        f"Of the closed-form approximations, the data support `{best_attention}` for target attention and "
        f"`{best_accuracy}` for accuracy (lowest MAE over all offsets past the training range). `exact` shows "
        "how much of their error comes from averaging over token content rather than from the dilution account.",
        figures,
        f"**Claim**: graceful decay follows the dilution law: the predictor fixed in advance in the code "
        f"(`{PROP1_CLAIM_PREDICTOR}`, `lengthgen/thresholds.py`) predicts the "
        "measured target attention and accuracy past the training range within the stated MAE.",
        checks_markdown(checks),
    ])
