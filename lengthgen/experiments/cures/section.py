"""The cures section of RESULTS.md: the heads under each evaluation-time cure, measured and predicted; its checks."""

import numpy as np
import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.cures.summaries import CURES, SHARPENING, TRAINED_HEAD, comparison
from lengthgen.models.length_scaling import FORMULAS, interpolation_shortfall
from lengthgen.science.prediction_errors import PREDICTORS
from lengthgen.experiments.cures.thresholds import (CURES_CLAIM_PREDICTOR, MAX_RECOVERY_ERROR_OF_LIMIT,
                                                    MIN_RECOVERED_FRACTION)


def cell(measured: float, predicted: float | None = None) -> str:
    return f"{measured:.3f}" if predicted is None or np.isnan(predicted) else f"{measured:.3f} ({predicted:.3f})"


def formatted_markdown(rows: list[list[str]], header: list[str]) -> str:
    # The cells are already formatted (3 decimals, a sign): tabulate must not reformat them as numbers.
    return pd.DataFrame(rows, columns=header).to_markdown(index=False, disable_numparse=True)


def by_length_markdown(by_length: pd.DataFrame, predictions: pd.DataFrame, heads: list[str], quantity: str) -> str:
    """Mean over offsets and seeds of ``quantity`` per (head, cure) and length; the claim
    predictor's prediction in parentheses where there is one; the hard-attention limit as
    its own row for rope."""
    predicted = comparison(by_length, predictions, CURES_CLAIM_PREDICTOR)
    column = "predicted_" + quantity.removeprefix("target_")
    lengths = sorted(by_length["length"].unique())
    in_range = set(by_length.loc[by_length["in_training_range"], "length"])
    rows = []
    for head in heads:
        for cure in CURES:
            measured = by_length[(by_length["head"] == head) & (by_length["cure"] == cure)]
            if measured.empty:
                continue
            means = measured.groupby("length")[quantity].mean()
            guesses = predicted[predicted["cure"] == cure].groupby("length")[column].mean() if head == "rope" else {}
            rows.append([head, cure] + [cell(means[n], guesses.get(n)) for n in lengths])
            if head == "rope" and cure == "none" and quantity == "accuracy":
                limit = measured.groupby("length")["hard_accuracy"].mean()
                rows.append(["rope", "hard attention (limit)"] + [cell(limit[n]) for n in lengths])
    return formatted_markdown(rows, ["head", "cure"] + [f"n={n}{'*' if n in in_range else ''}" for n in lengths])


def recovery_markdown(recovery: pd.DataFrame) -> str:
    """One row per cure: measured recovered fraction, each predictor's ("-": it predicts no loss), and the
    hard-attention limit for the logit scalings ("-" for interpolation, which scales positions)."""
    wide = recovery.pivot(index="cure", columns="source", values="recovered_fraction")
    sources = ["measured", *PREDICTORS]
    limit = wide.at["hard_attention", "measured"]
    rows = []
    for cure in (name for name in CURES if name != "none"):
        values = [wide.at[cure, source] if source in wide.columns else np.nan for source in sources]
        values.append(limit if cure in SHARPENING else np.nan)
        rows.append([cure] + ["-" if np.isnan(value) else f"{value:+.3f}" for value in values])
    return formatted_markdown(rows, ["cure", "measured", *[f"predicted: {name}" for name in PREDICTORS],
                                     "hard-attention limit"])


def closest_predictor(recovery: pd.DataFrame, cure: str) -> tuple[str, float]:
    """(predictor, |measured - predicted|) of the predictor whose predicted recovery of ``cure`` is nearest."""
    fraction = recovery[recovery["cure"] == cure].set_index("source")["recovered_fraction"]
    errors = (fraction.drop("measured") - fraction["measured"]).abs().dropna()
    return errors.idxmin(), errors.min()


def recovery_prediction_markdown(recovery: pd.DataFrame) -> str:
    """Which predictor comes closest to each sharpening cure's measured recovery, and the claim predictor's miss."""
    fraction = recovery.set_index(["cure", "source"])["recovered_fraction"]
    parts = []
    for cure in SHARPENING:
        name, error = closest_predictor(recovery, cure)
        claimed = abs(fraction[cure, "measured"] - fraction[cure, CURES_CLAIM_PREDICTOR])
        parts.append(f"for {cure}, `{name}` (off by {error:.3f}; `{CURES_CLAIM_PREDICTOR}` by {claimed:.3f})")
    return f"The predictor whose predicted recovery comes closest to the measured one: {'; '.join(parts)}."


def effect(fraction: float) -> str:
    return "a gain" if fraction > 0 else "a loss" if fraction < 0 else "no change"


def predicted_sign_markdown(recovery: pd.DataFrame) -> str:
    """The sign test of the law on the cures: per sharpening cure, the claim predictor's predicted recovery and the
    measured one, and whether they agree in sign (a cure with nothing lost to win back is left out)."""
    fraction = recovery.set_index(["cure", "source"])["recovered_fraction"]
    parts = []
    for cure in SHARPENING:
        predicted, measured = fraction[cure, CURES_CLAIM_PREDICTOR], fraction[cure, "measured"]
        if np.isnan(predicted) or np.isnan(measured):
            continue
        agree = "the same sign" if np.sign(predicted) == np.sign(measured) else "opposite signs"
        parts.append(f"{cure}: predicted {predicted:+.3f} ({effect(predicted)}), measured {measured:+.3f} "
                     f"({effect(measured)}), {agree}")
    if not parts:
        return "Sign of the cures' effect: no sharpening cure has accuracy lost to win back."
    return (f"Sign of the cures' effect past the range, as the law through `{CURES_CLAIM_PREDICTOR}` predicts it "
            f"and as measured: {'; '.join(parts)}.")


def predicted_claim_markdown(recovery: pd.DataFrame) -> str:
    """Which predictors predict the pre-registered recovery (at least MIN_RECOVERED_FRACTION) for a sharpening cure."""
    predicted = recovery[recovery["cure"].isin(SHARPENING) & (recovery["source"] != "measured")]
    names = sorted(set(predicted.loc[predicted["recovered_fraction"] >= MIN_RECOVERED_FRACTION, "source"]))
    which = ", ".join(f"`{name}`" for name in names) if names else "none of the law's predictors"
    return (f"A recovery of at least {MIN_RECOVERED_FRACTION:g} for a sharpening cure, the threshold of its first "
            f"part, is predicted by {which}.")


def heads_above_limit(by_length: pd.DataFrame, cure: str) -> tuple[int, int]:
    """(rope heads whose mean accuracy past the range under ``cure`` exceeds their own hard-attention accuracy
    there, rope heads): one head per (offset, seed)."""
    past = by_length[(by_length["head"] == "rope") & ~by_length["in_training_range"]]
    cured = past[past["cure"] == cure].groupby(["offset", "seed"])["accuracy"].mean()
    limit = past[past["cure"] == "none"].groupby(["offset", "seed"])["hard_accuracy"].mean()
    return int((cured > limit.reindex(cured.index)).sum()), len(limit)


def sharpening_markdown(by_length: pd.DataFrame, recovery: pd.DataFrame) -> str:
    """The section's summary sentences, from the measurements: target attention at the longest length
    without and with each sharpening cure, their recovery, and the hard-attention limit: what logit scaling
    wins back as its scale grows without bound, which a finite scale can exceed (pooled, and head by head)."""
    longest = by_length["length"].max()
    attention = by_length[(by_length["head"] == "rope") & (by_length["length"] == longest)].groupby("cure")[
        "target_attention"].mean()
    measured = recovery[recovery["source"] == "measured"].set_index("cure")["recovered_fraction"]
    limit = measured["hard_attention"]
    raised = ", ".join(f"{attention[cure]:.3f} under {cure}" for cure in SHARPENING)
    above = [cure for cure in SHARPENING if measured[cure] > limit]
    pooled = (f"Pooled, {' and '.join(above)} exceed{'s' if len(above) == 1 else ''} it here."
              if above else "Pooled, the measured cures stay at or below it.")
    by_head = ", ".join(f"{cure} on {high} of {total}" for cure, (high, total) in
                        ((cure, heads_above_limit(by_length, cure)) for cure in SHARPENING))
    return (f"At n={longest}, rope's mean attention on the target is {attention['none']:.3f} uncured and {raised}; "
            f"the sharpening cures win back {', '.join(f'{measured[cure]:+.3f} ({cure})' for cure in SHARPENING)} "
            "of the accuracy lost past the range. The hard-attention limit, "
            f"{limit:+.3f}, is what logit scaling wins back as its scale grows without bound: there "
            "each sequence answers with its highest-logit key, and one whose highest logit is not the target's stays "
            "wrong. It is the limit of one cure, not a ceiling on sharpening: a finite scale can still answer right "
            "where another token holds the highest logit but the target's token the most weight, and so win back "
            "more. " + pooled
            + f" Head by head (one per offset and seed), the cured accuracy past the range exceeds the head's own "
            f"hard-attention accuracy for {by_head} rope heads.")


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    by_length, predictions, recovery = tables["cures_by_length"], tables["cures_prediction"], tables["cures_recovery"]
    train_length_max = settings["task"]["train_length_max"]
    seeds = sorted(by_length.loc[by_length["head"] == "rope", "seed"].unique())
    trained_seeds = sorted(by_length.loc[by_length["head"] == TRAINED_HEAD, "seed"].unique())
    cures = "\n".join(f"- `{cure}`: {FORMULAS[cure]}" for cure in CURES if cure != "none")
    longest = int(by_length["length"].max())
    return "\n\n".join([
        "## cures: curing dilution at evaluation time",
        "If rope's decay past the training range is attention dilution, sharpening the softmax as the length n "
        "grows should undo much of it without retraining, and should do nothing for the learned head, whose "
        f"failure is pinning. Each cure is applied to the sweep's trained heads (seeds {', '.join(map(str, seeds))}) "
        f"at evaluation time only, with L = {train_length_max}, the longest training length:\n\n" + cures,
        "Log-length scaling: Chiang & Cholak 2022; Scalable-Softmax (Nakanishi 2025). YaRN's temperature "
        "(Peng et al. 2023, section 3.4): softmax(q.k / (t sqrt(D))) with sqrt(1/t) = 0.1 ln(s) + 1 and s = n / L "
        "here (YaRN fixes s for a target context; only its temperature is applied, so `yarn` is YaRN's temperature, "
        "not YaRN). Position interpolation (Chen et al. 2023), with (L - 1) / (n - 1) where they write L / n: "
        f"{interpolation_shortfall(longest, train_length_max):.1%} smaller at n={longest}. It "
        "keeps no offset exact, so the account predicts it hurts a fixed-offset rule; on the "
        "learned head it interpolates linearly between trained rows, so every position lies in the trained range. "
        "Predictions: prop1's law on the cured head (the rotary kernel with the cure's scaled positions and "
        "logits); the claim uses its predictor, "
        f"`{CURES_CLAIM_PREDICTOR}`. Hard attention: the head's accuracy when each sequence attends only to its "
        "highest-logit key, the limit of scaling the logits without bound, which a sharpening cure approaches as "
        "its factor grows: a sequence whose highest logit is not the target's stays wrong however much its "
        "logits are scaled.",
        "Accuracy, mean over offsets and seeds, measured (predicted by "
        f"`{CURES_CLAIM_PREDICTOR}`); * marks in-range lengths. `{TRAINED_HEAD}`: a rope head trained with "
        f"log-length scaling from the start (seeds {', '.join(map(str, trained_seeds))}):",
        by_length_markdown(by_length, predictions, ["rope", TRAINED_HEAD, "learned"], "accuracy"),
        "Attention weight on the target, mean over offsets and seeds, measured (predicted):",
        by_length_markdown(by_length, predictions, ["rope", TRAINED_HEAD], "target_attention"),
        "Fraction of rope's lost accuracy each cure wins back past the training range, "
        "mean(cured - uncured) / mean(1 - uncured) pooled over offsets, seeds and lengths: measured, and as each "
        "predictor predicts it from its own cured and uncured predictions (negative: it loses more; -: the "
        "predictor predicts no loss to win back). The hard-attention limit is the recovery of unbounded "
        "sharpening, the same for every logit scaling.",
        recovery_markdown(recovery),
        sharpening_markdown(by_length, recovery),
        recovery_prediction_markdown(recovery),
        predicted_sign_markdown(recovery),
        "![rope and learned heads under each cure](figures/dilution_cures.png)",
        "**Claim** (pre-registered, checked as it was): sharpening the softmax with the length undoes much of "
        "rope's decay, as the dilution law predicts, and does nothing for the learned head; position "
        "interpolation hurts the fixed-offset rule; a head trained with log-length scaling extrapolates further "
        "than rope. " + predicted_claim_markdown(recovery),
        f"**Claim added after the full run**: the dilution law, through `{CURES_CLAIM_PREDICTOR}`, predicts how "
        f"much of the decay each sharpening cure undoes, within {MAX_RECOVERY_ERROR_OF_LIMIT:g} x the hard-attention "
        "limit of the measured recovery (`MAX_RECOVERY_ERROR_OF_LIMIT`, fixed after the run that first measured "
        "the limit).",
        checks_markdown(checks),
    ])
