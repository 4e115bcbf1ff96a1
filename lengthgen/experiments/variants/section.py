"""The variants experiment's RESULTS.md section: accuracy by length, the classes, each encoding's mechanism
properties, per (encoding, offset) the class the account predicts from them beside the measured one, and where each
``fire`` model's learned threshold ended."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.models.encodings_table import DEFAULT_NOISE_MAX_LENGTH, resolve_encoding_name
from lengthgen.experiments.variants.summaries import mechanisms, predictions
from lengthgen.experiments.generalization.section import accuracy_markdown, format_interval
from lengthgen.experiments.variants.thresholds import (EXTRAPOLATES_ACCURACY, VARIANT_LENGTH_FACTOR,
                                                       VARIANT_SPREAD_WIDTH)
from lengthgen.checks.shared_rules import CHANCE_TOLERANCE, NEAR_PERFECT
from lengthgen.science.variant_predictions import (CLASSES, COLLAPSES, DECAYS, EXTRAPOLATES, FAILS,
                                                  MONOTONE_FAILS_FROM_OFFSET, NO_COLLAPSE, NO_PREDICTION,
                                                  RANDOM_POSITIONS_FAIL_FROM_OFFSET, at_length, predicted_class,
                                                  prediction)

# FIRE's two threshold policies in the registry (``learned_threshold`` of ``FIRE`` and ``FixedThresholdFIRE``), and
# its initial threshold L where the name sets none (``threshold`` of ``FIRE.__init__``; tests/test_variants.py checks
# both against the registry).
FIRE_THRESHOLDS = {"fire": "learns its threshold L from {threshold:g}, as FIRE's reference code does",
                   "fire_fixed": "keeps its threshold L at {threshold:g}"}
FIRE_DEFAULT_THRESHOLD = 512.0


def fire_markdown(order: list[str]) -> list[str]:
    """The sentence saying which FIRE each FIRE name of ``order`` is, and that the paper sets none; none without FIRE."""
    named = [(pe, *resolve_encoding_name(pe)) for pe in order]
    fires = [f"`{pe}` " + FIRE_THRESHOLDS[registered].format(threshold=parameters.get("threshold", FIRE_DEFAULT_THRESHOLD))
             for pe, registered, parameters in named if registered in FIRE_THRESHOLDS]
    if not fires:
        return []
    return ["**FIRE.** The paper names no FIRE setting (its abstract and its supplement's file list, "
            "described in `docs/science.md`, mention FIRE nowhere), so no FIRE run here is the paper's: "
            + "; ".join(fires) + "."]


def fire_thresholds_markdown(thresholds: pd.DataFrame, descriptions: dict[str, dict], far_length: int,
                             train_length_max: int) -> list[str]:
    """Where each trained ``fire`` model's threshold L ended (``variants_fire_thresholds``), one row per (K, seed),
    and what it means for fire's prediction: its bias is offset only up to n = L, and the prediction above reads it
    as offset only at no length. Read with its own L (as ``fire_fixed`` is with its fixed one), each model's
    prediction is set beside that one. Nothing without trained ``fire`` models."""
    if thresholds.empty:
        return []
    rows = thresholds.sort_values(["pe", "offset", "seed"])
    predicted = [predicted_class(at_length(descriptions[row.pe], far_length), row.offset) for row in rows.itertuples()]
    own = [predicted_class(at_length({**descriptions[row.pe], "offset_only_up_to": row.learned_threshold}, far_length),
                           row.offset) for row in rows.itertuples()]
    table = pd.DataFrame({"encoding": rows["pe"], "K": rows["offset"], "seed": rows["seed"],
                          "L at start": rows["initial_threshold"].map("{:g}".format),
                          "learned L": rows["learned_threshold"].map("{:.1f}".format),
                          f"offset only at n={far_length}": (rows["learned_threshold"] >= far_length).map(
                              {True: "yes", False: "no"}),
                          "predicted with its own L": own, "predicted above": predicted})
    learned = rows["learned_threshold"]
    low, high = f"{learned.min():.1f}", f"{learned.max():.1f}"
    agree = sum(mine == registry for mine, registry in zip(own, predicted))
    return [
        f"**FIRE's learned threshold.** Each trained `fire` model's threshold L where training left it: L = "
        f"{low if low == high else f'{low} to {high}'} over its {len(rows)} model{'' if len(rows) == 1 else 's'} (from "
        f"{', '.join(sorted({f'{value:g}' for value in rows['initial_threshold']}))}). Its bias is a function of the "
        f"offset alone on sequences up to n = L and depends on the query position past it, so it is offset only at "
        f"n={far_length}, where the class is read, in {int((learned >= far_length).sum())} of {len(rows)} models, and "
        f"over the whole training range (n <= {train_length_max}) in {int((learned >= train_length_max).sum())}. The "
        "prediction above reads `fire` as offset only at no length (L learned); read with its own L, as `fire_fixed` "
        f"is with its fixed one, {agree} of {len(rows)} models get the same prediction.",
        table.to_markdown(index=False, disable_numparse=True)]


def spread_caveat(cell) -> str:
    """A caveat where the seeds disagree about the class (``VARIANT_SPREAD_WIDTH``), else nothing."""
    if cell.far_ci_high - cell.far_ci_low < VARIANT_SPREAD_WIDTH:
        return ""
    return (f" (the seeds disagree: 95% interval [{cell.far_ci_low:.2f}, {cell.far_ci_high:.2f}] at "
            f"n={cell.far_length})")


def classes_markdown(classes: pd.DataFrame, order: list[str]) -> str:
    """One row per encoding, one column per offset: the class and the mean accuracy at 4x."""
    far_length = int(classes["far_length"].iloc[0])
    cells = classes.assign(cell=[f"{row.category} ({format_interval(row.far_mean, row.far_ci_low, row.far_ci_high)})"
                                 for row in classes.itertuples()])
    wide = cells.pivot(index="pe", columns="offset", values="cell").reindex(order)
    wide.columns = [f"K={offset}: class (accuracy at n={far_length})" for offset in wide.columns]
    return wide.rename_axis("encoding").reset_index().to_markdown(index=False)


def properties_markdown(descriptions: dict[str, dict], order: list[str]) -> str:
    """One row per encoding: the registry's mechanism properties, and what the registry says it is."""
    def yes_no(value: bool) -> str:
        return "yes" if value else "no"

    def offset_only(description: dict) -> str:
        bound = description["offset_only_up_to"]
        return yes_no(description["offset_only"]) if bound is None else f"up to n={bound:g}"

    rows = [{"encoding": pe, "position term": yes_no(descriptions[pe]["position_term"]),
             "offset only": offset_only(descriptions[pe]),
             "trained past range": yes_no(descriptions[pe]["trained_past_range"]),
             "monotone in offset": yes_no(descriptions[pe]["monotone_in_offset"]),
             "random ids": yes_no(descriptions[pe]["random_positions"]),
             "registry description": descriptions[pe]["summary"]} for pe in order]
    return pd.DataFrame(rows).to_markdown(index=False)


def predictions_markdown(classes: pd.DataFrame, descriptions: dict[str, dict], order: list[str]) -> str:
    """One row per (encoding, offset): the predicted class, the measured one and whether they match."""
    cells = predictions(classes, descriptions)
    cells = cells.assign(rank=cells["pe"].map({pe: rank for rank, pe in enumerate(order)}))
    cells = cells.sort_values(["rank", "offset"])
    table = pd.DataFrame({
        "encoding": cells["pe"], "K": cells["offset"], "predicted class": cells["predicted"],
        "measured class": [row.category + spread_caveat(row) for row in cells.itertuples()],
        "match": ["-" if match is None else "yes" if match else "**no**" for match in cells["matches"]]})
    return table.to_markdown(index=False)


def disagreements_markdown(classes: pd.DataFrame, descriptions: dict[str, dict], order: list[str]) -> str:
    """Each (encoding, offset) whose measured class is not one its prediction allows, with the rule that made the
    prediction; a measured fit where the mechanism makes one impossible points at the declaration itself."""
    cells = predictions(classes, descriptions)
    wrong = cells[cells["matches"] == False]  # noqa: E712 (null, no prediction, is neither)
    if wrong.empty:
        return "**Disagreements**: none; every measured class is one its prediction allows."
    rank = {pe: rank for rank, pe in enumerate(order)}
    lines = []
    for cell in sorted(wrong.itertuples(), key=lambda cell: (rank[cell.pe], cell.offset)):
        predicted, why = prediction(at_length(descriptions[cell.pe], cell.far_length), cell.offset)
        check = (f" A head of this mechanism cannot fit its range there, so the declaration (`pytest "
                 f"tests/test_encodings.py -k {cell.pe.partition('@')[0]}`) or the encoding is wrong."
                 if predicted == FAILS else "")
        lines.append(f"- `{cell.pe}` at K={cell.offset}: measured *{cell.category}*, predicted *{predicted}* "
                     f"({why}).{check}")
    return "\n".join([f"**Disagreements**: {len(wrong)} of {int(cells['matches'].notna().sum())} predicted cells "
                      "measure a class their prediction does not allow:", *lines])


def predictions_tally(classes: pd.DataFrame, descriptions: dict[str, dict]) -> str:
    matches = predictions(classes, descriptions)["matches"]
    predicted = matches.dropna()
    return (f"{len(predicted)} of {len(matches)} cells have a prediction; {int(predicted.sum())} match, "
            f"{len(predicted) - int(predicted.sum())} do not")


def left_out_markdown(classes: pd.DataFrame) -> str:
    """Which cells were classified on part of their seeds: those whose model did not fit the range."""
    partial = classes[(classes["n_fitted"] < classes["n_seeds"]) & (2 * classes["n_fitted"] > classes["n_seeds"])]
    rule = ("A class past the range presupposes a fitted range: where most of a cell's seeds fit it (held-out "
            "accuracy >= the Training section's rule), the seeds that do not are left out and the cell is classified "
            "on the others; where most do not, every seed counts and the cell fails in range.")
    if partial.empty:
        return rule + " No seed was left out."
    cells = "; ".join(f"{row.pe} K={row.offset}: {row.n_seeds - row.n_fitted} of {row.n_seeds}"
                      for row in partial.itertuples())
    return f"{rule} Left out (not fitting the range; listed in the Training section): {cells}."


def classes_rule(chance: float, far_length: int, tally: str) -> str:
    return (
        "**Classes**, per encoding and offset on the mean accuracy, by rules fixed in the code (when, and after "
        f"which data, in the rule history; `lengthgen/experiments/variants/thresholds.py`): *{FAILS}* if most of its seeds do not fit their range "
        f"(the Training section's rule) or its lowest in-range accuracy is below {NEAR_PERFECT}, the one fit bar of "
        f"every claim; else *{EXTRAPOLATES}* if it is "
        f">= {EXTRAPOLATES_ACCURACY} at n={far_length} ({VARIANT_LENGTH_FACTOR}x the longest training length); "
        f"*{COLLAPSES}* if it is at most chance + {CHANCE_TOLERANCE} = {chance + CHANCE_TOLERANCE:.3f} there; "
        f"*{DECAYS}* otherwise. Where the 95% interval at n={far_length} is {VARIANT_SPREAD_WIDTH} or wider, the "
        f"seeds disagree about the class, and the table of predictions says so. Measured: {tally}.")


def predictions_rule() -> str:
    return (
        "**Predictions**, fixed in the code before the run (`lengthgen/experiments/variants/thresholds.py`, "
        "`predicted_class` in `lengthgen/science/variant_predictions.py`; when each rule was fixed, and what had been seen by then, is in the "
        "replication section): a function of these properties and K alone, the first rule that applies deciding; "
        "each property as it holds at the length the class is read at (an encoding offset only up to a length is "
        "offset only where that length is at most it). "
        f"Three are impossibilities, each predicting *{FAILS}*: no position term, at every K (its keys differ by "
        f"content alone); a position term monotone in the offset, at K >= {MONOTONE_FAILS_FROM_OFFSET} (it cannot "
        f"favour offset K over the nearer ones); random position ids, at K >= {RANDOM_POSITIONS_FAIL_FROM_OFFSET} "
        "(the id gap of offset K overlaps those of its neighbours). A monotone term, or random ids, at K=1 get no "
        "prediction (a steep enough slope, or ids in rank order, can favour the nearest key); a logit of the offset "
        f"alone with every parameter trained *{NO_COLLAPSE}* (only the number of keys changes with length); a logit "
        f"of absolute positions with parameters untrained past the range *{COLLAPSES}* (the paper's account of "
        f"learned positions); anything else gets {NO_PREDICTION}.")


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    summary, classes = tables["variants_summary"], tables["variants_classes"]
    order, task = settings["variants"]["pe"], settings["task"]
    descriptions = mechanisms(order)
    chance = 1.0 / task["vocab_size"]
    counts = classes["category"].value_counts()
    tally = ", ".join(f"{counts.get(category, 0)} {category}" for category in CLASSES)
    return "\n\n".join([
        "## variants: which encodings extrapolate, and why",
        f"{len(order)} encodings, each trained and evaluated exactly like the sweep's heads (same training batches, "
        f"evaluation sets and seeds, {classes['n_seeds'].max()} seeds per cell, offsets "
        f"{sorted(classes['offset'].unique().tolist())}). Randomized encodings draw their position ids in training "
        "and at evaluation alike, as their reference code does (it has no train/eval switch); it draws one subset "
        "per batch, here every sequence draws its own, from [0, noise_max_length) (by default "
        f"{DEFAULT_NOISE_MAX_LENGTH}, {DEFAULT_NOISE_MAX_LENGTH / max(task['eval_lengths']):g}x the longest "
        "evaluation length here: Ruoss et al. take a range well above the longest test length). Mean accuracy "
        "over seeds with a 95% Student-t interval; lengths marked * lie in the training range; chance is "
        f"{chance:.4f}.",
        *fire_markdown(order),
        accuracy_markdown(summary),
        "![accuracy of every encoding by length](figures/pe_variants.png)",
        classes_rule(chance, VARIANT_LENGTH_FACTOR * task["train_length_max"], tally),
        classes_markdown(classes, order),
        left_out_markdown(classes),
        "**Mechanism.** Each registry entry states whether its logit is a function of the offset alone (at every "
        "length, or up to a length: FIRE with its threshold L fixed, up to n=L), whether "
        "every parameter shaping it past the training range is trained, whether its position term is monotone in "
        "the offset, whether it draws its position ids at random, and whether it has a position term at all "
        "(the `DECLARATIONS` of its module in `lengthgen/models/encodings/`, each statement tested against the code; "
        "their definitions are in `docs/adding-an-encoding.md`):",
        properties_markdown(descriptions, order),
        predictions_rule(),
        predictions_markdown(classes, descriptions, order),
        *fire_thresholds_markdown(tables["variants_fire_thresholds"], descriptions,
                                  VARIANT_LENGTH_FACTOR * task["train_length_max"], task["train_length_max"]),
        f"**Claim**: the mechanism decides the class: every predicted class above is the measured one "
        f"({predictions_tally(classes, descriptions)}). Each prediction is one evidence check, holding when the "
        "measured class is one it allows; an impossibility is a sanity check instead, on the lowest in-range "
        "accuracy (only a bug in the encoding or its declaration can fit the range there).",
        disagreements_markdown(classes, descriptions, order),
        checks_markdown(checks),
    ])
