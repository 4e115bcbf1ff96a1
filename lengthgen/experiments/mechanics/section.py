"""The mechanics page: where the heads attend past the training range, trained and at init; the claim, its checks."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.mechanics.thresholds import MIN_MASS_IN_RANGE, MIN_MODAL_FRACTION, SAME_POSITION_TOLERANCE
from lengthgen.experiments.sections import distinct, listed, markdown, spread
from lengthgen.models.init import parse_init


def past_range(frame: pd.DataFrame, pe: str) -> pd.DataFrame:
    return frame[frame["past_training_range"] & (frame["pe"] == pe)].sort_values("seed")


def by_length_markdown(by_length: pd.DataFrame, untrained: pd.DataFrame, pe: str) -> str:
    """Per (K, length) past the range: each seed's modal position, sequences at it and mass in range, and at init."""
    at_init = past_range(untrained, pe).groupby(["offset", "length"])
    rows = [{"K": offset, "length": length, "modal position per seed": listed(cells["modal_position"]),
             "sequences at it": spread(cells["modal_fraction"], ".2f"),
             "untrained: at it": spread(at_init.get_group((offset, length))["modal_fraction"], ".2f"),
             "mass in training range": spread(cells["mass_in_training_range"], ".3f"),
             "untrained: mass": spread(at_init.get_group((offset, length))["mass_in_training_range"], ".3f")}
            for (offset, length), cells in past_range(by_length, pe).groupby(["offset", "length"])]
    return markdown(pd.DataFrame(rows))


def primary_markdown(by_length: pd.DataFrame, untrained: pd.DataFrame) -> str:
    """Per K, the claim's primary number (the learned head's in-range modal share), the modal share, and at init."""
    trained, at_init = (past_range(frame, "learned").groupby("offset") for frame in (by_length, untrained))
    return markdown(pd.DataFrame([{
        "K": offset, "cells past the range": str(len(cells)),
        "modal position inside the range": f"{cells['modal_in_training_range'].mean():.0%}",
        "untrained: inside": f"{at_init.get_group(offset)['modal_in_training_range'].mean():.0%}",
        "sequences at the modal position": spread(cells["modal_fraction"], ".2f"),
        "untrained: at it": spread(at_init.get_group(offset)["modal_fraction"], ".2f")} for offset, cells in trained]))


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    by_length, untrained = tables["mechanics_by_length"], tables["mechanics_untrained_by_length"]
    named_std = parse_init(settings["model"]["init"]).encoding_std  # a named normal init draws the table too
    std = settings["model"]["learned_init_std"] if named_std is None else named_std
    return "\n\n".join([
        "## mechanics",
        "Where the trained heads attend past the training range: per (encoding, K, seed, length), the key position "
        "most sequences attend to most (the modal position), the share of sequences there, and the attention mass "
        f"on the trained positions [0, {settings['task']['train_length_max']}). Seeds "
        f"{distinct(by_length['seed'])}; learned table initialized with std {std:g}. Beside each, "
        "the same heads at their seeded init: what a head that learned nothing does. Cells: mean [min, max] over "
        "seeds.",
        "**The claim's primary number**: the share of the learned head's (seed, length) cells past the range whose "
        "modal position lies inside the training range; beside it, the share of sequences at that position:",
        primary_markdown(by_length, untrained),
        "**learned** (absolute table):",
        by_length_markdown(by_length, untrained, "learned"),
        "**rope** (contrast):",
        by_length_markdown(by_length, untrained, "rope"),
        "**What the checks test**: the learned head pins where its modal position lies inside the range and is the "
        f"same within {SAME_POSITION_TOLERANCE} position at every length past it (a tolerance for the jitter between "
        f"lengths' evaluation sets, set after the data), with >= {MIN_MODAL_FRACTION} of sequences there and >= "
        f"{MIN_MASS_IN_RANGE} of the mass inside the range.",
        checks_markdown(checks),
        "![Attention of the learned and rope heads past the training range](figures/mechanics.png)",
    ])
