"""One experiment's section text, ``section(tables, checks, settings)`` of ``lengthgen/experiments/<name>/section.py``,
and the cells its tables share. The figure job (rule ``plot_<name>``) writes it from the analysis job's tables and
checks, so that editing the text reruns no analysis."""

import importlib

import pandas as pd

from lengthgen.tables.core import CLAIMS
from lengthgen.tables.io import atomic_write_text, read_table


def write_section(experiment: str, tables: dict[str, pd.DataFrame], claims_path: str, settings: dict,
                  path: str) -> None:
    """Render ``experiment``'s section from its tables (by name) and checks (``claims_path``), write it to ``path``."""
    section = importlib.import_module(f"lengthgen.experiments.{experiment}.section").section
    atomic_write_text(section(tables, read_table(claims_path, CLAIMS), settings), path)


YES_NO = {True: "yes", False: "no"}


def markdown(rows, header: list[str] | None = None, floatfmt: str | None = None) -> str:
    """A page table (a frame, columns by title, or rows under ``header``) of cells written already, which tabulate
    must not reread as numbers ("0.50" would print "0.5"); or, given ``floatfmt``, of numbers it writes so."""
    frame = pd.DataFrame(rows, columns=header)
    if floatfmt:
        return frame.to_markdown(index=False, floatfmt=floatfmt)
    return frame.to_markdown(index=False, disable_numparse=True)


def interval(mean: float, low: float, high: float, digits: str = ".3f") -> str:
    """A statistic with its bounds: mean [low, high]."""
    return f"{mean:{digits}} [{low:{digits}}, {high:{digits}}]"


def spread(values: pd.Series, digits: str = ".3g") -> str:
    """A statistic over seeds as mean [min, max]."""
    return interval(values.mean(), values.min(), values.max(), digits)


def span(values, write) -> str:
    """``0.643 to 0.958``: the lowest and highest of ``values`` by ``write``; one where they read the same."""
    low, high = write(min(values)), write(max(values))
    return low if low == high else f"{low} to {high}"


def written(value, form: str = "{}", missing: str = "-") -> str:
    """``value`` written by ``form``, ``missing`` where there is none."""
    return missing if pd.isna(value) else form.format(value)


def decimals(values: pd.Series, digits: int = 3, missing: str = "-") -> pd.Series:
    """Each value to ``digits`` decimals, ``missing`` where there is none."""
    return values.map(lambda value: written(value, f"{{:.{digits}f}}", missing))


def wide_markdown(cells: pd.Series, index: list[str], title, sort: bool = True) -> str:
    """``cells`` with the last level of their index as columns titled ``title(value)``; sorted, or in first order."""
    table = cells.unstack(-1, sort=sort).fillna("-")
    table.columns = [title(value) for value in table.columns]
    return markdown(table.rename_axis(index=index).reset_index())


def length_columns(lengths, in_range) -> list[str]:
    """Column names of evaluation lengths; * marks those in the training range."""
    return [f"n={n}{'*' if n in in_range else ''}" for n in lengths]


def accuracy_markdown(summary: pd.DataFrame) -> str:
    """One row per (encoding, K), one column per length: mean [95% interval] over seeds."""
    cells = summary.set_index(["pe", "offset", "length"])
    in_range = set(summary.loc[summary["in_training_range"], "length"])
    return wide_markdown(pd.Series([interval(*row) for row in cells[["mean", "ci_low", "ci_high"]].to_numpy()],
                                   cells.index), ["encoding", "K"], lambda n: length_columns([n], in_range)[0])


def listed(values, separator: str = ", ") -> str:
    return separator.join(map(str, values))


def distinct(values, separator: str = ", ", form: str = "{}") -> str:
    """The distinct values, sorted, each written by ``form``: a run's seeds ("0, 1, 2") or ranks ("6/8")."""
    return listed((form.format(value) for value in sorted(set(values))), separator)
