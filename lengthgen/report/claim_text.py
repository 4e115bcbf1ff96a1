"""Every claim in words, read from the judgments (``claim_judgments``, ``claim_secondary``): its sentence on the first
screen, its row of the claims table, its page's verdict block. Nothing here judges: every verdict is the judgments
table's, every number a column of it.
"""

import pandas as pd

from lengthgen.checks.check import COMPARISONS
from lengthgen.checks.judgment import across_offsets, offsets_text, plain, replication, robustness
from lengthgen.checks.rule_history import rule_timing
from lengthgen.experiments.claims import CHANCE, Claim
from lengthgen.studies.judgments.judge import THIS_RUN

DEFAULT_SETTING = "default"  # this run, as one of the robustness settings


def capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def number(value: float) -> str:
    """Three significant digits; a tiny logit change in scientific notation."""
    if pd.isna(value):
        return "n/a"
    return f"{value:.2e}" if value != 0 and abs(value) < 1e-3 else f"{value:.3g}"


def of_claim(frame: pd.DataFrame, claim: Claim, condition: str | None = None) -> pd.DataFrame:
    rows = frame[frame["claim"] == claim.name]
    return rows if condition is None else rows[rows["condition"] == condition].sort_values("offset")


def per_offset(values, offsets) -> str:
    """``0.683 / 0.958 / 0.935 at K=1 / 2 / 3``, or ``0.683 at K=1``."""
    offsets = list(offsets)
    return (" / ".join(number(value) for value in values) + " at K=" + " / ".join(str(int(k)) for k in offsets)
            if offsets else "not measured")


def baseline_text(claim: Claim, rows: pd.DataFrame) -> str:
    if claim.baseline.label == CHANCE:
        return f"chance {number(rows['baseline'].iloc[0])}" if len(rows) else CHANCE
    if claim.baseline.value is not None:
        return f"{claim.baseline.label} ({number(claim.baseline.value)})"
    return f"{claim.baseline.label} {' / '.join(number(value) for value in rows['baseline'])}"


def rule_text(claim: Claim, rows: pd.DataFrame) -> str:
    threshold = number(rows["threshold"].iloc[0]) if len(rows) else "n/a"
    return f"{claim.rule.comparison} {threshold}, {rule_timing(claim.page, rule=claim.threshold_name)}"


def confirmation_verdicts(judgments: pd.DataFrame, claim: Claim, seen: bool | None = None) -> list[str]:
    runs = of_claim(judgments, claim)
    runs = runs[runs["kind"] == "confirmation"]
    if seen is not None:
        runs = runs[runs["seen"] == seen]
    return [across_offsets(rows) for _, rows in runs.groupby("condition", sort=False)]


def replication_text(judgments: pd.DataFrame, claim: Claim, short: bool = False) -> str:
    """``holds in 3 of 3 runs``, over the confirmation runs whose data had been seen, and the out-of-sample runs'
    verdicts after it (``short``: their verdict words alone, without the K)."""
    seen = confirmation_verdicts(judgments, claim, seen=True)
    unseen = of_claim(judgments, claim)
    unseen = unseen[(unseen["kind"] == "confirmation") & ~unseen["seen"]]
    parts = [replication(seen, runs="seen runs" if short else "runs seen before the rules")] if seen else []
    for name, rows in unseen.groupby("condition", sort=False):
        parts.append(f"out of sample: {plain(across_offsets(rows))}" if short
                     else f"out of sample ({name.replace('_', ' ')}): {across_offsets(rows)}")
    return "; ".join(parts) or "no confirmation runs"


def robustness_text(judgments: pd.DataFrame, claim: Claim) -> str:
    """``holds at 9 of 11 settings; not at ...``, this run counted as the default setting; "" without the study."""
    rows = of_claim(judgments, claim)
    points = rows[rows["kind"] == "robustness"]
    if points.empty:
        return ""
    settings = {DEFAULT_SETTING: rows[rows["condition"] == THIS_RUN]}
    settings.update({name: group for name, group in points.groupby("condition", sort=False)})
    return robustness(settings)


def verdict_here(judgments: pd.DataFrame, claim: Claim) -> str:
    rows = of_claim(judgments, claim, THIS_RUN)
    return across_offsets(rows) if len(rows) else "not run under this config"


def claim_sentence(judgments: pd.DataFrame, claim: Claim) -> str:
    """One plain sentence: what was measured, the number with its baseline, the verdict, and where it fails."""
    rows = of_claim(judgments, claim, THIS_RUN)
    if rows.empty:
        return f"- **{capitalized(claim.says)}:** not run under this config."
    return (f"- **{capitalized(claim.says)}: {verdict_here(judgments, claim)}.** "
            f"{capitalized(claim.measured)}: {per_offset(rows['mean'], rows['offset'])} "
            f"(rule {claim.rule.comparison} {number(rows['threshold'].iloc[0])}; {baseline_text(claim, rows)}). "
            f"{rival_text(claim, rows)}{elsewhere(judgments, claim)}")


def rival_text(claim: Claim, rows: pd.DataFrame) -> str:
    """``The ranking account does better at K=1, 2. ``: where a rival account's mean beats the claim's own."""
    if not claim.baseline.rival:
        return ""
    better = rows.loc[~COMPARISONS[claim.rule.comparison](rows["mean"], rows["baseline"]) | (rows["mean"] == rows["baseline"]),
                      "offset"]
    return f"{capitalized(claim.baseline.label)} does better at {offsets_text(better)}. " if len(better) else ""


def elsewhere(judgments: pd.DataFrame, claim: Claim) -> str:
    """``Confirmation runs: ... Robustness: ...``, each where the run has them."""
    robust = robustness_text(judgments, claim)
    return (f"Confirmation runs: {replication_text(judgments, claim)}."
            + (f" Robustness: {robust}." if robust else ""))


def claims_table(judgments: pd.DataFrame, claims: list[Claim], pages: list[str]) -> pd.DataFrame:
    """One row per claim: this run's means per K, its baseline, rule, verdict, runs and settings, its page."""
    rows = []
    for claim in claims:
        here = of_claim(judgments, claim, THIS_RUN)
        rows.append({
            "claim": claim.says, "this run (mean over seeds)": per_offset(here["mean"], here["offset"]),
            "baseline": baseline_text(claim, here) if len(here) else "-", "rule": rule_text(claim, here),
            "verdict": verdict_here(judgments, claim), "confirmation runs": replication_text(judgments, claim, short=True),
            "robustness": robustness_text(judgments, claim).split(";")[0] or "not in the study",
            "page": f"[{claim.page}](experiments/{claim.page}.md)" if claim.page in pages else "not run"})
    return pd.DataFrame(rows)


def judgment_table(rows: pd.DataFrame) -> str:
    """A claim's judgments, one row per (condition, K), as markdown."""
    return pd.DataFrame({
        "condition": rows["condition"].str.replace("_", " "), "K": rows["offset"].astype(str),
        "seeds": rows["n_seeds"].astype(str),
        "mean [95% interval]": [f"{number(row.mean)} [{number(row.ci_low)}, {number(row.ci_high)}]"
                                for row in rows.itertuples()],
        "seeds clearing": [f"{row.seeds_clearing} of {row.n_seeds}" for row in rows.itertuples()],
        "baseline": rows["baseline"].map(number), "verdict": rows["verdict"],
    }).to_markdown(index=False, disable_numparse=True)


def secondary_table(secondary: pd.DataFrame, claim: Claim) -> str:
    """The claim's secondary statistics in every condition, mean and interval per K; "" where it has none."""
    names = [name for name in claim.secondary if name != claim.baseline.statistic]
    rows = secondary[secondary["statistic"].isin(names)]
    if rows.empty:
        return ""
    return pd.DataFrame({
        "statistic": rows["statistic"], "condition": rows["condition"].str.replace("_", " "),
        "K": rows["offset"].astype(str), "seeds": rows["n_seeds"].astype(str),
        "mean [95% interval]": [f"{number(row.mean)} [{number(row.ci_low)}, {number(row.ci_high)}]"
                                for row in rows.itertuples()],
    }).to_markdown(index=False, disable_numparse=True)
