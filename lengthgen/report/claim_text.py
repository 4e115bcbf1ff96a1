"""Every claim in words from the judgments tables: its first-screen sentence, claims-table row, page verdict line."""

import pandas as pd

from lengthgen.checks.check import COMPARISONS
from lengthgen.checks.judgment import (DOES_NOT_HOLD, HOLDS, IN_PART, INCONCLUSIVE, MIN_SEEDS, UNTESTABLE,
                                       across_offsets, offsets_text, plain, replication, robustness)
from lengthgen.checks.rule_history import (AFTER, BEFORE, NOT_RECORDED, REVISED_AFTER, UNRECORDED_REVISED_AFTER,
                                           rule_timing)
from lengthgen.experiments.claims import CHANCE, Claim
from lengthgen.experiments.sections import markdown, span
from lengthgen.studies.judgments.judge import THIS_RUN
NEEDS = {">=": "at least", ">": "above", "<=": "at most"}  # what a rule's comparison asks of the mean, in words
# Whether the confirmation runs seen before the rules were last revised test a claim blind: its own rule's timing
# says, as a rule fixed before any data it judges was seen is blind to them
BLIND = {BEFORE: "still a blind test: this claim's rule predates their data", REVISED_AFTER: "not blind",
         AFTER: "not blind", UNRECORDED_REVISED_AFTER: "not blind", NOT_RECORDED: "blind or not: not recorded"}


def capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def number(value: float) -> str:
    """Three significant digits, or up to six where three would round a value that is not 1 to 1 (a share of 0.9999
    is not all); a tiny logit change in scientific notation."""
    if pd.isna(value):
        return "n/a"
    if value != 0 and abs(value) < 1e-3:
        return f"{value:.2e}"
    text, digits = f"{value:.3g}", 3
    while text == "1" and value != 1 and digits < 6:
        digits += 1
        text = f"{value:.{digits}g}"
    return text


def thresholds_text(rows: pd.DataFrame) -> str:
    """A claim's threshold in this run, and the conditions' whose differ (a threshold of chance follows the
    vocabulary): ``0.312 (0.625 in small_vocab)``."""
    by_condition = rows.drop_duplicates("condition").set_index("condition")["threshold"]
    here = by_condition.get(THIS_RUN, by_condition.iloc[0])
    others = ", ".join(f"{number(value)} in {name}" for name, value in by_condition.items() if value != here)
    return number(here) + (f" ({others})" if others else "")


def of_claim(frame: pd.DataFrame, claim: Claim, condition: str | None = None) -> pd.DataFrame:
    rows = frame[frame["claim"] == claim.name]
    return rows if condition is None else rows[rows["condition"] == condition].sort_values("offset")


def per_offset(values, offsets) -> str:
    """``0.683 / 0.958 / 0.935 at K=1 / 2 / 3``, or ``0.683 at K=1``."""
    return per_offset_text([number(value) for value in values], offsets)


def per_offset_text(texts: list[str], offsets) -> str:
    offsets = list(offsets)
    return " / ".join(texts) + " at K=" + " / ".join(str(int(k)) for k in offsets) if offsets else "not measured"


def mean_and_interval(row) -> str:
    """``0.683 [0.633, 0.733]``: a row's mean over seeds with its 95% seed-bootstrap interval."""
    return f"{number(row.mean)} [{number(row.ci_low)}, {number(row.ci_high)}]"


def with_intervals(rows: pd.DataFrame) -> str:
    """``0.683 [0.633, 0.733] / 0.958 [0.908, 1] at K=1 / 2``: each K's mean over seeds with its 95% seed-bootstrap
    interval (a K with one seed has none)."""
    means = [mean_and_interval(row) if row.n_seeds >= MIN_SEEDS else number(row.mean) for row in rows.itertuples()]
    return per_offset_text(means, rows["offset"])


def baseline_text(claim: Claim, rows: pd.DataFrame) -> str:
    """Its label and value: K by K where it is a statistic, else once (chance, or a fixed value)."""
    values = rows["baseline"] if claim.baseline.statistic else rows["baseline"].iloc[:1]
    return f"{claim.baseline.label} {' / '.join(map(number, values))}"


def measured_at(claim: Claim, rows: pd.DataFrame, config: dict) -> str:
    """``, measured at K=1, 2 only (transformer.offsets)`` where the claim's experiment runs fewer K than the sweep."""
    key = f"{claim.page}.offsets" if "offsets" in (config.get(claim.page) or {}) else f"the {claim.page} experiment"
    return f", measured at {offsets_text(rows['offset'])} only ({key})" if set(config["sweep"]["offset"]) - set(
        rows["offset"]) else ""


def this_run(secondary: pd.DataFrame, statistic: str) -> pd.DataFrame:
    """The secondary statistic ``statistic``'s rows of this run, by offset."""
    return secondary[(secondary["statistic"] == statistic) & (secondary["condition"] == THIS_RUN)].sort_values("offset")


def counterpart(claim: Claim, secondary: pd.DataFrame) -> str:
    """``; learned accuracy at 4x ... 0.0592 to 0.0625 over K``: the other encoding's mean over seeds, lowest and
    highest over K, where the claim names one."""
    rows = this_run(secondary, claim.counterpart)
    over = " over K" if rows["offset"].nunique() > 1 else ""
    return f"; {claim.counterpart.split(': ', 1)[-1]} {span(rows['mean'], number)}{over}" if len(rows) else ""


def said_beside(claim: Claim, secondary: pd.DataFrame) -> str:
    """``; their alignment with K (...) 0.942 [0.9, 0.98] / 0.996 [0.99, 1] at K=1 / 2``: the part of the claim its
    primary does not test, each K's mean with its interval, as the primary's."""
    if not claim.beside:
        return ""
    statistic, words = claim.beside
    rows = this_run(secondary, statistic)
    return f"; {words} {with_intervals(rows)}" if len(rows) else ""


def verdict_and_evidence(judgments: pd.DataFrame, secondary: pd.DataFrame, claim: Claim,
                         config: dict) -> tuple[str, str]:
    """The claim's verdict in this run (its K where fewer than the sweep's), and the evidence: number and baseline,
    the other encoding's, what the claim needs where it fails, a rival that does better, runs, settings."""
    rows = of_claim(judgments, claim, THIS_RUN)
    means = with_intervals(rows)
    notes = ("" if (rows["verdict"] == HOLDS).all()
             else f"; the claim needs {NEEDS[claim.rule.comparison]} {number(rows['threshold'].iloc[0])}")
    notes += undecided(rows)
    base = (config.get(claim.page) or {}).get("rope_base")  # an experiment's own rotary base, unlike the sweep's
    if base:  # a base >= 1 makes the rotary basis over the training offsets singular: why an experiment lowers it
        why = (": at each base of 1 or more that its appendix sweeps, the rotary features over the training offsets "
               "are singular" if base < 1 else "")
        notes += f"; tested at rotary base {base:g}, not the {config['model']['rope_base']:g} of the other claims{why}"
    clears = COMPARISONS[claim.rule.comparison](rows["mean"], rows["baseline"]) & (rows["mean"] != rows["baseline"])
    rival = (f"{capitalized(claim.baseline.label)} ({claim.baseline.rival}) does better at "
             f"{offsets_text(rows.loc[~clears, 'offset'])}. "
             if claim.baseline.rival and not clears.all() else "")
    robust = robustness_text(judgments, claim)
    return (f"{across_offsets(rows)}{measured_at(claim, rows, config)}",
            f"{capitalized(claim.measured)}: {means} ({baseline_text(claim, rows)}{notes})"
            f"{counterpart(claim, secondary)}{said_beside(claim, secondary)}. {rival}"
            f"Confirmation runs: {confirmation_text(judgments, claim)}."
            + (f" Robustness: {robust}." if robust else ""))


def undecided(rows: pd.DataFrame) -> str:
    """``; inconclusive at K=1: its interval contains 0.1``, per K the seeds cannot tell: a mean past the threshold
    there is no failure, since the interval reaches both sides of it."""
    return "".join(f"; inconclusive at K={row.offset}: " + (
        f"its interval contains {number(row.threshold)}" if row.n_seeds >= MIN_SEEDS else "one seed")
        for row in rows[rows["verdict"] == INCONCLUSIVE].itertuples())


def mixed(verdicts: list[str]) -> str:
    """``does not hold in 2, inconclusive in 1``: the runs that do not hold, by verdict, where the runs do not all
    agree; "" where they do."""
    judged = [plain(verdict) for verdict in verdicts if plain(verdict) != UNTESTABLE]  # those replication counts apart
    counts = pd.Series(judged, dtype=object).value_counts(sort=False)
    return "" if len(counts) < 2 else ", ".join(f"{verdict} in {count}" for verdict, count in counts.items()
                                               if verdict != HOLDS)


# Each verdict said of one claim and of several: "1 holds", "4 do not hold"
COUNTED = {HOLDS: ("holds", "hold"), IN_PART: ("holds in part", "hold in part"),
           DOES_NOT_HOLD: ("does not hold", "do not hold"), INCONCLUSIVE: ("is inconclusive", "are inconclusive"),
           UNTESTABLE: ("is untestable", "are untestable")}


def tally(judgments: pd.DataFrame, claims: tuple[Claim, ...]) -> str:
    """``Of the paper's 8 claims, 5 hold, 1 holds in part and 2 do not hold; of this pipeline's 2 (its control and its
    prediction), 1 holds and 1 does not hold, in this run (each below with its numbers).``: the verdicts at a glance,
    in the verdicts' order, the paper's claims apart from what this pipeline adds; a claim this config does not run
    is not counted."""
    run = [(claim, plain(across_offsets(rows))) for claim in claims
           if len(rows := of_claim(judgments, claim, THIS_RUN))]
    paper = [verdict for claim, verdict in run if not claim.beyond]
    added = [(claim.beyond, verdict) for claim, verdict in run if claim.beyond]
    if paper and added:
        kinds = " and ".join(f"its {kind}" for kind, _ in added)
        return (f"Of the paper's {len(paper)} {claims_word(paper)}, {counted(paper)}; of this pipeline's {len(added)} "
                f"({kinds}), {counted([verdict for _, verdict in added])}, in this run (each below with its numbers).")
    verdicts = [verdict for _, verdict in run]
    return (f"Of {len(verdicts)} {claims_word(verdicts)}, {counted(verdicts)} in this run (each below with its "
            "numbers)." if verdicts else "")


def counted(verdicts: list[str]) -> str:
    """``5 hold, 1 holds in part and 2 do not hold``: how many of ``verdicts`` each verdict is, in the verdicts' order."""
    parts = [f"{count} {COUNTED[verdict][count > 1]}" for verdict in COUNTED if (count := verdicts.count(verdict))]
    return ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else "".join(parts)


def claims_word(verdicts: list[str]) -> str:
    return "claims" if len(verdicts) > 1 else "claim"


def claim_sentence(judgments: pd.DataFrame, secondary: pd.DataFrame, claim: Claim, config: dict) -> str:
    """One plain sentence: what was measured, the number with its unit and baseline, the verdict, where it fails."""
    if of_claim(judgments, claim, THIS_RUN).empty:
        return f"- **{capitalized(claim.says)}:** not run under this config."
    return "- **{}{}: {}.** {}".format(capitalized(claim.says), beyond_tag(claim),
                                       *verdict_and_evidence(judgments, secondary, claim, config))


def beyond_tag(claim: Claim) -> str:
    """`` (this pipeline's control, beyond the paper)`` after a claim the paper does not make; else nothing."""
    return f" (this pipeline's {claim.beyond}, beyond the paper)" if claim.beyond else ""


def confirmation_text(judgments: pd.DataFrame, claim: Claim, short: bool = False) -> str:
    """``holds in 3 of 3 runs whose data were seen before the rules were last revised (not blind); out of sample
    (unseen seeds): holds``; ``short`` for a cell."""
    runs = of_claim(judgments, claim)
    runs = runs[runs["kind"] == "confirmation"]
    seen = [across_offsets(rows) for _, rows in runs[runs["seen"]].groupby("condition", sort=False)]
    if short:
        parts = [replication(seen, runs="seen runs")] if seen else []
    else:
        notes = [BLIND[rule_timing(claim.page, rule=claim.threshold_name)], mixed(seen)]
        parts = [replication(seen, runs="runs whose data were seen before the rules were last revised")
                 + f" ({'; '.join(note for note in notes if note)})"] if seen else []
    parts += [f"out of sample: {plain(across_offsets(rows))}" if short else
              f"out of sample ({name.replace('_', ' ')}): {across_offsets(rows)}"
              for name, rows in runs[~runs["seen"]].groupby("condition", sort=False)]
    return "; ".join(parts) or "no confirmation runs"


def robustness_text(judgments: pd.DataFrame, claim: Claim) -> str:
    """``holds at 9 of 11 settings, not fully at ...``, this run one of the settings; "" without the study."""
    rows = of_claim(judgments, claim)
    points = rows[rows["kind"] == "robustness"]
    if points.empty:
        return ""
    # this run is a setting of the study too: named by its settings, "not fully at this run's settings"
    return robustness({f"{THIS_RUN}'s settings": rows[rows["condition"] == THIS_RUN],
                       **{name: group for name, group in points.groupby("condition", sort=False)}})


def rule_text(claim: Claim, rows: pd.DataFrame) -> str:
    """The claim's rule and when it was fixed: ``>= 0.312 (5x chance), set before, revised after the data``; a
    threshold set against chance says how many times chance it is."""
    threshold = number(rows["threshold"].iloc[0]) if len(rows) else "n/a"
    if len(rows) and claim.baseline.label == CHANCE:
        threshold += f" ({rows['threshold'].iloc[0] / rows['baseline'].iloc[0]:.3g}x chance)"
    return f"{claim.rule.comparison} {threshold}, {rule_timing(claim.page, rule=claim.threshold_name)}"


def claims_table(judgments: pd.DataFrame, claims: tuple[Claim, ...], pages: list[str]) -> pd.DataFrame:
    """One row per claim: this run's means per K, its baseline, rule, verdict, runs and settings, its page."""
    rows = []
    for claim in claims:
        here = of_claim(judgments, claim, THIS_RUN)
        rows.append({
            "claim": claim.says, "this run (mean over seeds)": per_offset(here["mean"], here["offset"]),
            "baseline": baseline_text(claim, here) if len(here) else "-", "rule": rule_text(claim, here),
            "verdict": plain(across_offsets(here)) if len(here) else "not run",
            "confirmation runs": confirmation_text(judgments, claim, short=True),
            "robustness": robustness_text(judgments, claim).split(",")[0] or "not in the study",
            "page": f"[{claim.page}](experiments/{claim.page}.md)" if claim.page in pages else "not run"})
    return pd.DataFrame(rows)


def interval_table(rows: pd.DataFrame, first: dict | None = None, last: dict | None = None) -> str:
    """Per row of ``rows``: the ``first`` columns, condition, K, seeds, mean [95% interval], the ``last`` columns."""
    return markdown({
        # the conditions by their config names, as the first screen and the robustness page name them
        **(first or {}), "condition": rows["condition"], "K": rows["offset"].astype(str),
        "seeds": rows["n_seeds"].astype(str),
        "mean [95% interval]": [mean_and_interval(row) for row in rows.itertuples()], **(last or {})})


def judgment_table(rows: pd.DataFrame) -> str:
    """A claim's judgments, one row per (condition, K), with the seeds clearing its rule, its baseline, its verdict."""
    return interval_table(rows, last={
        "seeds clearing": [f"{row.seeds_clearing} of {row.n_seeds}" for row in rows.itertuples()],
        "baseline": rows["baseline"].map(number), "verdict": rows["verdict"]})


def secondary_table(secondary: pd.DataFrame, claim: Claim) -> str:
    """The claim's secondary statistics in every condition, mean and interval per K; "" where it has none."""
    rows = secondary[secondary["statistic"].isin(set(claim.shown()) - {claim.baseline.statistic})]
    return interval_table(rows, first={"statistic": rows["statistic"]}) if len(rows) else ""
