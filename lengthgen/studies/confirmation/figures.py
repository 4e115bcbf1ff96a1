"""Figure of the replication: every check in every run, by the share of seed resamples in which it holds."""

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from lengthgen.studies.confirmation.replication import CHECK, replication_verdict


def check_grid(table: pd.DataFrame) -> tuple[list[tuple[str, str, str]], list[str], np.ndarray, list[list[str]]]:
    """(checks as (experiment, claim, statistic), evidence first, then sanity; runs; share of resamples in which
    each check holds, mean over its offsets (NaN: not measured); its outcome in each run)."""
    runs = list(dict.fromkeys(table["run"]))
    ordered = pd.concat([table[table["kind"] == "evidence"], table[table["kind"] != "evidence"]])
    checks = list(dict.fromkeys(zip(*(ordered[column] for column in CHECK))))
    shares = np.full((len(checks), len(runs)), np.nan)
    outcomes = [[""] * len(runs) for _ in checks]
    for (*key, run), rows in table.groupby([*CHECK, "run"], sort=False):
        row, column = checks.index(tuple(key)), runs.index(run)
        shares[row, column] = rows["holds_fraction"].mean()
        outcomes[row][column] = rows["outcome"].iloc[0]
    return checks, runs, shares, outcomes


def check_label(check: tuple[str, str, str], kind: str, status: str) -> str:
    experiment, claim, statistic = check
    sanity = " (sanity)" if kind == "sanity" else ""
    return f"{experiment}{sanity}: {textwrap.shorten(f'{claim} | {statistic}', 80, placeholder='...')} [{status}]"


def replication_figure(table: pd.DataFrame) -> plt.Figure:
    """The ``replication`` table as a grid of checks (rows) by runs (columns), each labelled with its replication
    (sanity checks last, marked: they count in no claim's replication)."""
    checks, runs, shares, outcomes = check_grid(table)
    confirmations = table[table["replicates"] != ""]
    status = confirmations.groupby(CHECK, sort=False)["replicates"].apply(
        lambda replicates: replication_verdict(replicates == "yes"))
    kinds = table.drop_duplicates(CHECK).set_index(CHECK)["kind"]
    # At least as tall as the colour bar's label, for a study of a few checks.
    fig, ax = plt.subplots(figsize=(7.5 + 1.2 * len(runs), max(3.5, 1.6 + 0.2 * len(checks))), layout="constrained")
    colors = plt.get_cmap("RdYlGn").with_extremes(bad="0.85")
    image = ax.imshow(np.ma.masked_invalid(shares), cmap=colors, vmin=0, vmax=1, aspect="auto")
    for row, cells in enumerate(outcomes):
        for column, text in enumerate(cells):
            ax.text(column, row, text or "-", ha="center", va="center", fontsize=6)
    labels = [check_label(check, kinds[check], status.get(check, "not tested")) for check in checks]
    ax.set_yticks(range(len(checks)), labels, fontsize=6)
    ax.set_xticks(range(len(runs)), runs, rotation=30, ha="right")
    ax.tick_params(length=0)
    ax.grid(False)
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02,
                 label="share of seed resamples in which\nthe check holds (mean over offsets)")
    ax.set_title("Every check in every run (grey: not measured), [its replication]",
                 fontsize=9)
    return fig
