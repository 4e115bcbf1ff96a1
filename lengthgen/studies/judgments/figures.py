"""Forest plots: a claim's primary statistic (mean, 95% interval over seeds) per condition and K with its threshold
and baseline, and a secondary statistic the same way."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from lengthgen.checks.judgment import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, UNTESTABLE
from lengthgen.experiments.claims import CHANCE, Claim
from lengthgen.report.claim_text import thresholds_text

VERDICT_COLORS = {HOLDS: "tab:green", DOES_NOT_HOLD: "tab:red", INCONCLUSIVE: "tab:orange", UNTESTABLE: "0.6"}
UNTESTABLE_TEXT = "untestable (so labelled): a precondition fails, no value drawn"


def interval_axes(rows: pd.DataFrame, conditions: list[str], colors, label: str, title: str):
    """One point and interval per (condition, K), in ``conditions``' order; none for an untestable row, so labelled."""
    rank = {name: position for position, name in enumerate(conditions)}
    rows = rows.assign(rank=rows["condition"].map(rank)).sort_values(["rank", "offset"]).reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(9.0, 1.4 + 0.24 * len(rows)), layout="constrained")
    untestable = [getattr(row, "verdict", None) == UNTESTABLE for row in rows.itertuples()]
    for y, (row, color, skip) in enumerate(zip(rows.itertuples(), colors(rows), untestable)):
        if not skip:
            ax.errorbar(row.mean, y, xerr=[[row.mean - row.ci_low], [row.ci_high - row.mean]], fmt="o",
                        color=color, capsize=2, markersize=4)
    ax.set_yticks(range(len(rows)), [f"{row.condition}, K={row.offset}" + (": untestable" if skip else "")
                                     for row, skip in zip(rows.itertuples(), untestable)], fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    for y in range(1, len(rows)):  # a thin line between conditions
        if rows["condition"].iloc[y] != rows["condition"].iloc[y - 1]:
            ax.axhline(y - 0.5, color="0.85", linewidth=0.6)
    ax.set_xlabel(label, fontsize=8)
    ax.set_title(title, fontsize=8)
    return fig, ax, rows


def forest_plot(claim: Claim, judgments: pd.DataFrame, conditions: list[str]) -> plt.Figure:
    """Every condition's judgment of ``claim`` coloured by its verdict, its threshold (dashed) and baseline (x)."""
    fig, ax, rows = interval_axes(
        judgments[judgments["claim"] == claim.name], conditions,
        lambda rows: [VERDICT_COLORS[verdict] for verdict in rows["verdict"]], claim.measured,
        f"{claim.says}: rule {claim.rule.comparison} threshold (dashed)"
        + ("" if claim.baseline.label != CHANCE else "; chance = baseline"))
    baseline = ax.scatter(rows["baseline"], range(len(rows)), marker="x", color="0.45", s=18, zorder=3,
                          label=f"baseline: {claim.baseline.label}")
    # each row's own threshold across its row alone: chance, and so a threshold, differs between vocabularies
    rows_at = np.arange(len(rows))
    ax.vlines(rows["threshold"], rows_at - 0.45, rows_at + 0.45, color="black", linestyle="--", linewidth=0.8)
    # the thresholds in words, by condition where they differ (none where the claim was not run)
    threshold = [plt.Line2D([], [], color="black", linestyle="--", linewidth=0.8,
                            label=f"threshold {thresholds_text(rows)}")] if len(rows) else []
    if claim.rule.log_scale:
        ax.set_xscale("log")
    handles = [plt.Line2D([], [], marker="" if verdict == UNTESTABLE else "o", linestyle="", color=color,
                          label=UNTESTABLE_TEXT if verdict == UNTESTABLE else verdict)
               for verdict, color in VERDICT_COLORS.items() if verdict in set(rows["verdict"])]
    ax.legend(handles=[*handles, *threshold, baseline], fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def statistic_plot(rows: pd.DataFrame, conditions: list[str], label: str, title: str,
                   chance: float | None = None) -> plt.Figure:
    """One statistic's mean and interval per (condition, K), in ``conditions``' order, none where a ``verdict`` column
    says untestable; an accuracy with its ``chance`` dashed, on an axis from 0, so that a setting at chance reads as
    one."""
    fig, ax, rows = interval_axes(rows[rows["condition"].isin(conditions)], conditions,
                                  lambda rows: ["tab:blue"] * len(rows), label, title)
    if rows.empty:  # the run evaluates no length that far
        ax.text(0.5, 0.5, "not measured under this config", ha="center", va="center", transform=ax.transAxes)
    if chance is not None:
        ax.axvline(chance, color="0.45", linestyle="--", linewidth=0.8, label=f"chance {chance:.3g}")
        ax.set_xlim(0, 1.02)
    if "verdict" in rows and (rows["verdict"] == UNTESTABLE).any():
        ax.plot([], [], linestyle="", label=UNTESTABLE_TEXT)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig
