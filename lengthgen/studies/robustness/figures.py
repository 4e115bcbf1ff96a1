"""The robustness figure: every evidence check of the study (rows) at every point (columns), each cell coloured by
its verdict over its offsets and labelled with its value (the mean over offsets)."""

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from lengthgen.checks.check import verdict
from lengthgen.studies.robustness.analysis import CHECK
from lengthgen.checks.verdicts import DOES_NOT_HOLD, HOLDS, IN_PART

VERDICT_LEVELS = {DOES_NOT_HOLD: 0.0, IN_PART: 0.5, HOLDS: 1.0}  # colour scale positions


def check_grid(checks: pd.DataFrame, points: list[str]) -> tuple[list[tuple], np.ndarray, list[list[str]]]:
    """(evidence checks as (experiment, claim, statistic) in table order; each one's verdict over its offsets at each
    point as a level of ``VERDICT_LEVELS`` (NaN: not measured there); its mean value over offsets, as text)."""
    evidence = checks[checks["kind"] == "evidence"]
    rows = list(dict.fromkeys(zip(*(evidence[column] for column in CHECK))))
    levels = np.full((len(rows), len(points)), np.nan)
    values = [[""] * len(points) for _ in rows]
    for (*key, point), cell in evidence.groupby([*CHECK, "point"], sort=False):
        if point not in points:
            continue
        row, column = rows.index(tuple(key)), points.index(point)
        levels[row, column] = VERDICT_LEVELS[verdict(cell)]
        values[row][column] = f"{cell['value'].mean():.3g}"
    return rows, levels, values


def robustness_figure(checks: pd.DataFrame, points: list[str]) -> plt.Figure:
    rows, levels, values = check_grid(checks, points)
    fig, ax = plt.subplots(figsize=(6.5 + 0.8 * len(points), max(3.0, 1.4 + 0.24 * len(rows))), layout="constrained")
    colors = plt.get_cmap("RdYlGn").with_extremes(bad="0.85")
    ax.imshow(np.ma.masked_invalid(levels), cmap=colors, vmin=-0.25, vmax=1.25, aspect="auto")
    for row, cells in enumerate(values):
        for column, text in enumerate(cells):
            ax.text(column, row, text or "-", ha="center", va="center", fontsize=6)
    labels = [f"{experiment}: {textwrap.shorten(f'{claim} | {statistic}', 90, placeholder='...')}"
              for experiment, claim, statistic in rows]
    ax.set_yticks(range(len(rows)), labels, fontsize=6)
    ax.set_xticks(range(len(points)), points, rotation=30, ha="right", fontsize=7)
    ax.tick_params(length=0)
    ax.grid(False)
    ax.set_title("Every evidence check at every point: green holds at every offset, yellow at some, red at none\n"
                 "(grey: not measured); the value is the mean over offsets", fontsize=8)
    return fig
