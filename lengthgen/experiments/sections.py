"""One experiment's section text: ``section(tables, checks, settings)`` of ``lengthgen/experiments/<name>/section.py``,
rendered from its tables and checks, as the analysis job wrote them.

The figure job (rule ``plot_<name>``) writes it beside the figures, not the analysis job, so that editing the
text reruns no analysis: the analysis job does not run ``section.py``.
"""

import importlib

import pandas as pd

from lengthgen.tables.core import CLAIMS
from lengthgen.tables.io import atomic_write_text, read_table


def write_section(experiment: str, tables: dict[str, pd.DataFrame], claims_path: str, settings: dict,
                  path: str) -> None:
    """Render ``experiment``'s section from its tables (by name) and its checks (``claims_path``), write it to ``path``."""
    section = importlib.import_module(f"lengthgen.experiments.{experiment}.section").section
    atomic_write_text(section(tables, read_table(claims_path, CLAIMS), settings), path)


def markdown(rows: pd.DataFrame | list[list[str]], header: list[str] | None = None) -> str:
    """A page table of cells formatted already: tabulate must not read "0.50" back as a number and print "0.5"."""
    frame = rows if header is None else pd.DataFrame(rows, columns=header)
    return frame.to_markdown(index=False, disable_numparse=True)


def spread(values: pd.Series, digits: str = ".3g") -> str:
    """A statistic over seeds as mean [min, max]."""
    return f"{values.mean():{digits}} [{values.min():{digits}}, {values.max():{digits}}]"


def length_columns(lengths, in_range) -> list[str]:
    """Column names of evaluation lengths; * marks those in the training range."""
    return [f"n={n}{'*' if n in in_range else ''}" for n in lengths]


def listed(values) -> str:
    return ", ".join(map(str, values))
