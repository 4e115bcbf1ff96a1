"""The speed goals as ratios: each a cost over a yardstick measured beside it in the same run, so that a slower or
busier machine slows both and the ratio keeps its meaning where minutes would not.
"""

import statistics
from typing import NamedTuple


class Ratio(NamedTuple):
    """One speed figure: ``value`` = a cost over its yardstick, against ``goal``, an upper bound (None where the
    goal is set elsewhere: ``no_goal`` says where)."""

    what: str
    value: float
    goal: float | None
    basis: str  # what was divided by what, measured how, on which run
    share: bool = False  # a fraction of a whole, shown in percent, not a multiple
    no_goal: str = ""

    def shown(self, number: float) -> str:
        return f"{100 * number:.0f}%" if self.share else f"{number:.2f}x"

    def goal_text(self) -> str:
        return self.no_goal if self.goal is None else f"<= {self.shown(self.goal)}"

    def verdict(self) -> str:
        """Met or missed, and by how much: the value over the goal."""
        if self.goal is None:
            return ""
        over = self.value / self.goal
        return f"met ({over:.2f} of the goal)" if self.value <= self.goal else f"missed by {over:.2f}x"


def paired_ratio(costs: list[float], yardsticks: list[float]) -> float:
    """The median of the ratios of costs and yardsticks timed in pairs, one right after the other: a pair ran under
    one load, so its ratio keeps what the load changes between pairs out."""
    if len(costs) != len(yardsticks) or not costs:
        raise ValueError(f"pairs: {len(costs)} costs against {len(yardsticks)} yardsticks; one of each a pair")
    return statistics.median(cost / yardstick for cost, yardstick in zip(costs, yardsticks))


def ratio_table(ratios: list[Ratio]) -> str:
    """The ratios as a markdown table: figure, measured, goal, met or missed, what was divided by what."""
    lines = ["| figure | measured | goal | met or missed | cost over yardstick |", "|---|---|---|---|---|"]
    lines += [f"| {ratio.what} | {ratio.shown(ratio.value)} | {ratio.goal_text()} | {ratio.verdict()} | {ratio.basis} |"
              for ratio in ratios]
    return "\n".join(lines)
