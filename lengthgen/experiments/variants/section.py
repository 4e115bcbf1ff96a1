"""The variants page: accuracy by length, each encoding's mechanism, its predicted and measured class, FIRE's L."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.checks.shared_rules import ABOVE_CHANCE_FACTOR, CHANCE_TOLERANCE, NEAR_PERFECT
from lengthgen.experiments.sections import YES_NO, accuracy_markdown, distinct, interval, markdown, span
from lengthgen.experiments.variants.summaries import mechanisms, predictions
from lengthgen.experiments.variants.thresholds import (EXTRAPOLATES_ACCURACY, VARIANT_LENGTH_FACTOR,
                                                       VARIANT_SPREAD_WIDTH)
from lengthgen.models.encodings_table import DEFAULT_NOISE_MAX_LENGTH, resolve_encoding_name
from lengthgen.science.variant_predictions import (COLLAPSES, DECAYS, EXTRAPOLATES, FAILS,
                                                  MONOTONE_FAILS_FROM_OFFSET, NO_COLLAPSE, NO_PREDICTION,
                                                  RANDOM_POSITIONS_FAIL_FROM_OFFSET, at_length, predicted_class,
                                                  prediction)

# FIRE's two threshold policies in the registry, and its initial threshold L where the name sets none
# (tests/test_variants.py checks both against the registry).
FIRE_THRESHOLDS = {"fire": "learns its threshold L from {threshold:g}, as FIRE's reference code does",
                   "fire_fixed": "keeps its threshold L at {threshold:g}"}
FIRE_DEFAULT_THRESHOLD = 512.0
PROPERTIES = {"position_term": "position term", "trained_past_range": "trained past range",
              "monotone_in_offset": "monotone in offset", "random_positions": "random ids"}


def fire_markdown(order: list[str]) -> list[str]:
    """The sentence saying which FIRE each FIRE name of ``order`` is, and that the paper sets none; none without FIRE."""
    fires = [f"`{pe}` " + FIRE_THRESHOLDS[registered].format(threshold=parameters.get("threshold", FIRE_DEFAULT_THRESHOLD))
             for pe, (registered, parameters) in ((pe, resolve_encoding_name(pe)) for pe in order)
             if registered in FIRE_THRESHOLDS]
    return [f"**FIRE.** The paper names no FIRE setting, so no FIRE run here is the paper's: {'; '.join(fires)}."
            ] if fires else []


def properties_markdown(descriptions: dict[str, dict], order: list[str], far_length: int) -> str:
    """One row per encoding: its declared mechanism as it holds at ``far_length``, where its class is read."""
    def offset_only(description: dict) -> str:
        held, bound = YES_NO[at_length(description, far_length)["offset_only"]], description["offset_only_up_to"]
        return held if bound is None else f"{held} (up to n={bound:g})"

    return markdown([{"encoding": pe, f"offset only at n={far_length}": offset_only(descriptions[pe]),
                      **{title: YES_NO[descriptions[pe][name]] for name, title in PROPERTIES.items()},
                      "what it is": descriptions[pe]["summary"]} for pe in order])


def predictions_markdown(cells: pd.DataFrame, order: list[str]) -> str:
    """Per (encoding, K): the accuracy where the class is read, the class measured and predicted, and their match."""
    cells = cells.assign(rank=cells["pe"].map(order.index)).sort_values(["rank", "offset"])
    disagree = cells["far_ci_high"] - cells["far_ci_low"] >= VARIANT_SPREAD_WIDTH
    return markdown({
        "encoding": cells["pe"], "K": cells["offset"],
        f"accuracy at n={cells['far_length'].iloc[0]}": [interval(row.far_mean, row.far_ci_low, row.far_ci_high)
                                                        for row in cells.itertuples()],
        "measured class": cells["category"] + disagree.map({True: " (the seeds disagree)", False: ""}),
        "predicted class": cells["predicted"],
        "match": ["-" if match is None else "yes" if match else "**no**" for match in cells["matches"]]})


def disagreements_markdown(cells: pd.DataFrame, descriptions: dict[str, dict], order: list[str]) -> str:
    """Each (encoding, K) whose measured class its prediction does not allow, with the rule that predicted it; a fit
    the mechanism makes impossible points at the declaration itself."""
    wrong = cells[cells["matches"] == False]  # noqa: E712 (null, no prediction, is neither)
    lines = [f"**Disagreements**: {len(wrong)} of {int(cells['matches'].notna().sum())} predicted cells measure a "
             f"class their prediction does not allow{':' if len(wrong) else '.'}"]
    for cell in sorted(wrong.itertuples(), key=lambda cell: (order.index(cell.pe), cell.offset)):
        predicted, why = prediction(at_length(descriptions[cell.pe], cell.far_length), cell.offset)
        lines.append(f"- `{cell.pe}` at K={cell.offset}: measured *{cell.category}*, predicted *{predicted}* ({why})."
                     + (" A head of this mechanism cannot fit its range there, so the declaration (`pytest "
                        f"tests/test_encodings.py -k {cell.pe.partition('@')[0]}`) or the encoding is wrong."
                        if predicted == FAILS else ""))
    return "\n".join(lines)


def left_out_markdown(classes: pd.DataFrame) -> str:
    """The cells classified on part of their seeds: most of their seeds fit the range, the others are left out."""
    partial = classes[(classes["n_fitted"] < classes["n_seeds"]) & (2 * classes["n_fitted"] > classes["n_seeds"])]
    if partial.empty:
        return "No seed was left out."
    return "Left out (listed in the Training section): " + "; ".join(
        f"{row.pe} K={row.offset}: {row.n_seeds - row.n_fitted} of {row.n_seeds}" for row in partial.itertuples()) + "."


def fire_thresholds_markdown(thresholds: pd.DataFrame, descriptions: dict[str, dict], far_length: int,
                             train_length_max: int) -> list[str]:
    """Where each trained ``fire`` model's threshold L ended, and its prediction read with that L (offset only up to
    n = L, as ``fire_fixed`` is read with its fixed one) beside the one above (offset only at no length)."""
    if thresholds.empty:
        return []
    rows = thresholds.sort_values(["pe", "offset", "seed"])
    learned = rows["learned_threshold"]
    above = [predicted_class(at_length(descriptions[row.pe], far_length), row.offset) for row in rows.itertuples()]
    own = [predicted_class(at_length({**descriptions[row.pe], "offset_only_up_to": row.learned_threshold}, far_length),
                           row.offset) for row in rows.itertuples()]
    return [
        f"**FIRE's learned threshold.** FIRE's bias is a function of the offset alone up to n = L. Training left L at "
        f"{span(learned, '{:.1f}'.format)} over its {len(rows)} model{'s' * (len(rows) != 1)} (from "
        f"{', '.join(sorted({f'{value:g}' for value in rows['initial_threshold']}))}): offset only at n={far_length}, "
        f"where the class is read, in {int((learned >= far_length).sum())} of {len(rows)} models, and over the training "
        f"range (n <= {train_length_max}) in {int((learned >= train_length_max).sum())}. Read with its own L, "
        f"the prediction of {sum(mine == theirs for mine, theirs in zip(own, above))} of {len(rows)} models is the "
        "one above (whether that matches the measured class: the class table's last column).",
        markdown({"encoding": rows["pe"], "K": rows["offset"], "seed": rows["seed"],
                  "learned L": learned.map("{:.1f}".format), "predicted with its own L": own, "predicted above": above})]


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    classes, order, task = tables["variants_classes"], settings["variants"]["pe"], settings["task"]
    descriptions = mechanisms(order)
    cells = predictions(classes, descriptions)
    chance, far = 1.0 / task["vocab_size"], VARIANT_LENGTH_FACTOR * task["train_length_max"]
    return "\n\n".join([
        "## variants: which encodings extrapolate, and why",
        f"{len(order)} encodings, each trained and evaluated like the sweep's heads ({classes['n_seeds'].max()} seeds "
        f"per cell; K = {distinct(classes['offset'])}). Randomized encodings draw each sequence's sorted position ids "
        f"from [0, {DEFAULT_NOISE_MAX_LENGTH}) unless the name sets the range, in training and evaluation alike, as "
        f"their reference code does. Mean accuracy over seeds [95% Student-t interval]; * in range; chance "
        f"{chance:.4f}.",
        *fire_markdown(order),
        accuracy_markdown(tables["variants_summary"]),
        "![accuracy of every encoding by length](figures/pe_variants.png)",
        f"**Classes** at n={far} ({VARIANT_LENGTH_FACTOR}x the longest training length). One fit bar: a cell *{FAILS}*, "
        "with no class past it, when most of its seeds do not fit the range (the Training section's rule) or its "
        f"lowest in-range mean is below {NEAR_PERFECT}; else it *{EXTRAPOLATES}* at a mean >= {EXTRAPOLATES_ACCURACY}, "
        f"*{COLLAPSES}* at <= chance + {CHANCE_TOLERANCE} = {chance + CHANCE_TOLERANCE:.3f}, *{DECAYS}* between "
        f"(seeds that do not fit left out; a 95% interval of {VARIANT_SPREAD_WIDTH} or wider: the seeds disagree). "
        f"The classes are finer than the first claim's \"extrapolate\" (a mean of at least {ABOVE_CHANCE_FACTOR:g}x "
        f"chance, {ABOVE_CHANCE_FACTOR * chance:.3f}, at {VARIANT_LENGTH_FACTOR}x), which a cell that *{DECAYS}* can "
        "meet. " + left_out_markdown(classes),
        f"**Mechanism**: what each encoding's declaration (tested against its code) says of its logit at n={far}, where "
        "the class is read (FIRE with a fixed threshold L is a function of the offset alone only up to n = L).",
        properties_markdown(descriptions, order, far),
        "**Predictions**, fixed in the code before the run, from these properties and K alone (the first rule that "
        f"applies): *{FAILS}* with no position term; with one monotone in the offset at K >= "
        f"{MONOTONE_FAILS_FROM_OFFSET} (it cannot favour K over nearer offsets); with random ids at K >= "
        f"{RANDOM_POSITIONS_FAIL_FROM_OFFSET} (offset K's id gaps overlap its neighbours'); at K=1 those two get "
        f"{NO_PREDICTION}. Offset only, every parameter trained: *{NO_COLLAPSE}*. Absolute positions untrained past "
        f"the range: *{COLLAPSES}* (the paper's account of learned positions). Anything else: {NO_PREDICTION}.",
        predictions_markdown(cells, order),
        *fire_thresholds_markdown(tables["variants_fire_thresholds"], descriptions, far, task["train_length_max"]),
        disagreements_markdown(cells, descriptions, order),
        checks_markdown(checks),
    ])
