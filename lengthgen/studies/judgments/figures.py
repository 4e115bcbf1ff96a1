"""Forest plots: a claim's primary statistic, mean and 95% interval over seeds, in every condition at every K, with
its threshold and baseline; and one secondary statistic the same way (rope's accuracy at 32x over the robustness
settings)."""

import matplotlib.pyplot as plt
import pandas as pd

from lengthgen.checks.judgment import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, UNTESTABLE
from lengthgen.experiments.claims import CHANCE, Claim

VERDICT_COLORS = {HOLDS: "tab:green", DOES_NOT_HOLD: "tab:red", INCONCLUSIVE: "tab:orange", UNTESTABLE: "0.6"}


def ordered_rows(rows: pd.DataFrame, conditions: list[str]) -> pd.DataFrame:
    """The rows by condition (in ``conditions``' order), then K: the forest's rows top to bottom."""
    rank = {name: position for position, name in enumerate(conditions)}
    return rows.assign(rank=rows["condition"].map(rank)).sort_values(["rank", "offset"]).reset_index(drop=True)


UNTESTABLE_TEXT = "untestable (so labelled): a precondition fails, no value drawn"


def draw_intervals(ax, rows: pd.DataFrame, colors: list[str]) -> None:
    """A point and interval per row; an untestable row none, its label saying so, so that no one reads it as a value."""
    untestable = [getattr(row, "verdict", None) == UNTESTABLE for row in rows.itertuples()]
    for y, (row, color, skip) in enumerate(zip(rows.itertuples(), colors, untestable)):
        if not skip:
            ax.errorbar(row.mean, y, xerr=[[row.mean - row.ci_low], [row.ci_high - row.mean]], fmt="o",
                        color=color, capsize=2, markersize=4)
    labels = [f"{row.condition}, K={row.offset}" + (": untestable" if skip else "")
              for row, skip in zip(rows.itertuples(), untestable)]
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    for y in range(1, len(rows)):  # a thin line between conditions
        if rows["condition"].iloc[y] != rows["condition"].iloc[y - 1]:
            ax.axhline(y - 0.5, color="0.85", linewidth=0.6)


def forest_plot(claim: Claim, judgments: pd.DataFrame, conditions: list[str]) -> plt.Figure:
    """Every condition's judgment of ``claim``: a point and interval per (condition, K), coloured by its verdict;
    the threshold (dashed) and the baseline (grey crosses) drawn."""
    rows = ordered_rows(judgments[judgments["claim"] == claim.name], conditions)
    fig, ax = plt.subplots(figsize=(9.0, 1.4 + 0.24 * len(rows)), layout="constrained")
    draw_intervals(ax, rows, [VERDICT_COLORS[verdict] for verdict in rows["verdict"]])
    baseline = ax.scatter(rows["baseline"], range(len(rows)), marker="x", color="0.45", s=18, zorder=3,
                          label=f"baseline: {claim.baseline.label}")
    for threshold in rows["threshold"].unique():  # one per task: chance differs between vocabularies
        ax.axvline(threshold, color="black", linestyle="--", linewidth=0.8)
    if claim.rule.log_scale:
        ax.set_xscale("log")
    ax.set_xlabel(claim.measured, fontsize=8)
    ax.set_title(f"{claim.says}: rule {claim.rule.comparison} threshold (dashed)"
                 + ("" if claim.baseline.label != CHANCE else "; chance = baseline"), fontsize=8)
    handles = [plt.Line2D([], [], marker="" if verdict == UNTESTABLE else "o", linestyle="", color=color,
                          label=UNTESTABLE_TEXT if verdict == UNTESTABLE else verdict)
               for verdict, color in VERDICT_COLORS.items() if verdict in set(rows["verdict"])]
    ax.legend(handles=[*handles, baseline], fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def statistic_plot(rows: pd.DataFrame, conditions: list[str], label: str, title: str) -> plt.Figure:
    """One statistic's mean and interval per (condition, K), in ``conditions``' order."""
    rows = ordered_rows(rows[rows["condition"].isin(conditions)], conditions)
    fig, ax = plt.subplots(figsize=(9.0, 1.4 + 0.24 * len(rows)), layout="constrained")
    draw_intervals(ax, rows, ["tab:blue"] * len(rows))
    if rows.empty:  # the run evaluates no length that far
        ax.text(0.5, 0.5, "not measured under this config", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(label, fontsize=8)
    ax.set_title(title, fontsize=8)
    return fig
