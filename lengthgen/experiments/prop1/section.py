"""The prop1 page: the dilution law and the ranking account against the measured decay; the kernel; its checks."""

import numpy as np
import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.checks.rule_history import RULE_HISTORY, RuleChange
from lengthgen.experiments.prop1.summaries import best_predictor, scope_offset
from lengthgen.experiments.sections import markdown, span
from lengthgen.science.prediction_errors import (DILUTION_LAW_PREDICTOR, PREDICTOR_LABELS, PREDICTORS, QUANTITIES,
                                                TRIVIAL_LABELS, TRIVIAL_PREDICTORS)

# The plain form of the law, set beside the one the claim is judged with (DILUTION_LAW_PREDICTOR).
PLAIN_FORM = "mean_logit"


def scope_order(scope: str) -> float:
    return np.inf if scope == "all" else scope_offset(scope)


def errors_markdown(errors: pd.DataFrame, predictors: tuple[str, ...]) -> str:
    """The trained heads' MAE / bias / r past the range per (scope, predictor), of both quantities."""
    rows = errors[(errors["lengths"] == "beyond_training") & (errors["heads"] == "trained")]
    cells = rows.assign(MAE=rows["mae"].map("{:.3f}".format), bias=rows["bias"].map("{:+.3f}".format),
                        r=rows["correlation"].map(lambda r: "n/a" if np.isnan(r) else f"{r:.3f}"))
    wide = cells.pivot(index=["scope", "predictor"], columns="quantity", values=["MAE", "bias", "r"]).reindex(
        index=pd.MultiIndex.from_product([sorted(set(rows["scope"]), key=scope_order), predictors]),
        columns=[(stat, quantity) for quantity in QUANTITIES for stat in ("MAE", "bias", "r")]).fillna("-")
    wide.columns = [f"{quantity} {stat}" for stat, quantity in wide.columns]
    return markdown(wide.rename_axis(["scope", "predictor"]).reset_index())


def predictor_choice(history: tuple[RuleChange, ...] = RULE_HISTORY) -> str:
    """When the claim's form of the law was fixed and on what data, from the rule history."""
    fixed = [change for change in history if "DILUTION_LAW_PREDICTOR" in change.rules]
    if not fixed:
        raise ValueError("docs/rule_history.yaml: no entry names DILUTION_LAW_PREDICTOR, the claim's form of the law")
    return "; then ".join(f"in {change.commit} (data looked at by then: {change.data_seen})" for change in fixed)


def kernel_markdown(summary: pd.DataFrame) -> str:
    """Per K, over seeds: the target logit, distractors against it at seen and unseen offsets, and unseen beaters."""
    rows = []
    for offset, heads in summary.groupby("offset", sort=True):
        first = heads["first_unseen_beating_delta"].dropna()  # NaN: no distractor beats it up to the longest length
        beating = span(first, lambda delta: str(int(delta))) if len(first) else "none"
        rows.append([f"K={offset}", str(len(heads)), f"{heads['target_mean_logit'].mean():.2f}",
                     f"{heads['max_mean_relative_seen'].max():+.2f}", f"{heads['max_mean_relative_unseen'].max():+.2f}",
                     f"{heads['max_gap_seen'].max():+.2f}",
                     f"{heads['max_gap_unseen'].min():+.2f} to {heads['max_gap_unseen'].max():+.2f}",
                     beating + (f" ({len(heads) - len(first)} none)" if 0 < len(first) < len(heads) else ""),
                     f"{heads['expected_unseen_beaters'].median():.3g}"])
    return markdown(rows, ["offset", "seeds", "target logit (mean)", "max mean distractor - target, seen",
                           "max mean distractor - target, unseen", "max gap, seen", "max gap, unseen (over seeds)",
                           "first unseen beating offset", "expected unseen beaters at the longest length (median)"])


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    errors, train_length_max = tables["prop1_error"], settings["task"]["train_length_max"]
    offsets = sorted(scope_offset(scope) for scope in set(errors["scope"]) - {"all"})
    return "\n\n".join([
        "## prop1: the attention-dilution law",
        "From each trained RoPE head's parameters alone, its exact logit kernel s_ab(delta) (query token a, key "
        "token b, delta positions back) predicts the target's attention weight and the accuracy at every length; "
        "nothing is fitted. The dilution forms ignore ranking; the rival ranking account ignores dilution:\n\n"
        + "\n".join([f"- `{name}`: {PREDICTOR_LABELS[name]}" for name in PREDICTORS]
                    + [f"- `{name}`: {TRIVIAL_LABELS[name]}" for name in TRIVIAL_PREDICTORS]),
        f"Errors past the training range (length > {train_length_max}), over seeds and lengths (bias: predicted - "
        "measured; r: Pearson; -: not predicted):",
        errors_markdown(errors, (*PREDICTORS, *TRIVIAL_PREDICTORS)),
        "**Which form of the law is tested.** The paper's exact form is unknown (no public code, no formula in its "
        f"abstract). The claim is judged with `{DILUTION_LAW_PREDICTOR}`, this pipeline's reading, fixed "
        f"{predictor_choice()}; `{PLAIN_FORM}`, the plain form (the softmax of the content-averaged logits), never "
        "was. Lowest MAE over all K "
        f"(`exact`, a consistency check, aside): `{best_predictor(errors)}` for attention, "
        f"`{best_predictor(errors, 'accuracy')}` for accuracy. The law's predictions for the cures: the cures page; "
        "for the rope bases (`rope@base=100`, `1e6`): the rope_bases page.",
        "Each trained head's kernel to the longest length. A gap, s_ab(delta) - s_at(K) for target token t and "
        f"distractor token b != t (max over token triples), is positive where that distractor outscores the "
        f"target. Seen offsets: delta < {train_length_max}.",
        kernel_markdown(tables["prop1_kernel_summary"]),
        "\n\n".join(f"![prop1 validation, K={offset}](figures/prop1_validation_K{offset}.png)" for offset in offsets),
        checks_markdown(checks),
    ])
