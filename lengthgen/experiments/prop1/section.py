"""The prop1 section of RESULTS.md: the dilution law's predictors against the measured decay, the ranking
account beside it, the kernel past the range, and its checks."""

import numpy as np
import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.checks.rule_history import RULE_HISTORY, RuleChange
from lengthgen.experiments.prop1.summaries import best_predictor, scope_offset
from lengthgen.science.prediction_errors import (DILUTION_LAW_PREDICTOR, PREDICTOR_LABELS, PREDICTORS, QUANTITIES,
                                                TRIVIAL_LABELS, TRIVIAL_PREDICTORS)
from lengthgen.experiments.prop1.thresholds import MAX_ACCURACY_MAE, MAX_ATTENTION_MAE, MIN_MAE_GAIN_OVER_TRIVIAL

# The plain form of the law, set beside the one the claim is judged with (DILUTION_LAW_PREDICTOR).
PLAIN_FORM = "mean_logit"
MAE_BARS = {"target_attention": MAX_ATTENTION_MAE, "accuracy": MAX_ACCURACY_MAE}


def error_cells(row: pd.Series) -> list[str]:
    correlation = "n/a" if np.isnan(row["correlation"]) else f"{row['correlation']:.3f}"
    return [f"{row['mae']:.3f}", f"{row['bias']:+.3f}", correlation]


def errors_markdown(errors: pd.DataFrame, heads: str, predictors: tuple[str, ...]) -> str:
    """Beyond-range errors of one set of heads: one row per (scope, predictor), MAE / bias / r for both
    quantities ("-" where the table has none)."""
    beyond = errors[(errors["lengths"] == "beyond_training") & (errors["heads"] == heads)]
    rows = []
    for scope in sorted(set(beyond["scope"]) - {"all"}, key=scope_offset) + ["all"]:
        for predictor in predictors:
            cells = [scope, predictor]
            for quantity in QUANTITIES:
                found = beyond[(beyond["scope"] == scope) & (beyond["predictor"] == predictor)
                               & (beyond["quantity"] == quantity)]
                cells += ["-"] * 3 if found.empty else error_cells(found.iloc[0])
            rows.append(cells)
    header = ["scope", "predictor"] + [f"{quantity} {stat}" for quantity in QUANTITIES for stat in ("MAE", "bias", "r")]
    # The cells are already formatted (a sign on the bias): tabulate must not reformat them as numbers.
    return pd.DataFrame(rows, columns=header).to_markdown(index=False, disable_numparse=True)


def law_forms_markdown(errors: pd.DataFrame) -> str:
    """The claim's form of the law and the plain one, side by side: per scope, each one's MAE past the range of
    both quantities on the trained heads, against the claim's MAE bars ("-" where the table has none)."""
    beyond = errors[(errors["lengths"] == "beyond_training") & (errors["heads"] == "trained")]
    rows = []
    for predictor in (DILUTION_LAW_PREDICTOR, PLAIN_FORM):
        for scope in sorted(set(beyond["scope"]) - {"all"}, key=scope_offset) + ["all"]:
            cells = [f"`{predictor}`", scope]
            for quantity in QUANTITIES:
                found = beyond[(beyond["scope"] == scope) & (beyond["predictor"] == predictor)
                               & (beyond["quantity"] == quantity)]
                mae = found["mae"].iloc[0] if len(found) else np.nan
                cells += (["-", "-"] if np.isnan(mae) else
                          [f"{mae:.3f}", "yes" if mae <= MAE_BARS[quantity] else "no"])
            rows.append(cells)
    header = ["form", "scope"] + [label for quantity in QUANTITIES
                                  for label in (f"{quantity} MAE", f"<= {MAE_BARS[quantity]:g}")]
    return pd.DataFrame(rows, columns=header).to_markdown(index=False, disable_numparse=True)


def predictor_choice(history: tuple[RuleChange, ...] = RULE_HISTORY) -> str:
    """When the claim's form of the law was fixed and on what data, from the rule history's entries that name
    ``DILUTION_LAW_PREDICTOR``."""
    fixed = [change for change in history if "DILUTION_LAW_PREDICTOR" in change.rules]
    if not fixed:
        raise ValueError("docs/rule_history.yaml: no entry names DILUTION_LAW_PREDICTOR, the claim's form of the law")
    return "; then ".join(f"in {change.commit} (data looked at by then: {change.data_seen})" for change in fixed)


def law_forms_text(errors: pd.DataFrame) -> str:
    """Which form of the dilution law the claim is judged with, the plain form's errors beside it, and why the
    paper's own form cannot be the one tested."""
    return "\n\n".join([
        f"**Which form of the law is tested.** The paper's code is not public and its abstract names no formula, so "
        f"its exact form of the dilution law is unknown; this page tests `{DILUTION_LAW_PREDICTOR}`, this "
        f"pipeline's reading of it. `{DILUTION_LAW_PREDICTOR}` was fixed as the claim's form "
        f"{predictor_choice()}, as `docs/rule_history.yaml` records. `{PLAIN_FORM}`, the plain form (the softmax "
        "of the content-averaged logits), was never the claim's form: it is reported beside it from the same "
        "predictions. "
        "Both, past the training range on the trained heads, against the claim's MAE bars:",
        law_forms_markdown(errors),
        "What the law predicts of the sharpening cures (the sign and size of the accuracy they win back) against "
        "what they do is on the cures page, from its table `cures_recovery` (source `measured` beside source "
        f"`{DILUTION_LAW_PREDICTOR}`).",
    ])


def first_beating(first: pd.Series, n_heads: int) -> str:
    """The range over seeds of the first unseen offset where a distractor can beat the target, and how
    many heads have none up to the longest length."""
    if first.empty:
        return "none"
    span = str(int(first.min())) if first.min() == first.max() else f"{int(first.min())} to {int(first.max())}"
    return span + (f" ({n_heads - len(first)} none)" if len(first) < n_heads else "")


def kernel_markdown(summary: pd.DataFrame) -> str:
    """Per offset, over seeds: the kernel's target logit, the largest content-averaged distractor logit
    (relative to the target's) at seen and unseen offsets, the largest gap over token triples, the first
    unseen offset where a distractor can beat the target, and the expected number of unseen beaters."""
    rows = []
    for offset, heads in summary.groupby("offset", sort=True):
        first = heads["first_unseen_beating_delta"].dropna()
        rows.append([
            f"K={offset}", str(len(heads)), f"{heads['target_mean_logit'].mean():.2f}",
            f"{heads['max_mean_relative_seen'].max():+.2f}", f"{heads['max_mean_relative_unseen'].max():+.2f}",
            f"{heads['max_gap_seen'].max():+.2f}", f"{heads['max_gap_unseen'].min():+.2f} to "
                                                   f"{heads['max_gap_unseen'].max():+.2f}",
            first_beating(first, len(heads)),
            f"{heads['expected_unseen_beaters'].median():.3g}",
        ])
    header = ["offset", "seeds", "target logit (mean)", "max mean distractor - target, seen",
              "max mean distractor - target, unseen", "max gap over token triples, seen",
              "max gap over token triples, unseen (range over seeds)", "first unseen beating offset",
              "expected unseen beaters at the longest length (median)"]
    return pd.DataFrame(rows, columns=header).to_markdown(index=False, disable_numparse=True)


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    errors, train_length_max = tables["prop1_error"], settings["task"]["train_length_max"]
    offsets = sorted(scope_offset(scope) for scope in set(errors["scope"]) - {"all"})
    n_points = errors.loc[(errors["heads"] == "trained") & (errors["scope"] == "all")
                          & (errors["lengths"] == "beyond_training"), "n"].max()
    best_attention, best_accuracy = best_predictor(errors, "target_attention"), best_predictor(errors, "accuracy")
    figures = "\n\n".join(f"![prop1 validation, K={offset}](figures/prop1_validation_K{offset}.png)"
                          for offset in offsets)
    predictors = "\n".join([f"- `{name}`: {PREDICTOR_LABELS[name]}" for name in PREDICTORS]
                           + [f"- `{name}`: {TRIVIAL_LABELS[name]}" for name in TRIVIAL_PREDICTORS])
    compared = (DILUTION_LAW_PREDICTOR, "ranking", *TRIVIAL_PREDICTORS)
    return "\n\n".join([
        "## prop1: the attention-dilution law",
        "From each trained RoPE head's parameters alone we build the exact logit kernel s_ab(delta) "
        "(query token a, key token b, delta = 0..n-1 positions back; delta = 0 is the query itself) and predict "
        "the mean softmax weight on the target at every evaluation length; nothing is fitted to measurements. "
        "Accuracy is predicted by passing seeded random sequences through the head's exact value and unembedding "
        "weights with the attention fixed to each predictor's weight profile. `ranking` asks instead whether the "
        "target keeps the highest logit among all n keys: the probability that no key holding another token "
        "outranks it, from the kernel over token pairs with uniform independent distractor tokens, with the "
        "readout of the winning key (the target token's own value); it ignores dilution, as the dilution forms "
        "ignore ranking. Predictors and baselines:\n\n"
        + predictors,
        f"Errors of predicted vs measured values past the training range (length > {train_length_max}), "
        f"pooled over seeds and lengths, and over offsets in the row 'all' ({n_points} (offset, seed, length) "
        "points); bias = mean(predicted - measured), r = Pearson correlation (n/a where a prediction is "
        "constant; - where a predictor does not predict the quantity).",
        errors_markdown(errors, "trained", (*PREDICTORS, *TRIVIAL_PREDICTORS)),
        law_forms_text(errors),
        f"Of the approximate predictors (every one but `exact`; `ranking` predicts accuracy only), the data "
        f"support `{best_attention}` for target attention and `{best_accuracy}` for accuracy (lowest MAE over all "
        "offsets past the training range). `exact` shows how much of the dilution forms' error comes from "
        "averaging over token content rather than from the dilution account.",
        "The same heads at their seeded init (the weights each run trained from), measured on the same "
        "evaluation sets: a head that learned nothing. Its predicted and measured values sit at chance, so an "
        "MAE bar alone would pass it; this is why each MAE check is paired with the predictor's gain over the "
        f"better trivial baseline (at least {MIN_MAE_GAIN_OVER_TRIVIAL:g}, `lengthgen/experiments/prop1/thresholds.py`).",
        errors_markdown(errors, "untrained", compared),
        "The kernel of each trained head out to the longest evaluation length (table `prop1_kernel`, one row "
        "per offset delta; summary `prop1_kernel_summary`). A gap is s_ab(delta) - s_at(K) for query token a, "
        "target token t and a distractor of token b != t at delta: where it is positive, that distractor "
        f"outranks the target. Seen offsets: delta < {train_length_max}, those training showed.",
        kernel_markdown(tables["prop1_kernel_summary"]),
        figures,
        f"**Claim**: graceful decay follows the dilution law: the predictor fixed in advance in the code "
        f"(`{DILUTION_LAW_PREDICTOR}`, `lengthgen/science/prediction_errors.py`) predicts the measured target attention and "
        "accuracy past the training range within the stated MAE, and by a margin better than the better trivial "
        "baseline; and dilution rather than ranking errors sets rope's accuracy past the range: "
        f"`{DILUTION_LAW_PREDICTOR}` predicts it with a lower MAE than `ranking`, per offset (a failure says the "
        "ranking account fits the decay better than the paper's). The "
        "rope-base variants (`rope@base=100`, `1e6`) are trained by the variants experiment, not the sweep, so "
        "this section does not test whether the account predicts their order.",
        checks_markdown(checks),
    ])
