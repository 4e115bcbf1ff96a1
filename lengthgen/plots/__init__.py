"""Figures: one module per experiment (``lengthgen/experiments/<name>/figures.py``); this module holds what they share.

An experiment's plot module defines ``draw(tables, settings) -> {figure name: Figure}``: its
figures from its tables (by schema name) and its settings, returned unsaved, so that a test can
read what a figure shows from its matplotlib objects. Styling comes from ``workflow/matplotlibrc``
and the dpi from ``figures.dpi`` (both layered by every figure job), so a style change reruns the
figures and nothing else.
"""

import importlib

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from lengthgen.tables.registry import schema_named  # noqa: E402
from lengthgen.tables.io import atomic_path, read_table  # noqa: E402

ENCODING_COLORS = {"rope": "tab:blue", "learned": "tab:red", "sinusoidal": "tab:green", "nope": "tab:gray"}


def encoding_color(pe: str) -> str:
    return ENCODING_COLORS.get(pe, f"C{sum(map(ord, pe)) % 10}")


def shade_training_range(ax, train_length_min: int, train_length_max: int) -> None:
    ax.axvspan(train_length_min, train_length_max, color="0.9", zorder=0, label="training range")


def save_figure(fig, path) -> None:
    """Save atomically as PNG (at the style's ``savefig.dpi``) and close, so a killed job leaves no
    half-written figure."""
    with atomic_path(path) as temp:
        fig.savefig(temp, format="png", metadata={"Software": None})
    plt.close(fig)


def read_figure_tables(tables: dict[str, tuple[str, str]]) -> dict:
    """An experiment's tables, read: name -> (path, schema name) becomes name -> DataFrame."""
    return {name: read_table(path, schema_named(schema)) for name, (path, schema) in tables.items()}


def draw_figures(experiment: str, tables: dict, settings: dict, figure_paths: dict[str, str]) -> None:
    """Draw an experiment's figures from its tables (by name), save each to its path."""
    figures = importlib.import_module(f"lengthgen.experiments.{experiment}.figures").draw(tables, settings)
    missing = sorted(set(figure_paths) - set(figures))
    if missing:
        raise ValueError(f"lengthgen/experiments/{experiment}/figures.py drew no figure {', '.join(missing)}")
    for name, path in figure_paths.items():
        save_figure(figures[name], path)
    for name in set(figures) - set(figure_paths):
        plt.close(figures[name])
