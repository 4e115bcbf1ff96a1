"""The transformer's findings, rope's accuracy floor by length and each run's largest drop: torch-free, shared by its
checks (``analysis.py``) and its section text (``section.py``, which the figure job writes without loading a model)."""

import math

import numpy as np
import pandas as pd

from lengthgen.experiments.transformer.thresholds import MIN_RETRIEVAL_ATTENTION, STEP_MIN_DROP

PAPER_FINDINGS = ("phenomenon", "equivariance", "carrier")  # what the paper claims transfers
FINDINGS = (*PAPER_FINDINGS, "steps")


def rope_floor_by_length(windows: pd.DataFrame) -> pd.DataFrame:
    """Per (offset, length): rope's lowest last-window accuracy over seeds, the statistic the phenomenon's
    checks judge at 4x and at every length past the range."""
    rope = windows[windows["pe"] == "rope"]
    return rope.groupby(["offset", "length"], as_index=False)["accuracy"].min()


def prediction_factor(predicted, found) -> float:
    """How many times the larger of the predicted and found step positions is the smaller; inf without a
    prediction."""
    return math.inf if pd.isna(predicted) else max(predicted, found) / min(predicted, found)


def window_means(accuracy: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index, mean before, mean after): for each index i of ``accuracy`` where both fit, the mean over the
    ``width`` values before i and over the ``width`` from i on."""
    sums = np.concatenate([[0.0], np.cumsum(accuracy)])
    index = np.arange(width, len(accuracy) - width + 1)
    return index, (sums[index] - sums[index - width]) / width, (sums[index + width] - sums[index]) / width


def largest_drops(by_position: pd.DataFrame, width: int, start: int) -> pd.DataFrame:
    """Per run, on its longest evaluation length: the position p >= ``start`` where the mean accuracy over
    positions p - width .. p - 1 minus that over p .. p + width - 1 is largest, whatever its size (a step is
    one of at least ``STEP_MIN_DROP``), with both means; no row for a run where no such window fits."""
    rows = []
    for (pe, offset, seed), run in by_position.groupby(["pe", "offset", "seed"], sort=True):
        longest = run[run["length"] == run["length"].max()].sort_values("position")
        positions = longest["position"].to_numpy()
        index, before, after = window_means(longest["accuracy"].to_numpy(), width)
        past = np.flatnonzero(positions[index] >= start)
        if len(past):
            at = past[np.argmax((before - after)[past])]
            rows.append({"pe": pe, "offset": offset, "seed": seed, "position": int(positions[index[at]]),
                         "accuracy_before": float(before[at]), "accuracy_after": float(after[at])})
    return pd.DataFrame(rows, columns=["pe", "offset", "seed", "position", "accuracy_before", "accuracy_after"])


def rope_drops(by_position: pd.DataFrame, train_length_max: int) -> pd.DataFrame:
    """Per rope run: its largest drop past the range (``largest_drops`` from ``train_length_max`` on, windows of
    ``train_length_max``), its size (the mean before minus the mean after) and whether it is a step (``STEP_MIN_DROP``):
    every model's drop, not only the steps."""
    drops = largest_drops(by_position[by_position["pe"] == "rope"], train_length_max, train_length_max)
    size = drops["accuracy_before"] - drops["accuracy_after"]
    return drops.assign(size=size, step=size >= STEP_MIN_DROP)


def retrieves(attention_at_offset):
    """Whether a head retrieves: its mean attention weight at offset K reaches ``MIN_RETRIEVAL_ATTENTION`` (a float,
    or a Series of them)."""
    return attention_at_offset >= MIN_RETRIEVAL_ATTENTION


def retrieving(carrier: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``carrier`` (``transformer_carrier``: every head of every rope model) of the heads that retrieve:
    those the carrier checks judge."""
    return carrier[carrier["retrieves"]]


def same_heads_at_init(carrier: pd.DataFrame, untrained: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``untrained`` (``transformer_untrained_carrier``) of the (offset, seed, layer, head)s that retrieve
    once trained (``retrieving``): the carrier checks' baseline."""
    keys = ["offset", "seed", "layer", "head"]
    return untrained.merge(retrieving(carrier)[keys], on=keys, how="inner")


def strongest_heads(carrier: pd.DataFrame) -> pd.DataFrame:
    """Per rope model (offset, seed): the row of its head with the most attention at offset K, retrieving or not."""
    return carrier.loc[carrier.groupby(["offset", "seed"])["attention_at_offset"].idxmax()]
