"""Replication (lengthgen/studies/confirmation/replication.py): matching checks across configs, the verdict rule and its causes."""

import pandas as pd
import pytest

from conftest import markdown_rows
from lengthgen.checks.check import COMPARISONS, KEY, check, with_keys, with_verdicts
from lengthgen.studies.confirmation.figures import replication_figure
from lengthgen.studies.confirmation import section as prose
from lengthgen.studies.confirmation.replication import (EXPLORATORY, SPREAD_KEY, annotated_checks, claim_replication, compare_runs, margin,
                                   replication_table)
from lengthgen.checks.rule_history import RULE_HISTORY, history_markdown
from lengthgen.studies.confirmation.tables import REPLICATION
from lengthgen.tables.io import to_arrow

THRESHOLD = 0.5


def row(experiment, claim, statistic, offset, value, holds_fraction, *, failing=None, seeds=5, kind="evidence",
        rule=None, comparison=">=", threshold=THRESHOLD):
    """One check of a constructed run of ``seeds`` seeds, the share of seed resamples in which it holds and on how
    many seeds it fails computed on each alone (``failing``; None: no single seed gives it a value)."""
    return {"experiment": experiment, "holds_fraction": holds_fraction, "n_seeds": seeds,
            "seeds_checked": None if failing is None else seeds, "seeds_failing": failing,
            **check(claim, statistic, value, comparison, threshold, offset=offset, rule=rule, kind=kind)}


def run_tables(*rows):
    """(all_claims, claim_spread) of one run from ``row``s; a per-offset experiment (shift) has a section per
    offset, as the workflow writes it; the spread is +-0.02 around the value."""
    frame = pd.DataFrame(rows)
    per_offset = (frame["experiment"] == "shift") & frame["offset"].notna()
    sections = frame["experiment"].where(~per_offset, "shift_K" + frame["offset"].astype("Int64").astype(str))
    spread_columns = ["holds_fraction", "n_seeds", "seeds_checked", "seeds_failing"]
    checks = pd.concat([with_keys(group, *names).assign(**{name: group[name].to_numpy() for name in spread_columns})
                        for names, group in frame.groupby([frame["experiment"], sections], sort=False)],
                       ignore_index=True)
    claims = with_verdicts(checks.drop(columns=[*spread_columns, "per_seed"]))  # as all_claims.parquet has it
    spread = checks[SPREAD_KEY + spread_columns].assign(
        resamples=200, spread_low=checks["value"] - 0.02, spread_high=checks["value"] + 0.02,
        seeds_checked=checks["seeds_checked"].astype("Int64"), seeds_failing=checks["seeds_failing"].astype("Int64"))
    return claims, spread


def replicate(exploratory, confirmations, same_task=None):
    runs = {EXPLORATORY: run_tables(*exploratory), **{name: run_tables(*rows) for name, rows in confirmations.items()}}
    checks = annotated_checks(runs)
    comparison = compare_runs(checks, same_task or {name: False for name in confirmations})
    return checks, comparison, claim_replication(checks, comparison)


def only(comparison, run="other"):
    rows = comparison[comparison["run"] == run]
    assert len(rows) == 1
    return rows.iloc[0]


def test_margin_is_the_distance_to_the_threshold_on_the_passing_side_relative_to_it():
    assert margin(0.75, ">=", 0.5) == pytest.approx(0.5)
    assert margin(0.25, ">=", 0.5) == pytest.approx(-0.5)
    assert margin(1e-10, "<=", 1e-9) == pytest.approx(0.9)
    assert margin(-0.2, "<", 0.0) == pytest.approx(0.2)  # a zero threshold: absolute distance
    assert margin(0.8, "==", 1.0) == pytest.approx(-0.2) and margin(1.0, "==", 1.0) == 0.0
    assert pd.isna(margin(float("nan"), ">=", 0.5))


def test_a_check_is_matched_on_its_key_whatever_its_rule_text_says():
    # The run's numbers are in the rule's text only: the key is the same, so the checks are compared.
    _, comparison, claims = replicate(
        [row("generalization", "rope stays above chance", "rope: mean accuracy far out", 1, 0.9, 1.0, rule=">= 0.5 (n=128)")],
        {"other": [row("generalization", "rope stays above chance", "rope: mean accuracy far out", 1, 0.8, 1.0,
                       rule=">= 0.5 (n=96)")]})
    assert only(comparison)["replicates"] and claims.iloc[0]["replication"] == "holds"
    # Another statistic (a registry name with parameters is a name) is another check: nothing to compare.
    _, comparison, claims = replicate([row("variants", "no collapse", "rope@base=100: mean accuracy", 2, 0.9, 1.0)],
                                      {"other": [row("variants", "no collapse", "rope@base=1e6: mean accuracy", 2,
                                                     0.1, 0.0)]})
    assert comparison.empty and claims.iloc[0]["replication"] == "untestable"


def test_a_pooled_check_is_matched_with_the_pooled_check():
    _, comparison, _ = replicate([row("prop1", "mean field predicts", "largest error", None, 0.9, 1.0)],
                                 {"other": [row("prop1", "mean field predicts", "largest error", None, 0.1, 0.0)]})
    assert not only(comparison)["replicates"] and only(comparison)["exploratory_outcome"] == "holds"


def test_the_same_outcome_replicates():
    _, comparison, claims = replicate([row("generalization", "c", "s", 1, 0.9, 1.0)],
                                      {"other": [row("generalization", "c", "s", 1, 0.8, 1.0)]})
    assert only(comparison)["replicates"] and claims.iloc[0]["replication"] == "holds"


def test_a_flip_the_bootstrap_leaves_open_without_per_seed_counts_is_measurement():
    # A statistic no single seed gives a value (failing None): the bootstrap alone decides.
    _, comparison, claims = replicate([row("generalization", "c", "s", 1, 0.52, 0.6)],
                                      {"other": [row("generalization", "c", "s", 1, 0.45, 0.0)]})
    found = only(comparison)
    assert not found["replicates"] and found["cause"] == "measurement" and "open" in found["explanation"]
    assert found["basis"] == "open without a per-seed count"
    assert found["explanation"].endswith(
        "; exploratory K=1: 0.52 [0.5, 0.54], holds in 60% of resamples, no per-seed count, rule >= 0.5; other K=1: "
        "0.45 [0.43, 0.47], holds in 0% of resamples, no per-seed count, rule >= 0.5")
    assert claims.iloc[0]["replication"] == "does not hold" and claims.iloc[0]["causes"] == {"measurement": 1}


def test_compatible_shares_of_failing_seeds_and_an_open_outcome_are_measurement():
    # A minimum over seeds that one seed of five fails: 0 of 5 against 1 of 5 (Fisher p = 1), open.
    _, comparison, _ = replicate([row("generalization", "c", "s", 1, 0.9, 1.0, failing=0)],
                                 {"other": [row("generalization", "c", "s", 1, 0.3, 0.33, failing=1)]})
    found = only(comparison)
    assert found["cause"] == "measurement"
    assert "0 of 5 against 1 of 5 seeds fail, shares compatible with one rate (Fisher p = 1)" in found["explanation"]
    assert "other K=1: 0.3 [0.28, 0.32], holds in 33% of resamples, fails on 1 of 5 seeds alone" in found["explanation"]


def test_shares_that_differ_are_the_rule_when_the_miss_is_within_the_margin_else_the_claim():
    # 0 of 5 against 5 of 5 failing seeds (Fisher p = 0.008): the setting changed how many seeds fail.
    # The exploratory value clears 0.5 by 60% of it; missing it by 10% of it is the threshold's doing.
    _, near, _ = replicate([row("generalization", "c", "s", 1, 0.8, 1.0, failing=0)],
                           {"other": [row("generalization", "c", "s", 1, 0.45, 0.0, failing=5)]})
    assert only(near)["cause"] == "rule" and "shares that differ (Fisher p = 0.0079)" in only(near)["explanation"]
    assert "misses the threshold by up to 10% of it" in only(near)["explanation"]
    # Missing it by 90% of it, more than the exploratory margin: the effect is gone.
    _, far, _ = replicate([row("generalization", "c", "s", 1, 0.8, 1.0, failing=0)],
                          {"other": [row("generalization", "c", "s", 1, 0.05, 0.0, failing=5)]})
    assert only(far)["cause"] == "claim" and "clears it by 60% (median)" in only(far)["explanation"]
    # Shares that differ decide even where the bootstrap leaves the outcome open (a mean over seeds near the bar).
    _, open_mean, _ = replicate([row("generalization", "c", "s", 1, 0.8, 1.0, failing=0)],
                                {"other": [row("generalization", "c", "s", 1, 0.45, 0.3, failing=5)]})
    assert only(open_mean)["cause"] == "rule"


def test_compatible_shares_that_both_runs_decide_on_another_task_are_judged_by_the_margins():
    # 0 of 5 against 3 of 5 (Fisher p = 0.17): 5 seeds cannot tell the shares apart, but each run's seeds decide
    # its outcome, so it is not measurement.
    _, comparison, _ = replicate([row("generalization", "c", "s", 1, 0.8, 1.0, failing=0)],
                                 {"other": [row("generalization", "c", "s", 1, 0.45, 0.01, failing=3)]})
    found = only(comparison)
    assert found["cause"] == "rule" and "both runs decide their outcome on another task" in found["explanation"]


def test_fresh_seeds_of_the_same_task_are_measurement_only_when_the_shares_are_compatible():
    explored = [row("generalization", "c", "s", 1, 0.9, 1.0, failing=0)]
    # Decided in both runs, but 0 of 5 against 3 of 5 is one rate: the seeds alone turned it.
    _, compatible, _ = replicate(explored, {"other": [row("generalization", "c", "s", 1, 0.1, 0.0, failing=3)]},
                                 same_task={"other": True})
    assert only(compatible)["cause"] == "measurement" and "fresh seeds" in only(compatible)["explanation"]
    # 0 of 5 against 5 of 5 on the same task: not measurement by definition any more.
    _, different, _ = replicate(explored, {"other": [row("generalization", "c", "s", 1, 0.1, 0.0, failing=5)]},
                                same_task={"other": True})
    assert only(different)["cause"] == "rule"  # misses by 80%, the exploratory run clears by 80%


def test_a_real_non_pinning_seed_is_measurement_alone_but_not_when_it_recurs():
    # The small_vocab case: the learned head's mass in range (a minimum over seeds, >= 0.5) holds at every explored
    # offset; at K=4, one seed of five keeps 0.248 in range. Alone it is a share compatible with none (Fisher p = 1)
    # and open: measurement.
    statistic = "min over (seed, length) past the range of the mean attention mass in range"
    explored = [row("mechanics", "learned pins", statistic, offset, 0.62, 1.0, failing=0) for offset in (1, 2)]
    small_vocab = [row("mechanics", "learned pins", statistic, 4, 0.248, 0.33, failing=1)]
    _, alone, _ = replicate(explored, {"small_vocab": small_vocab})
    assert only(alone, "small_vocab")["cause"] == "measurement"
    # A non-pinning seed in another run too (fresh seeds, at K=1): a fixed share of seeds fails in several runs,
    # which more seeds would not remove; it misses by 50%, more than the 24% the exploratory run clears by: claim.
    fresh = [row("mechanics", "learned pins", statistic, 1, 0.3, 0.33, failing=1)]
    _, recurring, _ = replicate(explored, {"small_vocab": small_vocab, "fresh_seeds": fresh},
                                same_task={"small_vocab": False, "fresh_seeds": True})
    for run in ("small_vocab", "fresh_seeds"):
        found = only(recurring, run)
        assert found["cause"] == "claim" and "failing seeds recur in 2 runs of the study" in found["explanation"]
    assert "misses the threshold by up to 50% of it, the other clears it by 24%" in only(recurring, "small_vocab")[
        "explanation"]


def test_a_run_with_one_seed_leaves_the_cause_undecided():
    # 0 of 20 against 1 of 1 would differ (Fisher p = 0.048), and the miss is large, but one seed decides nothing.
    _, comparison, _ = replicate([row("generalization", "c", "s", 1, 0.8, 1.0, failing=0, seeds=20)],
                                 {"other": [row("generalization", "c", "s", 1, 0.05, 0.0, failing=1, seeds=1)]})
    found = only(comparison)
    assert found["cause"] == "measurement" and found["explanation"].startswith("undecided: a run has one seed")


def test_over_offsets_the_largest_miss_decides():
    # Missing by 10% at K=1 alone would be the rule (the exploratory run clears by 60%); missing by 90% at K=2 makes
    # it the claim: the worst offset, not the best, says whether the effect is there.
    explored = [row("generalization", "c", "s", offset, 0.8, 1.0, failing=0) for offset in (1, 2)]
    _, near, _ = replicate(explored, {"other": [row("generalization", "c", "s", 1, 0.45, 0.0, failing=5),
                                                row("generalization", "c", "s", 2, 0.8, 1.0, failing=0)]})
    assert only(near)["cause"] == "rule"
    _, mixed, _ = replicate(explored, {"other": [row("generalization", "c", "s", 1, 0.45, 0.0, failing=5),
                                                 row("generalization", "c", "s", 2, 0.05, 0.0, failing=5)]})
    found = only(mixed)
    assert found["cause"] == "claim" and "misses the threshold by up to 90% of it" in found["explanation"]
    assert "0 of 10 against 10 of 10 seeds fail" in found["explanation"]  # summed over the offsets compared


def test_the_worked_example_in_the_section_is_decided_by_the_rule():
    text = prose.worked_example()
    assert "as it is: **measurement**" in text and "at any offset: **claim**" in text
    assert "if 6 of the 10 seeds failed it: **claim**" in text and "(worst 0.45): **rule**" in text


def test_the_margins_come_from_the_comparison_and_threshold_columns_not_the_rule_text():
    # A rule text that names other numbers (or none): the threshold column decides the margins.
    rule = "<= 5 x chance = 9.99 (the text is only shown)"
    _, comparison, _ = replicate([row("generalization", "c", "s", 1, 0.8, 1.0, rule=rule)],
                                 {"other": [row("generalization", "c", "s", 1, 0.45, 0.0, rule="within tolerance")]})
    assert only(comparison)["cause"] == "rule"
    assert "misses the threshold by up to 10% of it" in only(comparison)["explanation"]
    # Below the threshold passes for a "<=" check: the same values, the other way round.
    _, comparison, _ = replicate([row("generalization", "c", "s", 1, 0.45, 1.0, comparison="<=")],
                                 {"other": [row("generalization", "c", "s", 1, 0.8, 0.0, comparison="<=")]})
    assert only(comparison)["cause"] == "claim"
    assert "misses the threshold by up to 60% of it" in only(comparison)["explanation"]


def test_an_offset_only_the_confirmation_has_is_predicted_only_by_an_outcome_shared_by_every_exploratory_offset():
    everywhere = [row("mechanics", "pins", "s", 1, 0.9, 1.0), row("mechanics", "pins", "s", 2, 0.8, 1.0)]
    _, comparison, _ = replicate(everywhere, {"other": [row("mechanics", "pins", "s", 4, 0.2, 0.0)]})
    assert not only(comparison)["replicates"]  # held at K=1 and K=2, so it should hold at K=4
    partly = [row("mechanics", "pins", "s", 1, 0.9, 1.0), row("mechanics", "pins", "s", 2, 0.2, 0.0)]
    _, comparison, claims = replicate(partly, {"other": [row("mechanics", "pins", "s", 4, 0.2, 0.0)]})
    assert comparison.empty and claims.iloc[0]["replication"] == "untestable"  # no prediction at K=4
    _, comparison, _ = replicate(partly, {"other": [row("mechanics", "pins", "s", 1, 0.9, 1.0),
                                                    row("mechanics", "pins", "s", 4, 0.9, 1.0)]})
    assert only(comparison)["replicates"]  # K=1 as explored; K=4 is not compared


def test_a_claim_is_partly_replicated_when_it_replicates_in_some_runs_and_not_tested_where_none_runs_it():
    exploratory = [row("generalization", "c", "s", 1, 0.9, 1.0), row("shift", "rope", "s", 1, 0.9, 1.0),
                   row("shift", "rope", "s", 2, 0.9, 1.0)]
    checks, comparison, claims = replicate(exploratory, {"same": [row("generalization", "c", "s", 1, 0.8, 1.0)],
                                                         "other": [row("generalization", "c", "s", 1, 0.1, 0.0)]})
    replication = claims.set_index("experiment")["replication"]
    assert replication["generalization"] == "holds in part" and replication["shift"] == "untestable"
    table = replication_table(checks, comparison, claims)
    to_arrow(table, REPLICATION)  # the schema the workflow writes it with
    assert set(table.loc[table["run"] == "other", "replicates"]) == {"no"}
    assert set(table.loc[table["run"] == EXPLORATORY, "replicates"]) == {""}
    assert set(table.loc[table["experiment"] == "shift", "section"]) == {"shift_K1", "shift_K2"}


def test_sanity_checks_are_compared_but_count_in_no_claims_replication_or_verdict():
    exploratory = [row("shift", "rope", "change", 1, 0.9, 1.0),
                   row("shift", "rope", "float64 identity", None, 0.9, 1.0, kind="sanity")]
    confirmation = [row("shift", "rope", "change", 1, 0.8, 1.0),
                    row("shift", "rope", "float64 identity", None, 0.1, 0.0, kind="sanity")]
    checks, comparison, claims = replicate(exploratory, {"other": confirmation})
    assert set(checks["experiment_verdict"]) == {"holds"}  # the failing sanity check is in no verdict
    assert claims.iloc[0]["replication"] == "holds" and claims.iloc[0]["causes"] == {}
    assert list(comparison.loc[comparison["kind"] == "sanity", "replicates"]) == [False]
    run = {"name": "other", "seeds": [5], "vocab_size": 16, "train_lengths": [6, 24], "offsets": [1], "left_out": {},
           "differences": [], "same_task": False, "note": ""}
    record = {"commit": "a" * 40, "date": "2026-11-30", "subject": "freeze", "changes": [], "diffstat": "", "error": ""}
    text = prose.section(checks, comparison, claims, [run], {**run, "name": EXPLORATORY}, record, [], "")
    assert "1 of 1 compared do not replicate" in text and "*rope \\| float64 identity*: holds -> does not hold" in text
    assert "Every claim measured by a confirmation run replicated." in text
    evidence, sanity = text.split("**Sanity checks** in every run")
    assert "float64 identity" not in evidence.split("**Every check**")[1]
    sanity_rows = markdown_rows(sanity, "|claim|check|K|")
    assert ["`shift`", "rope \\| float64 identity", "all"] in [row[:3] for row in sanity_rows]


def test_the_section_states_the_rule_the_numbers_and_the_history():
    checks, comparison, claims = replicate([row("generalization", "c", "rope at the longest length", 1, 0.8, 1.0,
                                                rule=">= 0.5 (n=128)")],
                                           {"other": [row("generalization", "c", "rope at the longest length", 1, 0.05, 0.0,
                                                          rule=">= 0.5 (n=96)")]})
    run = {"name": "other", "seeds": [5], "vocab_size": 8, "train_lengths": [6, 24], "offsets": [1], "left_out": {},
           "differences": ["task.vocab_size: 16 -> 8"], "same_task": False, "note": "another task"}
    explored = {**run, "name": EXPLORATORY, "seeds": [0], "vocab_size": 16, "differences": []}
    record = {"commit": "a" * 40, "date": "2026-11-30", "subject": "freeze", "changes": [], "diffstat": "", "error": ""}
    text = prose.section(checks, comparison, claims, [run], explored, record, ["lengthgen/checks/shared_rules.py"],
                            history_markdown())
    assert markdown_rows(text, "|claim|exploratory|other|replication|whynot(checks)|") == [
        ["`generalization`", "holds", "does not hold (does not replicate)", "**does not hold**", "claim: 1"]]
    assert "0.05 [0.03, 0.07], holds in 0% of resamples" in text
    checks_rows = markdown_rows(text, "|claim|check|K|rule(exploratory)|")
    assert ["`generalization`", "c \\| rope at the longest length", "K=1", ">= 0.5 (n=128)"] in [row[:4] for row in checks_rows]
    assert "`aaaaaaaaaaaa`" in text and "None of these files has changed since that commit." in text
    assert "`task.vocab_size: 16 -> 8`" in text
    assert [row[:2] for row in markdown_rows(text, "|rules|fixedin|datalookedatbefore|")] == [
        [change.rules, change.commit] for change in RULE_HISTORY]
    runs_rows = markdown_rows(text, "|run|seeds|V|traininglengths|K|")
    assert [row[0] for row in runs_rows] == [EXPLORATORY, "other"]
    assert runs_rows[1][-2:] == ["nothing", "another task"]  # the run's note says why its settings differ
    assert "**Sanity checks**: none compared." in text and "Sanity checks** in every run" not in text


def test_the_figure_shows_each_checks_share_per_run_and_its_replication_sanity_last():
    checks, comparison, claims = replicate(
        [row("generalization", "c", "s", 1, 0.9, 1.0),
         row("generalization", "c", "identity", None, 0.9, 1.0, kind="sanity"),
         row("generalization", "c", "s", 2, 0.9, 0.5)],
        {"other": [row("generalization", "c", "s", 1, 0.1, 0.0),
                   row("generalization", "c", "identity", None, 0.9, 1.0, kind="sanity")]})
    figure = replication_figure(replication_table(checks, comparison, claims))
    axes = figure.axes[0]
    labels = [label.get_text() for label in axes.get_yticklabels()]
    assert labels == ["generalization: c | s [does not hold]", "generalization (sanity): c | identity [holds]"]
    assert [label.get_text() for label in axes.get_xticklabels()] == [EXPLORATORY, "other"]
    shares = axes.get_images()[0].get_array()
    assert shares[0, 0] == pytest.approx(0.75) and shares[0, 1] == 0.0  # mean over K=1 and K=2; K=1 only
    assert [text.get_text() for text in axes.texts] == ["holds", "does not hold", "holds", "holds"]


def test_every_check_of_a_real_run_holds_as_its_comparison_and_threshold_say(smoke_run):
    claims = pd.read_parquet(smoke_run / "results/tables/claims.parquet")
    for found in claims.itertuples():
        expected = not pd.isna(found.value) and COMPARISONS[found.comparison](found.value, found.threshold)
        assert found.holds == expected, found


def test_the_checks_of_a_real_run_have_distinct_keys_and_spreads_row_for_row(smoke_run):
    for results in (smoke_run / "results", smoke_run / "results/confirm/tiny"):
        claims = pd.read_parquet(results / "tables/claims.parquet")
        spread = pd.read_parquet(results / "tables/claim_spread.parquet")
        assert claims[SPREAD_KEY].equals(spread[SPREAD_KEY])
        assert not claims.duplicated(KEY).any()
        assert (spread["resamples"] > 0).all() and spread["holds_fraction"].between(0, 1).all()


# --- Mutation testing (docs/mutation.md): the section's tables and sentences, cell by cell ------------------------


def table_cells(text: str) -> tuple[list[str], list[str], list[list[str]]]:
    """(header, alignment markers, body rows) of the one markdown table in ``text``; an escaped ``\\|`` stays."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    import re
    split = [[cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip()[1:-1])] for line in lines]
    return split[0], split[1], split[2:]


def spread_row(value, holds, n_seeds, *, low=0.25, high=0.75, fraction=0.5, failing=None, checked=None,
               comparison=">=", threshold=0.25):
    return pd.DataFrame([{"value": value, "holds": holds, "n_seeds": n_seeds, "spread_low": low, "spread_high": high,
                          "holds_fraction": fraction, "seeds_failing": failing, "seeds_checked": checked,
                          "comparison": comparison, "threshold": threshold}])


def test_a_cell_shows_value_spread_share_failing_seeds_its_runs_threshold_and_outcome():
    assert prose._cell(spread_row(0.5, True, 1).iloc[:0]) == "-"
    assert prose._cell(spread_row(0.5, True, 1)) == "0.5; rule >= 0.25: yes"  # one seed: no spread
    assert prose._cell(spread_row(0.5, False, 1, comparison="<=")) == "0.5; rule <= 0.25: no"
    assert prose._cell(spread_row(0.5, True, 2)) == "0.5; rule >= 0.25: yes".replace(";", " [0.25, 0.75], 50%;")
    # The threshold is the run's own (cures' recovery bar is half the run's own hard-attention ceiling), 4 digits.
    assert prose._cell(spread_row(0.125, False, 3, failing=2, checked=3, comparison="<=", threshold=0.086543)) == (
        "0.125 [0.25, 0.75], 50%, 2/3 seeds fail; rule <= 0.08654: no")


def test_tables_keep_numbers_as_written():
    text = prose._markdown([["1.00", "2.50"], ["3", "x"]], ["a", "b"])
    header, alignment, rows = table_cells(text)
    assert header == ["a", "b"] and rows == [["1.00", "2.50"], ["3", "x"]]
    assert all(marker.startswith(":") and not marker.endswith(":") for marker in alignment)  # all text: left


RUN = {"name": "fresh", "seeds": [10, 11], "vocab_size": 8, "train_lengths": [6, 24], "offsets": [1, 3],
       "left_out": {"transformer": "too slow", "variants": "no base"}, "differences": ["seeds: new", "a|b"],
       "same_task": True, "note": "why | not"}
EXPLORED = {"name": EXPLORATORY, "seeds": [0], "vocab_size": 16, "train_lengths": [4, 32], "offsets": [2],
            "left_out": {}, "same_task": False, "note": None}


def test_the_runs_table_has_one_row_per_run_with_its_settings():
    header, _, rows = table_cells(prose.runs_markdown([RUN], EXPLORED))
    assert header == ["run", "seeds", "V", "training lengths", "K", "differs from the exploratory config in",
                      "left out", "why"]
    assert rows == [[EXPLORATORY, "0", "16", "4..32", "2", "-", "nothing", "-"],
                    ["fresh", "10, 11", "8", "6..24", "1, 3", "`seeds: new`; `a\\|b`",
                     "`transformer` (too slow), `variants` (no base)", "why \\| not"]]


RECORD = {"commit": "0123456789abcdef" * 2, "date": "2026-11-30", "subject": "freeze", "changes": [], "diffstat": "",
          "error": ""}
HEAD = ("**Rules fixed before the confirmation runs**: commit `0123456789ab` (2026-11-30, \"freeze\"). Every claim "
        "rule and predictor the runs applied is in `a.py`, `b.py`. ")


def test_the_rules_record_says_whether_the_rule_files_changed_since_the_frozen_commit():
    files = ["a.py", "b.py"]
    assert prose.rules_markdown(RECORD, files) == HEAD + "None of these files has changed since that commit."
    changed = {**RECORD, "changes": ["abc1234 loosen", "def5678 fix"], "diffstat": " a.py | 2 +-"}
    assert prose.rules_markdown(changed, files) == (
        HEAD + "They changed since that commit, so the confirmation does not test these rules as fixed:\n\n"
        "- `abc1234 loosen`\n- `def5678 fix`\n\n```\n a.py | 2 +-\n```")
    uncommitted = {**RECORD, "diffstat": " b.py | 1 +"}
    assert prose.rules_markdown(uncommitted, files) == (
        HEAD + "They changed since that commit, so the confirmation does not test these rules as fixed:\n\n"
        "- (no commit: uncommitted edits)\n\n```\n b.py | 1 +\n```")
    committed_only = {**RECORD, "changes": ["abc1234 loosen"]}  # a commit whose diff is empty still counts
    assert prose.rules_markdown(committed_only, files).startswith(HEAD + "They changed since that commit")
    failed = {**RECORD, "error": "no git"}
    assert prose.rules_markdown(failed, files) == (
        "**Rules fixed before the confirmation runs**: not established (no git). The rules and predictors "
        "(`a.py`, `b.py`) the runs applied are those of this checkout.")


def test_the_claims_table_shows_each_runs_verdict_whether_it_replicates_and_the_causes():
    claims = pd.DataFrame([
        {"experiment": "generalization", "verdicts": {EXPLORATORY: "holds", "b": "holds in part", "c": "holds"},
         "replicates": {"b": False, "c": True}, "replication": "holds in part", "causes": {"rule": 1, "claim": 2}},
        {"experiment": "shift", "verdicts": {"c": "holds in part"}, "replicates": {}, "replication": "untestable",
         "causes": {}}])
    header, _, rows = table_cells(prose.claims_markdown(claims, ["a", "b", "c"]))
    assert header == ["claim", EXPLORATORY, "a", "b", "c", "replication", "why not (checks)"]
    assert rows == [["`generalization`", "holds", "not run", "holds in part (does not replicate)", "holds (replicates)",
                     "**holds in part**", "rule: 1, claim: 2"],
                    ["`shift`", "-", "not run", "not run", "holds in part", "**untestable**", "-"]]


def comparison_row(experiment, run, replicates, cause="", kind="evidence", claim="c", statistic="s"):
    return {"experiment": experiment, "claim": claim, "statistic": statistic, "kind": kind, "run": run,
            "exploratory_outcome": "holds", "outcome": "holds" if replicates else "does not hold", "replicates": replicates,
            "cause": cause, "explanation": "why" if cause else ""}


def test_the_reasons_list_each_failing_check_under_its_own_claim():
    claims = pd.DataFrame([{"experiment": "generalization", "replication": "holds in part", "causes": {"rule": 1}},
                           {"experiment": "shift", "replication": "does not hold", "causes": {"claim": 1, "rule": 1}},
                           {"experiment": "prop1", "replication": "holds", "causes": {}}])
    comparison = pd.DataFrame([comparison_row("generalization", "a", False, "rule"), comparison_row("generalization", "b", True),
                               comparison_row("shift", "a", False, "claim", statistic="s|t"),
                               comparison_row("shift", "b", False, "rule"),
                               comparison_row("prop1", "a", False, "rule", kind="sanity")])
    assert prose.reasons_markdown(claims, comparison) == (
        "- **`generalization`: holds in part.** 1 check(s) by rule.\n"
        "  - a, *c \\| s*: holds -> does not hold; **rule**: why.\n"
        "- **`shift`: does not hold.** 1 check(s) by claim; 1 check(s) by rule.\n"
        "  - a, *c \\| s\\|t*: holds -> does not hold; **claim**: why.\n"
        "  - b, *c \\| s*: holds -> does not hold; **rule**: why.")
    assert prose.reasons_markdown(claims.iloc[2:], comparison) == (
        "Every claim measured by a confirmation run replicated.")


def test_the_sanity_list_counts_the_compared_and_names_those_that_do_not_replicate():
    assert prose.sanity_markdown(pd.DataFrame([comparison_row("generalization", "a", True)])) == (
        "**Sanity checks**: none compared.")
    fine = pd.DataFrame([comparison_row("generalization", "a", True, kind="sanity"), comparison_row("generalization", "b", True,
                                                                                            kind="sanity")])
    assert prose.sanity_markdown(fine) == (
        "**Sanity checks** (tests of the code; in no claim's replication): all 2 compared replicate.")
    broken = pd.DataFrame([comparison_row("generalization", "a", False, "rule", kind="sanity"),
                           comparison_row("shift", "b", False, "claim", kind="sanity"),
                           comparison_row("prop1", "a", True, kind="sanity")])
    assert prose.sanity_markdown(broken) == (
        "**Sanity checks** (tests of the code; in no claim's replication): 2 of 3 compared do not replicate, so the "
        "code behaves differently in another run:\n"
        "- `generalization`: a, *c \\| s*: holds -> does not hold; **rule**: why.\n"
        "- `shift`: b, *c \\| s*: holds -> does not hold; **claim**: why.")


def test_report_order_keeps_first_appearance_of_experiments_and_checks_then_offsets_pooled_first():
    # Two checks share a claim, two share a statistic: each (claim, statistic) pair is its own check.
    frame = pd.DataFrame({"experiment": ["shift", "generalization", "shift", "shift", "shift", "generalization", "shift"],
                          "claim": ["x", "c", "y", "x", "x", "c", "x"],
                          "statistic": ["s", "s", "s", "t", "s", "s", "s"],
                          "offset": pd.array([2, 1, 1, 1, 1, None, None], dtype="Int64")},
                         index=[10, 11, 12, 13, 14, 15, 16])
    ordered = prose.report_order(frame)
    assert ordered.index.tolist() == [16, 14, 10, 12, 13, 15, 11]
    pd.testing.assert_frame_equal(ordered, frame.loc[[16, 14, 10, 12, 13, 15, 11]])


def test_the_checks_table_follows_report_order_and_says_which_checks_were_never_compared():
    exploratory = [row("shift", "rope", "s", 1, 0.9, 1.0), row("generalization", "c", "s", 1, 0.9, 1.0, rule="explored rule")]
    confirmation = [row("generalization", "c", "s", 1, 0.2, 0.0, rule="other rule"), row("generalization", "new", "s", 1, 0.9, 1.0,
                                                                                 rule="only here")]
    checks, comparison, _ = replicate(exploratory, {"other": confirmation})
    header, _, rows = table_cells(prose.checks_markdown(checks, comparison, ["other"], "evidence"))
    assert header == ["claim", "check", "K", "rule (exploratory)", EXPLORATORY, "other", "check replication"]
    assert [cells[:4] + cells[-1:] for cells in rows] == [
        ["`shift`", "rope \\| s", "K=1", ">= 0.5", "untestable"],
        ["`generalization`", "c \\| s", "K=1", "explored rule", "does not hold"],
        ["`generalization`", "new \\| s", "K=1", "only here", "untestable"]]
    assert rows[0][5] == "-" and rows[2][4] == "-"


def test_the_section_counts_claims_by_replication_and_the_exploratory_seeds():
    checks, comparison, claims = replicate(
        [row("generalization", "c", "s", 1, 0.9, 1.0, seeds=5), row("shift", "c", "s", 1, 0.9, 1.0, seeds=5),
         row("prop1", "c", "s", 1, 0.9, 1.0, seeds=5), row("mechanics", "c", "s", 1, 0.9, 1.0, seeds=5)],
        {"b": [row("generalization", "c", "s", 1, 0.9, 1.0, seeds=3), row("shift", "c", "s", 1, 0.1, 0.0, seeds=3),
               row("prop1", "c", "s", 1, 0.1, 0.0, seeds=3)],
         "c": [row("generalization", "c", "s", 1, 0.9, 1.0, seeds=3), row("shift", "c", "s", 1, 0.9, 1.0, seeds=3),
               row("prop1", "c", "s", 1, 0.1, 0.0, seeds=3)]})
    runs = [{**RUN, "name": "b"}, {**RUN, "name": "c"}]
    text = prose.section(checks, comparison, claims, runs, EXPLORED, RECORD, [], "")
    assert "under 2 other configurations (fresh seeds" in text
    assert "Of 4 experiments: 1 holds, 1 holds in part, 1 does not hold, 1 untestable." in text
    assert "(here 5 seeds in the exploratory run)" in text
    assert "![every check in every run](figures/replication.png)" in text
    assert prose.undecidable_markdown(comparison) in text.split("**Sanity checks**")[0]


def test_a_check_is_decided_only_with_two_seeds_or_more_and_a_share_of_resamples_at_or_past_the_bar():
    from lengthgen.checks.shared_rules import DECIDED_FRACTION
    low, high = 1 - DECIDED_FRACTION, DECIDED_FRACTION
    cases = [  # (seeds, share of resamples in which it holds, decided)
        (1, 1.0, False), (1, 0.0, False),  # one seed decides nothing, whatever its bootstrap says
        (2, 1.0, True), (2, 0.0, True), (2, high, True), (2, low, True),
        (2, high - 0.01, False), (2, low + 0.01, False), (5, 0.5, False)]
    rows = [row("generalization", f"c{index}", "s", 1, 0.9, fraction, seeds=seeds) for index, (seeds, fraction, _) in
            enumerate(cases)]
    checks = annotated_checks({EXPLORATORY: run_tables(*rows)})
    assert checks["decided"].tolist() == [decided for _, _, decided in cases]


def test_the_experiment_verdict_is_per_run_and_counts_evidence_only():
    checks = annotated_checks({
        EXPLORATORY: run_tables(row("generalization", "a", "s", 1, 0.9, 1.0), row("generalization", "b", "s", 1, 0.1, 0.0),
                                row("prop1", "a", "s", 1, 0.9, 1.0), row("prop1", "z", "s", 1, 0.1, 0.0,
                                                                         kind="sanity")),
        "other": run_tables(row("generalization", "a", "s", 1, 0.9, 1.0), row("generalization", "b", "s", 1, 0.9, 1.0))})
    verdicts = checks.drop_duplicates(["run", "experiment"]).set_index(["run", "experiment"])["experiment_verdict"]
    assert verdicts.to_dict() == {(EXPLORATORY, "generalization"): "holds in part", (EXPLORATORY, "prop1"): "holds",
                                  ("other", "generalization"): "holds"}
    assert checks["run"].tolist() == [EXPLORATORY] * 4 + ["other"] * 2


def test_spreads_that_do_not_list_the_claims_checks_are_refused():
    claims, spread = run_tables(row("generalization", "a", "s", 1, 0.9, 1.0), row("generalization", "b", "s", 1, 0.9, 1.0))
    with pytest.raises(ValueError, match="run other: the claim spreads do not list the checks of its claims table"):
        annotated_checks({"other": (claims, spread.iloc[::-1])})


def test_where_the_exploratory_run_failed_its_miss_and_the_confirmations_clearance_decide():
    # The exploratory run fails by 90% of the threshold on every seed; a confirmation holds, clearing it by 10%:
    # the failing side is the exploratory one, and a miss that large against that clearance is the claim.
    _, comparison, _ = replicate([row("generalization", "c", "s", 1, 0.05, 0.0, failing=5)],
                                 {"other": [row("generalization", "c", "s", 1, 0.55, 1.0, failing=0)]})
    found = only(comparison)
    assert not found["replicates"] and found["exploratory_outcome"] == "does not hold" and found["outcome"] == "holds"
    assert found["cause"] == "claim"
    assert "misses the threshold by up to 90% of it, the other clears it by 10% (median)" in found["explanation"]


# decide_cause on its own, every branch written out in full (CAUSE_RULE in lengthgen/checks/shared_rules.py).

from lengthgen.studies.confirmation.replication import Cause, Evidence, decide_cause  # noqa: E402
from lengthgen.checks.shared_rules import RULE_CAUSE_MAX_MISS

NO_COUNT = "no per-seed count (the check is not computed per seed), so the seed bootstrap alone"
# (0 of 2 against 12 of 14) has a two-sided Fisher p of exactly 0.05: at the level, the shares are compatible.
AT_LEVEL = ((0, 2), (12, 14))
COMPATIBLE = "0 of 2 against 12 of 14 seeds fail, shares compatible with one rate (Fisher p = 0.05)"


def evidence(**changes):
    return Evidence(**{"seeds": 2, "open": False, "same_task": False, "shares": None, "failing_runs": 1,
                       "miss": 0.1, "clear": 0.6, **changes})


def margins_text(miss, clear):
    return f"; the failing side misses the threshold by up to {miss} of it, the other clears it by {clear} (median)"


def test_one_seed_decides_nothing_and_two_do():
    assert decide_cause(evidence(seeds=1, shares=((0, 1), (1, 1)), miss=5.0)) == Cause(
        "measurement", "one seed", "undecided: a run has one seed, which decides nothing")
    assert decide_cause(evidence(seeds=2))[:2] == ("rule", "margins")


def test_without_per_seed_counts_the_bootstrap_decides_between_measurement_and_the_margins():
    assert decide_cause(evidence(open=True)) == Cause("measurement", "open without a per-seed count",
                                                      f"{NO_COUNT}: the outcome is open in at least one run")
    assert decide_cause(evidence()) == Cause(
        "rule", "margins", f"{NO_COUNT}: decided in both runs{margins_text('10%', '60%')}: the threshold sits between "
                           "the two settings' values")


def test_compatible_shares_are_measurement_when_open_or_on_the_same_task_else_judged_by_the_margins():
    assert decide_cause(evidence(shares=AT_LEVEL, open=True)) == Cause(
        "measurement", "shares", f"{COMPATIBLE}, and the outcome is open in at least one run: seeds alone turned it")
    assert decide_cause(evidence(shares=AT_LEVEL, same_task=True)) == Cause(
        "measurement", "shares", f"{COMPATIBLE}, and the same task with fresh seeds: seeds alone turned it")
    assert decide_cause(evidence(shares=AT_LEVEL, miss=0.5, clear=0.1)) == Cause(
        "claim", "margins", f"{COMPATIBLE}, but both runs decide their outcome on another task"
                            f"{margins_text('50%', '10%')}: the effect itself differs")


def test_failing_seeds_that_recur_in_several_runs_are_not_measurement():
    assert decide_cause(evidence(shares=AT_LEVEL, open=True, failing_runs=2)) == Cause(
        "rule", "margins", f"{COMPATIBLE}, and failing seeds recur in 2 runs of the study: a fixed share of seeds "
                           f"fails, which more seeds would not remove{margins_text('10%', '60%')}: the threshold sits "
                           "between the two settings' values")
    # Without a failing seed in the runs compared, nothing recurs between them; one failing run is not recurring.
    assert decide_cause(evidence(shares=((0, 5), (0, 5)), open=True, failing_runs=2))[:2] == ("measurement", "shares")
    assert decide_cause(evidence(shares=AT_LEVEL, open=True, failing_runs=1))[:2] == ("measurement", "shares")


def test_shares_that_differ_are_judged_by_the_margins_with_a_miss_equal_to_the_allowed_share_the_rule():
    differ = "0 of 5 against 5 of 5 seeds fail, shares that differ (Fisher p = 0.0079)"
    assert decide_cause(evidence(shares=((0, 5), (5, 5)), open=True, miss=RULE_CAUSE_MAX_MISS * 0.25,
                                 clear=0.25)) == Cause(
        "rule", "margins", f"{differ}{margins_text('25%', '25%')}: the threshold sits between the two settings' values")
    assert decide_cause(evidence(shares=((0, 5), (5, 5)), miss=RULE_CAUSE_MAX_MISS * 0.25 + 0.01, clear=0.25)) == Cause(
        "claim", "margins", f"{differ}{margins_text(f'{RULE_CAUSE_MAX_MISS * 0.25 + 0.01:.0%}', '25%')}: the effect "
                            "itself differs")


def test_the_largest_miss_over_every_offset_and_the_median_clearance_over_every_passing_one():
    # Exploratory K=1..3 clear 0.5 by 60%, 20% and 40% (median 40%); the confirmation misses by 90% at K=1, then
    # by 10% at K=2 and K=3: the worst miss comes first and still decides.
    explored = [row("generalization", "c", "s", offset, value, 1.0, failing=0) for offset, value in ((1, 0.8), (2, 0.6),
                                                                                          (3, 0.7))]
    _, comparison, _ = replicate(explored, {"other": [row("generalization", "c", "s", 1, 0.05, 0.0, failing=5),
                                                      row("generalization", "c", "s", 2, 0.45, 0.0, failing=5),
                                                      row("generalization", "c", "s", 3, 0.45, 0.0, failing=5)]})
    found = only(comparison)
    assert found["cause"] == "claim"
    assert "misses the threshold by up to 90% of it, the other clears it by 40% (median)" in found["explanation"]


def test_the_study_table_keeps_one_row_per_check_and_run():
    checks, _, _ = replicate([row("generalization", "c", "s", 1, 0.9, 1.0), row("generalization", "c", "s", None, 0.9, 1.0)],
                             {"other": [row("generalization", "c", "s", 1, 0.8, 1.0), row("generalization", "c", "s", None, 0.8, 1.0)]})
    assert checks["offset"].isna().sum() == 2
    ordered = prose.report_order(checks)
    assert len(ordered) == len(checks) == 4  # each row once (the rows of both runs have distinct labels)
    assert ordered["run"].tolist() == [EXPLORATORY, "other", EXPLORATORY, "other"]


# --- Mutation testing (docs/mutation.md): replication's computation, number by number --------------------------

import math  # noqa: E402

import numpy as np  # noqa: E402

from lengthgen.studies.confirmation.replication import (COMPARISON_COLUMNS, check_outcomes, clearance, clearances, describe_values,  # noqa: E402
                                   expectations, failure_share, instance, instance_name, margins, misses_and_clears,
                                   outcome, replication_verdict, seeds_text, share_text, shares_p_value)


def values(*entries, seeds=10):
    """Rows of (value, comparison, threshold, holds) with ``seeds`` seeds, as ``margins`` and ``clearances`` read
    them."""
    return pd.DataFrame([{"value": value, "comparison": comparison, "threshold": threshold, "holds": holds,
                          "n_seeds": seeds} for value, comparison, threshold, holds in entries])


def test_an_instance_is_its_offset_as_an_integer_and_a_pooled_check_has_none():
    assert instance(pd.NA) is None and instance(float("nan")) is None and instance(None) is None
    assert instance(np.int64(3)) == 3 and type(instance(np.int64(3))) is int and type(instance(2.0)) is int
    assert instance_name(pd.NA) == "all" and instance_name(3) == "K=3" and instance_name(2.0) == "K=2"


def test_every_comparison_has_its_passing_side_and_the_scale_is_the_threshold_or_one():
    assert margin(0.75, ">", 0.5) == pytest.approx(0.5) and margin(0.25, ">", 0.5) == pytest.approx(-0.5)
    assert margin(0.25, "<=", 0.5) == pytest.approx(0.5) and margin(0.75, "<=", 0.5) == pytest.approx(-0.5)
    assert margin(0.75, "<", 0.5) == pytest.approx(-0.5)
    assert margin(-1.5, ">=", -1.0) == pytest.approx(-0.5)  # relative to |threshold|
    assert margin(0.5, ">=", 0.0) == pytest.approx(0.5) and margin(-0.5, "<=", 0.0) == pytest.approx(0.5)
    assert margin(1.2, "==", 1.0) == pytest.approx(-0.2) and margin(0.2, "==", 0.0) == pytest.approx(-0.2)
    assert margin(2.5, "==", 2.0) == pytest.approx(-0.25) and margin(1.5, "==", 2.0) == pytest.approx(-0.25)
    assert math.isnan(margin(None, ">=", 0.5))
    found = margins(values((0.75, ">=", 0.5, True), (0.2, "==", 0.0, False), (float("nan"), "<", 1.0, False)))
    assert found.iloc[:2].tolist() == pytest.approx([0.5, -0.2]) and math.isnan(found.iloc[2])
    none = pd.DataFrame(columns=["value", "comparison", "threshold", "holds", "n_seeds"])
    assert margins(none).dtype == float and clearances(none).dtype == float


def test_a_check_that_holds_on_its_threshold_clears_it_by_one_seeds_share():
    assert clearance(0.75, ">=", 0.5, 10) == pytest.approx(0.5)  # off its threshold: its margin
    assert clearance(0.25, "<", 0.5, 10) == pytest.approx(0.5)
    assert clearance(1.0, "==", 1.0, 10) == pytest.approx(0.1)  # every seed: one seed of ten from failing
    assert clearance(0.0, "==", 0.0, 4) == pytest.approx(0.25)  # no seed: a zero threshold has scale 1
    assert clearance(2.0, "==", 2.0, 4) == pytest.approx(0.125)  # relative to the threshold, as margins are
    assert clearance(1.0, ">=", 1.0, 5) == pytest.approx(0.2)  # a share at its bound, such as rope_bases' >= 1
    found = clearances(values((1.0, "==", 1.0, True), (0.9, ">=", 0.5, True), seeds=4))
    assert found.tolist() == pytest.approx([0.25, 0.8])


def equality(offset, value, holds_fraction, failing, *, threshold=1.0, seeds=10):
    return row("mechanics", "learned pins", "fraction of seeds whose modal position is one position", offset, value,
               holds_fraction, failing=failing, seeds=seeds, comparison="==", threshold=threshold)


def test_an_equality_that_misses_by_one_seeds_share_is_the_rule_and_by_more_the_claim():
    # "== 1" on a share of 10 seeds holds in the exploratory run; another task, whose outcome its seeds decide too
    # (the shares 0 of 10 against k of 10 are compatible), misses it. The holding side clears by one seed's share.
    _, by_one, _ = replicate([equality(1, 1.0, 1.0, 0)], {"other": [equality(1, 0.9, 0.0, 1)]})
    assert only(by_one)[["cause", "basis"]].tolist() == ["rule", "margins"]
    assert ("the failing side misses the threshold by up to 10% of it, the other clears it by 10% (median): the "
            "threshold sits between the two settings' values") in only(by_one)["explanation"]
    _, by_three, _ = replicate([equality(1, 1.0, 1.0, 0)], {"other": [equality(1, 0.7, 0.0, 3)]})
    assert only(by_three)[["cause", "basis"]].tolist() == ["claim", "margins"]
    assert ("the failing side misses the threshold by up to 30% of it, the other clears it by 10% (median): the "
            "effect itself differs") in only(by_three)["explanation"]
    # "== 0" of (seed, length) cells: 4 cells of 50 is less than one seed's share of the cells.
    _, cells, _ = replicate([equality(1, 0.0, 1.0, 0, threshold=0.0)],
                            {"other": [equality(1, 0.08, 0.0, 4, threshold=0.0)]})
    assert only(cells)["cause"] == "rule" and "by up to 8% of it, the other clears it by 10%" in only(cells)[
        "explanation"]
    # The holding side's own seeds: the exploratory run of 5 seeds clears by 20%, where the other misses by 30%.
    _, five, _ = replicate([equality(1, 1.0, 1.0, 0, seeds=5)], {"other": [equality(1, 0.7, 0.0, 3)]})
    assert "the other clears it by 20% (median)" in only(five)["explanation"] and only(five)["cause"] == "claim"


def test_a_share_at_its_bound_clears_by_one_seeds_share_where_the_other_side_fails():
    # rope_bases: ">= 1" of the pairs of bases predicted in order; the confirmation run holds, the exploratory fails.
    explored = [row("rope_bases", "order", "share of pairs in order", 1, 0.667, 0.0, failing=5, threshold=1.0)]
    _, comparison, _ = replicate(explored, {"other": [row("rope_bases", "order", "share of pairs in order", 1, 1.0,
                                                          1.0, failing=0, threshold=1.0)]})
    found = only(comparison)
    assert found["cause"] == "claim" and "by up to 33% of it, the other clears it by 20% (median)" in found[
        "explanation"]


def test_outcomes_and_verdicts_over_offsets_and_runs():
    assert outcome(pd.Series([True, True])) == "holds" and outcome(pd.Series([False])) == "does not hold"
    assert outcome(pd.Series([True, False])) == "holds in part"
    assert replication_verdict(pd.Series([True, True])) == "holds"
    assert replication_verdict(pd.Series([False, False])) == "does not hold"
    assert replication_verdict(pd.Series([True, False])) == "holds in part"
    assert replication_verdict(pd.Series([], dtype=bool)) == "untestable"


def test_check_outcomes_are_per_run_and_check_over_its_offsets():
    checks = pd.DataFrame({"run": ["b", "b", "b", "a"], "experiment": ["e"] * 4, "claim": ["c"] * 4,
                           "statistic": ["t", "s", "t", "s"], "holds": [True, True, False, False]})
    found = check_outcomes(checks)
    assert list(found.columns) == ["run", "experiment", "claim", "statistic", "outcome"]
    assert found.values.tolist() == [["b", "e", "c", "t", "holds in part"], ["b", "e", "c", "s", "holds"],
                                     ["a", "e", "c", "s", "does not hold"]]  # in the order of the checks


def described(run, offset, value, fraction, failing, checked, rule):
    return {"run": run, "offset": offset, "value": value, "spread_low": value - 0.05, "spread_high": value + 0.05,
            "holds_fraction": fraction, "seeds_failing": failing, "seeds_checked": checked, "rule": rule}


def test_each_runs_values_are_described_with_its_own_rule():
    rows = pd.DataFrame([described(EXPLORATORY, 1, 0.124, 0.0, 9, 10, "<= 0.5 x ceiling +0.076 = 0.03788"),
                         described("fresh_seeds", pd.NA, 0.0519, 0.63, None, None, "<= 0.5 x ceiling +0.173 = 0.0865")])
    assert seeds_text(next(rows.itertuples())) == "fails on 9 of 10 seeds alone"
    assert describe_values(rows) == (
        "exploratory K=1: 0.124 [0.074, 0.174], holds in 0% of resamples, fails on 9 of 10 seeds alone, rule <= 0.5 x "
        "ceiling +0.076 = 0.03788; fresh_seeds all: 0.0519 [0.0019, 0.102], holds in 63% of resamples, no per-seed "
        "count, rule <= 0.5 x ceiling +0.173 = 0.0865")


def test_the_exploratory_run_predicts_each_instance_it_measured_and_elsewhere_only_a_shared_outcome():
    holding = pd.DataFrame({"offset": pd.array([1, 2], dtype="Int64"), "holds": [True, True]}, index=[7, 8])
    confirmation = pd.DataFrame({"offset": pd.array([2, 4], dtype="Int64"), "holds": [False, True]}, index=[20, 21])
    found = expectations(holding, confirmation)
    assert [(int(entry[0]["offset"]), entry[1], entry[2].index.tolist()) for entry in found] == [
        (2, True, [8]), (4, True, [7, 8])]  # K=2 from K=2; K=4 from every explored offset
    failing = holding.assign(holds=[False, False])
    assert [(entry[1], entry[2].index.tolist()) for entry in expectations(failing, confirmation)] == [
        (False, [8]), (False, [7, 8])]
    partly = holding.assign(holds=[True, False])
    assert [(entry[1], entry[2].index.tolist()) for entry in expectations(partly, confirmation)] == [(False, [8])]
    pooled = pd.DataFrame({"offset": pd.array([None], dtype="Int64"), "holds": [True]}, index=[3])
    assert [(entry[1], entry[2].index.tolist()) for entry in expectations(pooled, confirmation.iloc[:0])] == []


def test_shares_are_summed_over_the_instances_and_tested_two_sided():
    rows = pd.DataFrame({"seeds_failing": pd.array([1, 2], dtype="Int64"), "seeds_checked": pd.array([5, 4],
                                                                                                      dtype="Int64")})
    assert failure_share(rows) == (3, 9) and type(failure_share(rows)[0]) is int
    assert failure_share(rows.assign(seeds_failing=pd.array([1, None], dtype="Int64"))) is None
    assert share_text((3, 9)) == "3 of 9"
    # Hypergeometric by hand: 0 of 5 against 5 of 5 is one of the two most extreme tables of C(10, 5) = 252.
    assert shares_p_value(((0, 5), (5, 5))) == pytest.approx(2 / 252)
    assert shares_p_value(((1, 5), (4, 5))) == pytest.approx((1 + 25 + 25 + 1) / 252)
    assert shares_p_value(((1, 3), (1, 3))) == pytest.approx(1.0)


def mismatch(value, holds, expected, reference):
    return pd.Series({"value": value, "comparison": ">=", "threshold": 0.5, "holds": holds, "n_seeds": 10}), \
        expected, values(*((entry, ">=", 0.5, entry >= 0.5) for entry in reference))


def test_the_largest_miss_and_the_median_clearance_over_every_mismatch_either_side_failing():
    # The confirmation fails where the exploratory run holds (0.45 against 0.8), and holds where it fails (0.55
    # against 0.05): misses of 10% and 90%, clearances of 60% and 10%.
    assert misses_and_clears([mismatch(0.45, False, True, [0.8])]) == pytest.approx((0.1, 0.6))
    assert misses_and_clears([mismatch(0.55, True, False, [0.05])]) == pytest.approx((0.9, 0.1))
    both = [mismatch(0.45, False, True, [0.8]), mismatch(0.55, True, False, [0.05])]
    assert misses_and_clears(both) == pytest.approx((0.9, 0.35))
    # Only the failing side misses and only the holding side clears: a pooled prediction's references that hold.
    assert misses_and_clears([mismatch(0.45, False, True, [0.8, 0.6, 0.7])]) == pytest.approx((0.1, 0.4))
    # A value that is NaN misses by nothing known: the largest known miss, in either order.
    undefined = mismatch(float("nan"), False, True, [0.8])
    assert misses_and_clears([undefined, both[0]])[0] == pytest.approx(0.1)
    assert misses_and_clears([both[0], undefined])[0] == pytest.approx(0.1)


def test_a_pooled_prediction_counts_the_exploratory_instances_once():
    # Explored at K=1 and K=2 (both hold); the confirmation fails at K=4 and K=5, each predicted by both.
    explored = [row("mechanics", "c", "s", offset, value, 1.0, failing=0) for offset, value in ((1, 0.8), (2, 0.6))]
    _, comparison, _ = replicate(explored, {"other": [row("mechanics", "c", "s", offset, 0.45, 0.0, failing=5)
                                                      for offset in (4, 5)]})
    assert only(comparison)["explanation"] == (
        "0 of 10 against 10 of 10 seeds fail, shares that differ (Fisher p = 1.1e-05); the failing side misses the "
        "threshold by up to 10% of it, the other clears it by 40% (median): the threshold sits between the two "
        "settings' values; exploratory K=1: 0.8 [0.78, 0.82], holds in 100% of resamples, fails on 0 of 5 seeds alone, "
        "rule >= 0.5; exploratory K=2: 0.6 [0.58, 0.62], holds in 100% of resamples, fails on 0 of 5 seeds alone, "
        "rule >= 0.5; other K=4: 0.45 [0.43, 0.47], holds in 0% of resamples, fails on 5 of 5 seeds alone, rule >= "
        "0.5; other K=5: 0.45 [0.43, 0.47], holds in 0% of resamples, fails on 5 of 5 seeds alone, rule >= 0.5")


def test_a_count_missing_in_either_run_leaves_the_bootstrap_alone_to_decide():
    # A run written before the check was declared (or counted) has no count: no shares to compare.
    for explored_count, other_count in ((0, None), (None, 1)):
        _, comparison, _ = replicate([row("generalization", "c", "s", 1, 0.8, 1.0, failing=explored_count)],
                                     {"other": [row("generalization", "c", "s", 1, 0.45, 0.3, failing=other_count)]})
        assert only(comparison)[["cause", "basis"]].tolist() == ["measurement", "open without a per-seed count"]


def test_failing_seeds_recur_only_in_runs_whose_counts_show_them():
    # 0 of 5 against 1 of 5, open: measurement, as long as no other run has a failing seed. A third run that fails
    # the check without a count, or a run with a count of 0, shows no failing seed.
    explored = [row("generalization", "c", "s", 1, 0.9, 1.0, failing=0)]
    confirmations = {"a": [row("generalization", "c", "s", 1, 0.3, 0.33, failing=1)],
                     "b": [row("generalization", "c", "s", 1, 0.2, 0.0, failing=None)],
                     "c": [row("generalization", "c", "s", 1, 0.9, 1.0, failing=0)]}
    _, comparison, _ = replicate(explored, confirmations)
    assert only(comparison, "a")[["cause", "basis"]].tolist() == ["measurement", "shares"]


def test_compare_runs_has_one_row_per_check_and_run_the_exploratory_kind_and_both_outcomes():
    explored = [row("generalization", "c", "s", 1, 0.9, 1.0, failing=0),
                row("generalization", "c", "t", 1, 0.9, 1.0, failing=0),  # the same claim, another statistic
                row("generalization", "c", "t", 2, 0.2, 0.0, failing=5),
                row("shift", "identity", "s", None, 0.9, 1.0, kind="sanity")]
    # Runs and checks in the order of the study, not sorted: run b comes first, and in it shift before generalization.
    confirmations = {"b": [row("shift", "new", "s", 1, 0.9, 1.0),  # not explored: no prediction, and not the last
                           row("shift", "identity", "s", None, 0.9, 1.0, kind="evidence"),
                           row("generalization", "c", "s", 1, 0.3, 0.0, failing=5),
                           row("generalization", "c", "t", 1, 0.9, 1.0, failing=0)],
                     "a": [row("generalization", "c", "t", 2, 0.55, 1.0, failing=0)]}
    _, comparison, _ = replicate(explored, confirmations, same_task={"b": True, "a": False})
    assert list(comparison.columns) == COMPARISON_COLUMNS == [
        "experiment", "claim", "statistic", "kind", "run", "exploratory_outcome", "outcome", "replicates", "cause",
        "basis", "explanation"]
    assert comparison.drop(columns="explanation").values.tolist() == [
        ["shift", "identity", "s", "sanity", "b", "holds", "holds", True, "", ""],
        ["generalization", "c", "s", "evidence", "b", "holds", "does not hold", False, "rule", "margins"],
        ["generalization", "c", "t", "evidence", "b", "holds in part", "holds", True, "", ""],
        ["generalization", "c", "t", "evidence", "a", "holds in part", "holds", False, "claim", "margins"]]
    assert comparison["explanation"].tolist()[::2] == ["", ""]
    assert comparison["explanation"].iloc[1].startswith("0 of 5 against 5 of 5 seeds fail, shares that differ")


def test_claim_replication_is_per_experiment_from_its_evidence_checks():
    explored = [row("generalization", "c", "s", 1, 0.9, 1.0, failing=0), row("generalization", "c", "t", 1, 0.9, 1.0),
                row("prop1", "c", "s", 1, 0.9, 1.0), row("prop1", "c", "z", 1, 0.9, 1.0, kind="sanity"),
                row("shift", "c", "s", 1, 0.9, 1.0)]
    checks, comparison, claims = replicate(explored, {
        "a": [row("generalization", "c", "s", 1, 0.8, 1.0, failing=0), row("generalization", "c", "t", 1, 0.9, 1.0),
              row("prop1", "c", "s", 1, 0.9, 1.0), row("prop1", "c", "z", 1, 0.1, 0.0, kind="sanity")],
        "b": [row("generalization", "c", "s", 1, 0.45, 0.0, failing=5), row("generalization", "c", "t", 1, 0.05, 0.0)]})
    assert list(claims.columns) == ["experiment", "verdicts", "replicates", "replication", "causes"]
    assert claims.to_dict("records") == [
        {"experiment": "generalization", "verdicts": {EXPLORATORY: "holds", "a": "holds", "b": "does not hold"},
         "replicates": {"a": True, "b": False}, "replication": "holds in part", "causes": {"rule": 1, "claim": 1}},
        {"experiment": "prop1", "verdicts": {EXPLORATORY: "holds", "a": "holds"}, "replicates": {"a": True},
         "replication": "holds", "causes": {}},
        {"experiment": "shift", "verdicts": {EXPLORATORY: "holds"}, "replicates": {}, "replication": "untestable",
         "causes": {}}]
    # More causes of one kind come first.
    _, _, mixed = replicate(explored[:2] + [row("generalization", "c", "u", 1, 0.8, 1.0, failing=0)], {
        "b": [row("generalization", "c", "s", 1, 0.45, 0.0, failing=5), row("generalization", "c", "t", 1, 0.05, 0.0),
              row("generalization", "c", "u", 1, 0.45, 0.0, failing=5)]})
    assert list(mixed.iloc[0]["causes"].items()) == [("rule", 2), ("claim", 1)]


def test_the_replication_table_has_every_run_s_rows_with_outcome_replication_and_cause():
    checks, comparison, claims = replicate(
        [row("generalization", "c", "s", 1, 0.9, 1.0, failing=0), row("generalization", "c", "s", 2, 0.9, 1.0, failing=0),
         row("shift", "c", "s", 1, 0.9, 1.0)],
        {"other": [row("generalization", "c", "s", 1, 0.45, 0.0, failing=5),
                   row("generalization", "c", "s", 2, 0.9, 1.0, failing=0), row("shift", "c", "s", 1, 0.8, 1.0)]})
    table = replication_table(checks, comparison, claims)
    assert set(table.columns) == {*REPLICATION.schema.names, "verdict"}  # the section's verdict: not written
    assert list(table.columns[-7:]) == ["run", "decided", "claim_verdict", "outcome", "replicates", "cause",
                                        "replication"]
    assert table[["run", "experiment", "offset", "outcome", "replicates", "cause", "claim_verdict",
                  "replication"]].astype(str).values.tolist() == [
        [EXPLORATORY, "generalization", "1", "holds", "", "", "holds", "does not hold"],
        [EXPLORATORY, "generalization", "2", "holds", "", "", "holds", "does not hold"],
        [EXPLORATORY, "shift", "1", "holds", "", "", "holds", "holds"],
        ["other", "generalization", "1", "holds in part", "no", "rule", "holds in part", "does not hold"],
        ["other", "generalization", "2", "holds in part", "no", "rule", "holds in part", "does not hold"],
        ["other", "shift", "1", "holds", "yes", "", "holds", "holds"]]
    to_arrow(table, REPLICATION)


def test_offsets_read_as_integers_or_floats_and_any_row_labels_are_matched_row_for_row():
    claims, spread = run_tables(row("generalization", "a", "s", 1, 0.9, 1.0), row("generalization", "b", "s", 2, 0.1, 0.0))
    claims = claims.astype({"offset": "int64"}).set_axis([5, 6])  # a table without pooled checks
    spread = spread.astype({"offset": "float64"})
    other = run_tables(row("generalization", "a", "s", None, 0.9, 0.5), row("generalization", "b", "s", 2, 0.9, 1.0))
    checks = annotated_checks({EXPLORATORY: (claims, spread), "other": other})
    assert checks["offset"].iloc[:2].tolist() == [1, 2] and pd.isna(checks["offset"].iloc[2])
    assert checks.index.tolist() == [0, 1, 2, 3] and checks["holds_fraction"].tolist() == [1.0, 0.0, 0.5, 1.0]
    assert checks["decided"].tolist() == [True, True, False, True]
    assert checks["experiment_verdict"].tolist() == ["holds in part", "holds in part", "holds", "holds"]


def test_the_section_counts_the_checks_left_measurement_because_the_data_cannot_decide():
    _, comparison, _ = replicate(
        [row("generalization", "c", "s", 1, 0.9, 1.0, failing=0), row("generalization", "c", "t", 1, 0.52, 0.6),
         row("prop1", "c", "s", 1, 0.8, 1.0, failing=0), row("prop1", "z", "s", 1, 0.8, 1.0, kind="sanity")],
        {"one": [row("generalization", "c", "s", 1, 0.05, 0.0, failing=1, seeds=1),
                 row("prop1", "z", "s", 1, 0.45, 0.3, kind="sanity")],
         "more": [row("generalization", "c", "t", 1, 0.45, 0.3), row("prop1", "c", "s", 1, 0.45, 0.0, failing=5)]})
    assert comparison["basis"].tolist() == ["one seed", "open without a per-seed count", "open without a per-seed count",
                                            "margins"]
    assert prose.undecidable_markdown(comparison) == (  # the sanity check is not counted
        "Of the 3 evidence checks that do not replicate, 1 are *measurement* because a run compared has one seed, and "
        "1 because the check is not counted per seed and the seed bootstrap leaves its outcome open in a run: for these "
        "the data cannot tell a cause, so *measurement* is a default there, not a finding.")
