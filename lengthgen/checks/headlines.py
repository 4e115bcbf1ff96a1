"""A headline: one number per trained run (offset, seed), read from an experiment's tables, with the threshold
its experiment's rule uses, or none for a number that is a claim's baseline or precondition's companion
(``statistic``). Each experiment declares its own in ``lengthgen/experiments/<name>/headlines.py``; the multiseed
experiment reads each of them in every run, and the claims (``lengthgen/experiments/claims.py``) name them.

This module holds what those declarations share: the ``Headline`` record, and the row filters and per-run
reductions they are written with. It imports no torch.
"""

from dataclasses import dataclass
from typing import Callable

import pandas as pd

UNIT = (0.0, 1.0)
DIFFERENCE = (-1.0, 1.0)  # of two values in [0, 1]
FOUR_X = 4  # "at 4x": the evaluation length that many times the longest training length, where most claims are read


@dataclass(frozen=True)
class Headline:
    name: str  # begins with the experiment whose claim it repeats
    sources: tuple[str, ...]  # the schemas of the tables it is read from (each one table, or one per offset)
    comparison: str | None  # ">=", "<=" or ">"; None for a number without a rule of its own
    threshold: Callable[[dict], float] | None  # from the task settings, e.g. chance = 1/V
    # its tables, one under the other with their schema in column ``source``; task settings -> value by (offset, seed)
    per_run: Callable[[pd.DataFrame, dict], pd.Series]
    log_scale: bool = False  # for values spanning orders of magnitude
    bounds: tuple[float, float] | None = None  # the range of the value, e.g. (0, 1) for an accuracy
    kind: str = "evidence"  # of its check (claims.check): "sanity" where only a bug can fail it


def statistic(name: str, sources: tuple[str, ...], per_run: Callable[[pd.DataFrame, dict], pd.Series],
              **options) -> Headline:
    """A headline without a rule: a claim's baseline, or a number its page shows beside the primary one."""
    return Headline(name, sources, None, None, per_run, **options)


def past_range(frame: pd.DataFrame, settings: dict) -> pd.DataFrame:
    return frame[frame["length"] > settings["train_length_max"]]


def at_four_x(frame: pd.DataFrame, settings: dict) -> pd.DataFrame:
    return frame[frame["length"] == FOUR_X * settings["train_length_max"]]


def by_run(frame: pd.DataFrame, column: str, how: str) -> pd.Series:
    return frame.groupby(["offset", "seed"])[column].agg(how)


def accuracy_at_four_x(column: str, value: str) -> Callable[[pd.DataFrame, dict], pd.Series]:
    """Per run, the accuracy at 4x the longest training length of the rows whose ``column`` is ``value`` (an
    encoding by ``pe``, a linear-control arm by ``arm``): how far a head extrapolates."""
    return lambda frame, settings: by_run(at_four_x(frame[frame[column] == value], settings), "accuracy", "mean")


def lowest_in_range(column: str, value: str) -> Callable[[pd.DataFrame, dict], pd.Series]:
    """Per run, the lowest accuracy over the training range's lengths of the rows whose ``column`` is ``value``: how
    well a head fits its range, the precondition of every claim about what it does past it."""
    return lambda frame, settings: by_run(frame[(frame[column] == value) & frame["in_training_range"]], "accuracy",
                                          "min")
