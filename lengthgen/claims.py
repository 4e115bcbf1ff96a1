"""Verdicts: each claim is a list of checks (statistic, value, rule, holds) fixed in advance.

An experiment's verdict is *confirmed* when every check holds, *not confirmed* when none
does, and *mixed* otherwise. The base experiment's checks live here; each other
experiment's module builds its own with ``check``.
"""

import pandas as pd

VERDICT_RULE = "confirmed if every check holds, not confirmed if none holds, mixed otherwise"

# "Well above chance" for the base claim, fixed before any run: five times chance.
ABOVE_CHANCE_FACTOR = 5.0
# "At chance": within this absolute distance of 1/V.
CHANCE_TOLERANCE = 0.05
NEAR_PERFECT = 0.99


def check(experiment: str, claim: str, statistic: str, value: float, rule: str, holds: bool) -> dict:
    return {"experiment": experiment, "claim": claim, "statistic": statistic, "value": float(value),
            "rule": rule, "holds": bool(holds)}


def verdict(checks: pd.DataFrame) -> str:
    if checks["holds"].all():
        return "confirmed"
    if not checks["holds"].any():
        return "not confirmed"
    return "mixed"


def base_checks(summary: pd.DataFrame, vocab_size: int, train_length_max: int) -> pd.DataFrame:
    """The base claim, per offset, from the ``accuracy_summary`` table.

    RoPE: mean accuracy >= 0.99 at every in-range length, and >= 5x chance at the longest
    evaluation length not beyond 4x the training maximum. Learned: >= 0.99 in range, and
    within 0.05 of chance at every length past the range.
    """
    chance = 1.0 / vocab_size
    four_x = summary.loc[summary["length"] <= 4 * train_length_max, "length"].max()
    rows = []
    for offset, at_offset in summary.groupby("offset", sort=True):
        claim = f"K={offset}"
        in_range = at_offset[at_offset["in_training_range"]]
        past = at_offset[at_offset["length"] > train_length_max]
        for pe in ("rope", "learned"):
            worst = in_range.loc[in_range["pe"] == pe, "mean"].min()
            rows.append(check("base", claim, f"{pe}: lowest mean accuracy in training range", worst,
                              f">= {NEAR_PERFECT}", worst >= NEAR_PERFECT))
        rope_far = at_offset.loc[(at_offset["pe"] == "rope") & (at_offset["length"] == four_x), "mean"].squeeze()
        rows.append(check("base", claim, f"rope: mean accuracy at n={four_x}", rope_far,
                          f">= {ABOVE_CHANCE_FACTOR:g} x chance = {ABOVE_CHANCE_FACTOR * chance:.3f}",
                          rope_far >= ABOVE_CHANCE_FACTOR * chance))
        learned_past = past.loc[past["pe"] == "learned", "mean"]
        farthest_from_chance = (learned_past - chance).abs().max()
        rows.append(check("base", claim, "learned: largest distance of mean accuracy from chance past training range",
                          farthest_from_chance, f"<= {CHANCE_TOLERANCE} (chance = {chance:.4f})",
                          farthest_from_chance <= CHANCE_TOLERANCE))
    return pd.DataFrame(rows)
