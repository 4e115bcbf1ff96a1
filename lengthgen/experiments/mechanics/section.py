"""The mechanics experiment's RESULTS.md section: where the heads attend past the training range, the claim, its checks."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.models.init import parse_init
from lengthgen.experiments.mechanics.thresholds import MIN_MASS_IN_RANGE, MIN_MODAL_FRACTION


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
        "**learned** (absolute table):",
        past_range_markdown(by_length, untrained, "learned"),
        "**rope** (contrast):",
        past_range_markdown(by_length, untrained, "rope"),
        "Claims (rule fixed before the data: pinning means a majority of sequences at one position "
        f"(>= {MIN_MODAL_FRACTION}) and a majority of the mass (>= {MIN_MASS_IN_RANGE}) inside the training range; "
        "each rule states the untrained heads' value and whether they pass it):",
        checks_markdown(checks),
        "![Attention of the learned and rope heads past the training range](figures/mechanics.png)",
    ])
