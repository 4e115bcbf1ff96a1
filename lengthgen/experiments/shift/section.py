"""The ``shift_K<offset>`` sections of RESULTS.md: logit change under a shift of every position id, its checks."""

import numpy as np
import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.shift.summaries import summary_by_shift


def format_change(value: float, measured: bool) -> str:
    if not measured:
        return "-"  # this shift was not run for this encoding
    return "missing" if np.isnan(value) else f"{value:.2e}"


def changes_markdown(changes: pd.DataFrame, offset: int) -> str:
    """One row per (encoding, dtype), one column per shift: the largest attention-logit change over seeds
    and lengths; ``missing`` where the shift is undefined, ``-`` where it was not run."""
    cells = changes[changes["offset"] == offset]
    summary = summary_by_shift(changes, offset)
    measured = cells.groupby(["pe", "dtype", "shift"]).size().unstack("shift").reindex_like(summary).notna()
    shown = pd.DataFrame([[format_change(value, ran) for value, ran in zip(values, measured.loc[key])]
                          for key, values in summary.iterrows()],
                         index=summary.index, columns=[f"s={s}" for s in summary.columns])
    # The cells are already formatted: tabulate must not read "3.81e-02" as a number and reformat it.
    return shown.rename_axis(index=["encoding", "dtype"]).reset_index().to_markdown(index=False, disable_numparse=True)


def undefined_markdown(cells: pd.DataFrame) -> list[str]:
    """The line naming where a shift is undefined (position ids past a finite table's rows), if anywhere."""
    undefined = cells[~cells["defined"]]
    if undefined.empty:
        return []
    first = undefined.groupby(["pe", "length"])["shift"].min()
    return ["missing: not defined, position ids past the table's rows: " + "; ".join(
        f"{pe} at length {length} for s >= {s}" for (pe, length), s in first.items()) + "."]


# The paper's sentence has two halves, and a shift tests only the first: that rope's logit is a function of the
# offset alone. The second, that the rule training selected is the rule at every longer length, is a statement
# about offsets past the range, which no training sequence reached: the errors experiment measures it.
HALVES = (
    "**What a shift tests, and what it does not.** The paper's sentence has two halves. (1) Rotary encodings make "
    "the attention logit a function of the relative offset alone: a shift of every position id leaves every logit "
    "as it was, which the table and the checks above test. (2) So the selection rule learned at training lengths is "
    "reproduced at every longer length: a shift cannot test this. Past the training range a query sees keys at "
    "offsets that no training sequence held, where the logit function was never fit; equivariance makes that "
    "function the same at every absolute position, not the one training selected. The errors section measures the "
    "second half: how many of rope's wrong answers past the range are ranking errors, and what share of those is "
    "won by a key at an offset unseen in training.")


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    changes, offset = tables["shift_changes"], settings["offset"]
    cells = changes[changes["offset"] == offset]
    states = cells.groupby("pe")["trained"].agg(
        lambda trained: "trained" if trained.all() else "at init" if not trained.any() else "mixed")
    return "\n\n".join([
        f"## shift_K{offset}",
        "Every position id shifted by s; the largest absolute change of any attention logit against the "
        f"unshifted head (max over seeds {', '.join(map(str, sorted(cells['seed'].unique())))} and lengths "
        f"{', '.join(map(str, sorted(cells['length'].unique())))}), K={offset}. Heads: "
        + ", ".join(f"{pe} ({state})" for pe, state in states.items()) + ".",
        changes_markdown(changes, offset),
        *undefined_markdown(cells),
        checks_markdown(checks),
        HALVES,
        f"![Logit change under a position shift, K={offset}](figures/shift_equivariance_K{offset}.png)",
    ])
