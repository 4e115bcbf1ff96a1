"""The cures page: rope and learned heads under each evaluation-time cure, measured and predicted; its checks."""

import numpy as np
import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.cures.headlines import won_back
from lengthgen.experiments.cures.summaries import CURES, SHARPENING, TRAINED_HEAD, comparison
from lengthgen.experiments.cures.thresholds import CURES_CLAIM_PREDICTOR
from lengthgen.experiments.sections import distinct, length_columns, markdown
from lengthgen.models.length_scaling import FORMULAS, interpolation_shortfall
from lengthgen.science.prediction_errors import PREDICTORS


def cell(measured: float, predicted: float | None = None) -> str:
    return f"{measured:.3f}" if predicted is None or np.isnan(predicted) else f"{measured:.3f} ({predicted:.3f})"


def by_length_markdown(by_length: pd.DataFrame, predictions: pd.DataFrame, heads: list[str], quantity: str) -> str:
    """Mean of ``quantity`` per (head, cure) and length, rope's prediction beside; for accuracy, the limit's row."""
    lengths = sorted(by_length["length"].unique())
    measured = by_length.groupby(["head", "cure", "length"])[quantity].mean()
    predicted = comparison(by_length, predictions, CURES_CLAIM_PREDICTOR).groupby(["cure", "length"])[
        "predicted_" + quantity.removeprefix("target_")].mean()
    rows = [[head, cure] + [cell(measured[head, cure, n], predicted.get((cure, n)) if head == "rope" else None)
                            for n in lengths]
            for head in heads for cure in CURES if (head, cure, lengths[0]) in measured]
    if quantity == "accuracy":  # the limit row under rope's uncured one, the first row
        limit = by_length[(by_length["head"] == "rope") & (by_length["cure"] == "none")].groupby("length")[
            "hard_accuracy"].mean()
        rows.insert(1, ["rope", "hard attention (limit)"] + [cell(limit[n]) for n in lengths])
    return markdown(rows, ["head", "cure"] + length_columns(lengths, set(by_length.loc[by_length["in_training_range"],
                                                                                       "length"])))


def recovery_markdown(recovery: pd.DataFrame) -> str:
    """Per cure and for hard attention, the pooled share of lost accuracy won back: measured and predicted."""
    wide = recovery.pivot(index="cure", columns="source", values="recovered_fraction").reindex(
        index=[*(cure for cure in CURES if cure != "none"), "hard_attention"], columns=["measured", *PREDICTORS])
    wide.columns = ["measured", *[f"predicted: {name}" for name in PREDICTORS]]
    wide = wide.rename(index={"hard_attention": "hard attention (limit)"})
    return markdown(wide.map(lambda value: "-" if np.isnan(value) else f"{value:+.3f}").reset_index())


def per_offset_markdown(by_length: pd.DataFrame, recovery: pd.DataFrame, train_length_max: int) -> str:
    """Per K, the claim's share won back against the hard-attention limit; why a cure can beat it; how checks pool."""
    judged = {"train_length_max": train_length_max}
    runs = pd.DataFrame({**{cure: won_back(by_length, judged, "accuracy", cure) for cure in SHARPENING},
                         "limit": won_back(by_length, judged, "hard_accuracy", "none")})
    rows = [[f"K={offset}", *[f"{seeds[name].mean():.3g}" for name in (*SHARPENING, "limit")],
             " / ".join(f"{(seeds[cure] > seeds['limit']).sum()} of {len(seeds)}" for cure in SHARPENING)]
            for offset, seeds in runs.groupby("offset")]
    means = runs.groupby("offset").mean()
    above = [f"K={offset}" for offset, row in means.iterrows() if (row[list(SHARPENING)] > row["limit"]).any()]
    past = by_length[(by_length["head"] == "rope") & (by_length["cure"] == "none") & ~by_length["in_training_range"]]
    pooled = recovery[recovery["source"] == "measured"].set_index("cure")["recovered_fraction"]
    return markdown(rows, ["K", *[f"won back by {cure}" for cure in SHARPENING], "hard-attention limit",
                           f"heads above their limit ({' / '.join(SHARPENING)})"]) + (
        "\n\nThe limit is what the same heads win back with all attention on their top-scoring key (a logit scale "
        "grown without bound), so it wins back nothing where a key of another token outscores the target (a ranking "
        "error). A finite scale still leaves some weight on a target that scores second, so a cure can exceed it"
        + (f" (on the mean at {', '.join(above)})." if above else "; on the mean none does here.")
        + " The claim is judged per K on these means; the checks below pool over K (mean gain over every K, seed "
        f"and length over the mean loss: {pooled['log_length']:.3g} for log_length), which gives most weight to K="
        f"{(1 - past['accuracy']).groupby(past['offset']).mean().idxmax()}, where rope loses the most accuracy.")


def predicted_sign_markdown(recovery: pd.DataFrame) -> str:
    """The sign test of the law's predicted effect of each sharpening cure against the measured one."""
    fraction = recovery.set_index(["cure", "source"])["recovered_fraction"].unstack("source")
    signs = np.sign(fraction.loc[list(SHARPENING), [CURES_CLAIM_PREDICTOR, "measured"]].dropna())  # NaN: none lost
    if signs.empty:
        return "Sign test: no sharpening cure has accuracy lost to win back."
    effect = {1: "a gain", 0: "no change", -1: "a loss"}
    return f"Sign test of the law's predicted effect, through `{CURES_CLAIM_PREDICTOR}`: " + "; ".join(
        f"{cure}: predicted {effect[predicted]}, measured {effect[measured]}, "
        f"{'the same sign' if predicted == measured else 'opposite signs'}"
        for cure, (predicted, measured) in signs.iterrows()) + "."


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    by_length, predictions, recovery = tables["cures_by_length"], tables["cures_prediction"], tables["cures_recovery"]
    train_length_max, longest = settings["task"]["train_length_max"], int(by_length["length"].max())
    return "\n\n".join([
        "## cures: curing dilution at evaluation time",
        "If rope's decay is attention dilution, sharpening the softmax as the length n grows should undo much of it "
        "without retraining, and do nothing for the learned head, which pins. Each cure is applied at evaluation "
        f"only, to the sweep's heads (seeds {distinct(by_length['seed'])}), with L = {train_length_max}, the longest "
        "training length:\n\n"
        + "\n".join(f"- `{cure}`: {FORMULAS[cure]}" for cure in CURES if cure != "none"),
        "Sources: `log_length`, Chiang & Cholak 2022 and Scalable-Softmax (Nakanishi 2025); `yarn`, Peng et al. 2023, "
        "section 3.4, with s = n / L; `interpolate`, Chen et al. 2023, with (L - 1) / (n - 1) for their L / n "
        f"({interpolation_shortfall(longest, train_length_max):.1%} smaller at n={longest}); it keeps no offset exact, "
        f"so the account predicts it hurts a fixed-offset rule. In parentheses: prop1's law, "
        f"`{CURES_CLAIM_PREDICTOR}`. `{TRAINED_HEAD}`: rope trained with log-length scaling.",
        "Accuracy, mean over K and seeds (* in range):",
        by_length_markdown(by_length, predictions, ["rope", TRAINED_HEAD, "learned"], "accuracy"),
        "Attention weight on the target, mean over K and seeds:",
        by_length_markdown(by_length, predictions, ["rope", TRAINED_HEAD], "target_attention"),
        "Share of rope's lost accuracy won back past the range, per K, as the claim judges it (mean over seeds):",
        per_offset_markdown(by_length, recovery, train_length_max),
        "The same share pooled over K, seeds and lengths, measured and predicted (-: no loss to win back):",
        recovery_markdown(recovery),
        predicted_sign_markdown(recovery),
        "![rope and learned heads under each cure](figures/dilution_cures.png)",
        checks_markdown(checks),
    ])
