"""Figure of the replication: every check in every run, by the share of seed resamples in which it holds."""

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from lengthgen.plots import save_figure
from lengthgen.replication import replication_verdict

def check_grid(table: pd.DataFrame) -> tuple[list[tuple[str, str]], list[str], np.ndarray, list[list[str]]]:
    """(checks, runs, share of resamples in which each check holds, mean over its offsets (NaN: not measured),
    its outcome in each run)."""
    runs = list(dict.fromkeys(table["run"]))
    checks = list(dict.fromkeys(zip(table["family"], table["check"])))
    shares = np.full((len(checks), len(runs)), np.nan)
    outcomes = [[""] * len(runs) for _ in checks]
    for (family, check, run), rows in table.groupby(["family", "check", "run"], sort=False):
        row, column = checks.index((family, check)), runs.index(run)
        shares[row, column] = rows["holds_fraction"].mean()
        outcomes[row][column] = rows["outcome"].iloc[0]
    return checks, runs, shares, outcomes


def plot_replication(table: pd.DataFrame, path, dpi: int) -> None:
    checks, runs, shares, outcomes = check_grid(table)
    confirmations = table[table["replicates"] != ""]
    status = confirmations.groupby(["family", "check"], sort=False)["replicates"].apply(
        lambda replicates: replication_verdict(replicates == "yes"))
    fig, ax = plt.subplots(figsize=(7.5 + 1.2 * len(runs), 1.6 + 0.2 * len(checks)), layout="constrained")
    colors = plt.get_cmap("RdYlGn").copy()
    colors.set_bad("0.85")
    image = ax.imshow(np.ma.masked_invalid(shares), cmap=colors, vmin=0, vmax=1, aspect="auto")
    for row, cells in enumerate(outcomes):
        for column, text in enumerate(cells):
            ax.text(column, row, text or "-", ha="center", va="center", fontsize=6)
    labels = [f"{family}: {textwrap.shorten(check, 80, placeholder='...')} "
              f"[{status.get((family, check), 'not tested')}]" for family, check in checks]
    ax.set_yticks(range(len(checks)), labels, fontsize=6)
    ax.set_xticks(range(len(runs)), runs, rotation=30, ha="right")
    ax.tick_params(length=0)
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02,
                 label="share of seed resamples in which the check holds (mean over offsets)")
    ax.set_title("Every check in every run (grey: not measured), [its replication]",
                 fontsize=9)
    save_figure(fig, path, dpi)
