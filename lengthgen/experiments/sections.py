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
