"""The variants experiment's RESULTS.md section: accuracy by length, the classes, and per encoding why its
mechanism gives its class; the text follows from the classes and the registry's properties."""

import pandas as pd

from lengthgen.claims import checks_markdown
from lengthgen.experiments.variants import CLASSES, COLLAPSES, DECAYS, EXTRAPOLATES, FAILS, mechanisms
from lengthgen.prose.base import accuracy_markdown, format_interval
from lengthgen.thresholds import (CHANCE_TOLERANCE, EXTRAPOLATES_ACCURACY, MONOTONE_FAILS_FROM_OFFSET,
                             VARIANT_FIT_ACCURACY, VARIANT_LENGTH_FACTOR, VARIANT_SPREAD_WIDTH)


def mechanism_phrase(mechanism: dict) -> str:
    """The registry's properties of one encoding, as a clause."""
    if mechanism["random_positions"]:
        dependence = "a function of random position ids drawn per sequence, so not of the token offset"
    elif mechanism["offset_only"]:
        dependence = "a function of the offset alone"
    else:
        dependence = "a function of absolute positions, not of the offset alone"
    training = ("every parameter that shapes it past the training range is trained" if mechanism["trained_past_range"]
                else "some parameters that shape it past the training range get no gradient in training")
    shape = "; its position term is monotone in the offset" if mechanism["monotone_in_offset"] else ""
    return f"the logit is {dependence}; {training}{shape}"


def explanation(mechanism: dict, category: str, offset: int) -> str:
    """Why the mechanism gives this class: the sentence follows from the properties and the class."""
    relative_and_trained = mechanism["offset_only"] and mechanism["trained_past_range"]
    if category == FAILS:
        if mechanism["monotone_in_offset"] and offset >= MONOTONE_FAILS_FROM_OFFSET:
            return ("a monotone position term ranks the target's offset below (or above) every nearer offset, "
                    "so no setting of it selects that key: the head cannot fit the task even in range")
        if mechanism["monotone_in_offset"]:
            return ("a monotone position term can at most favour the nearest keys, leaving the query's own "
                    "key to be told apart by content; this head did not fit the range")
        if mechanism["random_positions"]:
            return ("the target key sits at a random id gap that overlaps the gaps of the keys beside it, so "
                    "the position part of the logit cannot tell it apart the same way in every sequence; the head "
                    "did not fit the range")
        return "the head did not fit the task in the training range, so its extrapolation is not judged"
    if relative_and_trained:
        if category == COLLAPSES:
            return "the account (offset-only logit, all parameters trained) does not explain this collapse"
        consequence = ("and at 4x the target still outweighs the added keys" if category == EXTRAPOLATES else
                       "so what costs accuracy is their number: more distractors share the softmax (dilution)")
        return f"nothing in the logit changes with length but the number of keys, {consequence}"
    reasons = []
    if not mechanism["offset_only"]:
        reasons.append("its logit depends on absolute positions, which past the range take values the head was "
                       "never fit on")
    if not mechanism["trained_past_range"]:
        reasons.append("part of its logit past the range comes from parameters left at their initialization")
    if category == COLLAPSES:
        return f"{', and '.join(reasons)}: the rule learned in range does not carry over"
    return f"although {', and '.join(reasons)}, the rule carried over, {'fully' if category == EXTRAPOLATES else 'in part'}"


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


def explanations_markdown(classes: pd.DataFrame, descriptions: dict[str, dict], order: list[str]) -> str:
    """Per encoding: what the registry says it is, its mechanism, and why it landed in each class."""
    items = []
    for pe in order:
        mechanism = descriptions[pe]
        cells = classes[classes["pe"] == pe].sort_values("offset")
        cells = cells.assign(why=[explanation(mechanism, row.category, row.offset) + spread_caveat(row)
                                  for row in cells.itertuples()])
        # Offsets with the same class and explanation share one sentence.
        by_class = []
        for (category, why), group in cells.groupby(["category", "why"], sort=False):
            offsets = ", ".join(str(offset) for offset in group["offset"])
            by_class.append(f"K={offsets}: **{category}**, {why}")
        items.append(f"- `{pe}`: {mechanism['summary']} Mechanism: {mechanism_phrase(mechanism)}. "
                     + "; ".join(by_class) + ".")
    return "\n".join(items)


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
        f"**Classes**, per encoding and offset on the mean accuracy, fixed before the run (`lengthgen/thresholds.py`): "
        f"*{FAILS}* if the lowest in-range accuracy is below {VARIANT_FIT_ACCURACY}; else *{EXTRAPOLATES}* if it is "
        f">= {EXTRAPOLATES_ACCURACY} at n={far_length} ({VARIANT_LENGTH_FACTOR}x the longest training length); "
        f"*{COLLAPSES}* if it is at most chance + {CHANCE_TOLERANCE} = {chance + CHANCE_TOLERANCE:.3f} there; "
        f"*{DECAYS}* otherwise. Where the 95% interval at n={far_length} is {VARIANT_SPREAD_WIDTH} or wider, the "
        f"seeds disagree about the class, and the text below says so. Measured: {tally}.")


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    summary, classes = tables["variants_summary"], tables["variants_classes"]
    order, task = settings["variants"]["pe"], settings["task"]
    chance = 1.0 / task["vocab_size"]
    counts = classes["category"].value_counts()
    tally = ", ".join(f"{counts.get(category, 0)} {category}" for category in CLASSES)
    return "\n\n".join([
        "## variants: which encodings extrapolate, and why",
        f"{len(order)} encodings, each trained and evaluated exactly like the base sweep (same training batches, "
        f"evaluation sets and seeds, {classes['n_seeds'].max()} seeds per cell, offsets "
        f"{sorted(classes['offset'].unique().tolist())}). Randomized encodings draw their position ids in training "
        "and at evaluation alike, as their reference code does (it has no train/eval switch); it draws one subset "
        "per batch, here every sequence draws its own. Mean accuracy over seeds with a 95% "
        f"Student-t interval; lengths marked * lie in the training range; chance is {chance:.4f}.",
        accuracy_markdown(summary),
        "![accuracy of every encoding by length](figures/pe_variants.png)",
        classes_rule(chance, VARIANT_LENGTH_FACTOR * task["train_length_max"], tally),
        classes_markdown(classes, order),
        left_out_markdown(classes),
        "**Mechanism.** Each registry entry states whether its logit is a function of the offset alone, whether "
        "every parameter shaping it past the training range is trained, and whether its position term is monotone "
        "in the offset (`lengthgen/encodings.py`, each statement tested against the code). From these, per encoding:",
        explanations_markdown(classes, mechanisms(order), order),
        "**Claim**: the mechanism decides the class. A logit that depends on the offset alone, with every parameter "
        "that shapes it trained, does not collapse to chance past the range where the head fits the range; a "
        f"position term monotone in the offset cannot select K >= {MONOTONE_FAILS_FROM_OFFSET} even in range. "
        "Encodings the account makes no prediction for are classified above and not checked.",
        checks_markdown(checks),
    ])
