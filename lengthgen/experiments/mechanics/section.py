"""The mechanics experiment's RESULTS.md section: where the heads attend past the training range, the claim, its checks."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.models.init import parse_init
from lengthgen.experiments.mechanics.thresholds import MIN_MASS_IN_RANGE, MIN_MODAL_FRACTION, SAME_POSITION_TOLERANCE


def past_range_markdown(by_length: pd.DataFrame, untrained: pd.DataFrame, pe: str) -> str:
    """Per (offset, length) past the range: the modal position of each seed, and the spread over seeds of the
    fraction of sequences at the mode and of the attention mass in the training range, trained and, beside
    them, the same heads at their seeded init (``untrained``)."""
    def spread(cells: pd.DataFrame, column: str, digits: int) -> str:
        return f"{cells[column].mean():.{digits}f}, {cells[column].min():.{digits}f}"

    def past(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["past_training_range"] & (frame["pe"] == pe)].sort_values("seed")

    at_init = past(untrained).groupby(["offset", "length"])
    rows = [{"K": offset, "length": length,
             "modal position per seed": ", ".join(map(str, cells["modal_position"])),
             "fraction at mode (mean, min)": spread(cells, "modal_fraction", 2),
             "untrained: fraction at mode": spread(at_init.get_group((offset, length)), "modal_fraction", 2),
             "mass in training range (mean, min)": spread(cells, "mass_in_training_range", 3),
             "untrained: mass in range": spread(at_init.get_group((offset, length)), "mass_in_training_range", 3)}
            for (offset, length), cells in past(by_length).groupby(["offset", "length"])]
    columns = ["K", "length", "modal position per seed", "fraction at mode (mean, min)", "untrained: fraction at mode",
               "mass in training range (mean, min)", "untrained: mass in range"]
    # The cells are formatted already: tabulate must not read "1.00" back as a number and print "1".
    return pd.DataFrame(rows, columns=columns).to_markdown(index=False, disable_numparse=True)


def primary_markdown(by_length: pd.DataFrame, untrained: pd.DataFrame) -> str:
    """The claim's primary number per K: the share of the learned heads' (seed, length) cells past the range whose
    modal position lies inside the training range; beside it the mean and lowest share of sequences at that position,
    each with the same heads at their seeded init."""
    def learned_past(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["past_training_range"] & (frame["pe"] == "learned")]

    def cells(frame: pd.DataFrame) -> pd.DataFrame:
        return learned_past(frame).groupby("offset").agg(
            in_range=("modal_in_training_range", "mean"), cells=("modal_in_training_range", "size"),
            modal_mean=("modal_fraction", "mean"), modal_min=("modal_fraction", "min"))

    trained, at_init = cells(by_length), cells(untrained)
    rows = [{"K": offset, "cells past the range": f"{row.cells:.0f}",
             "modal position inside the range (share of cells)": f"{row.in_range:.0%}",
             "untrained: inside the range": f"{at_init.loc[offset, 'in_range']:.0%}",
             "sequences at the modal position (mean, min)": f"{row.modal_mean:.2f}, {row.modal_min:.2f}",
             "untrained: at the modal position (mean)": f"{at_init.loc[offset, 'modal_mean']:.2f}"}
            for offset, row in trained.iterrows()]
    return pd.DataFrame(rows).to_markdown(index=False, disable_numparse=True)


def learned_table_std(settings: dict) -> float:
    """The std the learned table was drawn with: a named normal init's (``model.init``), else
    ``model.learned_init_std``."""
    named = parse_init(settings["model"]["init"]).encoding_std
    return settings["model"]["learned_init_std"] if named is None else named


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    by_length, untrained = tables["mechanics_by_length"], tables["mechanics_untrained_by_length"]
    train_length_max = settings["task"]["train_length_max"]
    seeds = sorted(by_length["seed"].unique())
    return "\n\n".join([
        "## mechanics",
        "Where the trained heads attend at evaluation lengths past the training range: for each "
        "sequence the argmax-attended key position; per (encoding, K, seed, length) the most common "
        "(modal) argmax position, the fraction of sequences attending there, and the mean attention "
        f"mass on the positions seen in training, [0, {train_length_max}). "
        f"Seeds {', '.join(map(str, seeds))}; learned table initialized with std {learned_table_std(settings):g}. "
        "Beside each statistic, the same heads at their seeded init "
        "(the weights each run trained from): what a head that learned nothing does.",
        "**The claim's primary number**: where the learned head's modal position lies at each length past the range, "
        "as the share of its (seed, length) cells with that position inside the training range; beside it, how many "
        "sequences attend there (the share of sequences at the modal position), and the same heads at their seeded "
        "init:",
        primary_markdown(by_length, untrained),
        "**learned** (absolute table):",
        past_range_markdown(by_length, untrained, "learned"),
        "**rope** (contrast):",
        past_range_markdown(by_length, untrained, "rope"),
        "Claims (pinning means the modal position inside the training range at every length past it, the same "
        f"position at every such length within {SAME_POSITION_TOLERANCE} position (one position of jitter between "
        "lengths' evaluation sets, a tolerance set after the data, as the rule history says), a majority of sequences "
        f"at it (>= {MIN_MODAL_FRACTION}) and a majority of the mass (>= {MIN_MASS_IN_RANGE}) inside the training "
        "range; each rule states the untrained heads' value and whether they pass it):",
        checks_markdown(checks),
        "![Attention of the learned and rope heads past the training range](figures/mechanics.png)",
    ])
