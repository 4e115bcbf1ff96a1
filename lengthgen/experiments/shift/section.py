"""The ``shift_K<offset>`` pages: the attention-logit change under a shift of every position id; the checks."""

import numpy as np
import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.sections import distinct, markdown
from lengthgen.experiments.shift.summaries import summary_by_shift

HALVES = (
    "**What a shift tests, and what it does not.** (1) Rotary encodings make the attention logit a function of the "
    "relative offset alone: a shift of every id leaves every logit as it was (the table and checks above). (2) So the "
    "rule learned at training lengths is reproduced at every longer length: a shift cannot test this, since past the "
    "range keys sit at offsets no training sequence held. The errors page measures it: rope's ranking errors past "
    "the range, and the share of them won by a key at an unseen offset.")


def changes_markdown(cells: pd.DataFrame, changes: pd.DataFrame, offset: int) -> str:
    """Per (encoding, dtype) and shift, the largest logit change ("missing": undefined; "-": not run)."""
    summary = summary_by_shift(changes, offset)
    ran = cells.groupby(["pe", "dtype", "shift"]).size().unstack("shift").reindex_like(summary).notna()
    shown = summary.map(lambda value: "missing" if np.isnan(value) else f"{value:.2e}").where(ran, "-")
    shown.columns = [f"s={shift}" for shift in summary.columns]
    return markdown(shown.rename_axis(index=["encoding", "dtype"]).reset_index())


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    changes, offset = tables["shift_changes"], settings["offset"]
    cells = changes[changes["offset"] == offset]
    states = cells.groupby("pe")["trained"].agg(
        lambda trained: "trained" if trained.all() else "at init" if not trained.any() else "mixed")
    first_undefined = cells[~cells["defined"]].groupby(["pe", "length"])["shift"].min()
    return "\n\n".join([
        f"## shift_K{offset}",
        "Every position id shifted by s: the largest absolute change of any attention logit against the unshifted "
        f"head, over seeds {distinct(cells['seed'])} and lengths {distinct(cells['length'])}, K={offset}. Heads: "
        + ", ".join(f"{pe} ({state})" for pe, state in states.items()) + ".",
        changes_markdown(cells, changes, offset),
        *(["missing: position ids past the table's rows: " + "; ".join(
            f"{pe} at length {length} for s >= {s}" for (pe, length), s in first_undefined.items()) + "."]
          if len(first_undefined) else []),
        checks_markdown(checks),
        HALVES,
        f"![Logit change under a position shift, K={offset}](figures/shift_equivariance_K{offset}.png)",
    ])
