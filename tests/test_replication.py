"""Replication (lengthgen/replication.py): matching checks across configs, the verdict rule and its causes."""

import pandas as pd
import pytest

from conftest import markdown_rows
from lengthgen.claims import COMPARISONS, KEY, check, with_keys, with_verdicts
from lengthgen.plots.replication import replication_figure
from lengthgen.replication import (EXPLORATORY, SPREAD_KEY, annotated_checks, claim_replication, compare_runs, margin,
                                   replication_table, section_markdown, worked_example)
from lengthgen.rule_history import RULE_HISTORY, history_markdown
from lengthgen.table_schemas.replication import REPLICATION
from lengthgen.tables import to_arrow

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
    claims = with_verdicts(checks.drop(columns=spread_columns))
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
    assert only(comparison)["replicates"] and claims.iloc[0]["replication"] == "replicated"
    # Another statistic (a registry name with parameters is a name) is another check: nothing to compare.
    _, comparison, claims = replicate([row("variants", "no collapse", "rope@base=100: mean accuracy", 2, 0.9, 1.0)],
                                      {"other": [row("variants", "no collapse", "rope@base=1e6: mean accuracy", 2,
                                                     0.1, 0.0)]})
    assert comparison.empty and claims.iloc[0]["replication"] == "not tested"


def test_a_pooled_check_is_matched_with_the_pooled_check():
    _, comparison, _ = replicate([row("prop1", "mean field predicts", "largest error", None, 0.9, 1.0)],
                                 {"other": [row("prop1", "mean field predicts", "largest error", None, 0.1, 0.0)]})
    assert not only(comparison)["replicates"] and only(comparison)["exploratory_outcome"] == "holds"


def test_the_same_outcome_replicates():
    _, comparison, claims = replicate([row("generalization", "c", "s", 1, 0.9, 1.0)],
                                      {"other": [row("generalization", "c", "s", 1, 0.8, 1.0)]})
    assert only(comparison)["replicates"] and claims.iloc[0]["replication"] == "replicated"


def test_a_flip_the_bootstrap_leaves_open_without_per_seed_counts_is_measurement():
    # A statistic no single seed gives a value (failing None): the bootstrap alone decides.
    _, comparison, claims = replicate([row("generalization", "c", "s", 1, 0.52, 0.6)],
                                      {"other": [row("generalization", "c", "s", 1, 0.45, 0.0)]})
    found = only(comparison)
    assert not found["replicates"] and found["cause"] == "measurement" and "open" in found["explanation"]
    assert "no per-seed count" in found["explanation"]
    assert "exploratory K=1: 0.52 [0.5, 0.54], holds in 60% of resamples, no per-seed value" in found["explanation"]
    assert claims.iloc[0]["replication"] == "not replicated" and claims.iloc[0]["causes"] == {"measurement": 1}


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
    text = worked_example()
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
    assert comparison.empty and claims.iloc[0]["replication"] == "not tested"  # no prediction at K=4
    _, comparison, _ = replicate(partly, {"other": [row("mechanics", "pins", "s", 1, 0.9, 1.0),
                                                    row("mechanics", "pins", "s", 4, 0.9, 1.0)]})
    assert only(comparison)["replicates"]  # K=1 as explored; K=4 is not compared


def test_a_claim_is_partly_replicated_when_it_replicates_in_some_runs_and_not_tested_where_none_runs_it():
    exploratory = [row("generalization", "c", "s", 1, 0.9, 1.0), row("shift", "rope", "s", 1, 0.9, 1.0),
                   row("shift", "rope", "s", 2, 0.9, 1.0)]
    checks, comparison, claims = replicate(exploratory, {"same": [row("generalization", "c", "s", 1, 0.8, 1.0)],
                                                         "other": [row("generalization", "c", "s", 1, 0.1, 0.0)]})
    replication = claims.set_index("experiment")["replication"]
    assert replication["generalization"] == "partly" and replication["shift"] == "not tested"
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
    assert set(checks["experiment_verdict"]) == {"confirmed"}  # the failing sanity check is in no verdict
    assert claims.iloc[0]["replication"] == "replicated" and claims.iloc[0]["causes"] == {}
    assert list(comparison.loc[comparison["kind"] == "sanity", "replicates"]) == [False]
    run = {"name": "other", "seeds": [5], "vocab_size": 16, "train_lengths": [6, 24], "offsets": [1], "left_out": {},
           "differences": [], "same_task": False, "note": ""}
    record = {"commit": "a" * 40, "date": "2026-11-30", "subject": "freeze", "changes": [], "diffstat": "", "error": ""}
    text = section_markdown(checks, comparison, claims, [run], {**run, "name": EXPLORATORY}, record, [], "")
    assert "1 of 1 compared do not replicate" in text and "*rope \\| float64 identity*: holds -> fails" in text
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
    text = section_markdown(checks, comparison, claims, [run], explored, record, ["lengthgen/thresholds.py"],
                            history_markdown())
    assert markdown_rows(text, "|claim|exploratory|other|replication|whynot(checks)|") == [
        ["`generalization`", "confirmed", "not confirmed (does not replicate)", "**not replicated**", "claim: 1"]]
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
    assert labels == ["generalization: c | s [not replicated]", "generalization (sanity): c | identity [replicated]"]
    assert [label.get_text() for label in axes.get_xticklabels()] == [EXPLORATORY, "other"]
    shares = axes.get_images()[0].get_array()
    assert shares[0, 0] == pytest.approx(0.75) and shares[0, 1] == 0.0  # mean over K=1 and K=2; K=1 only
    assert [text.get_text() for text in axes.texts] == ["holds", "fails", "holds", "holds"]


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


def test_a_confirmation_run_written_before_a_rename_is_matched_under_the_current_name():
    """catalog.RENAMED_EXPERIMENTS: a committed confirmation run's checks of base are checks of generalization."""
    checks, comparison, claims = replicate([row("generalization", "c", "s", 1, 0.9, 1.0),
                                            row("multiseed", "generalization: rope", "s", None, 1.0, 1.0)],
                                           {"other": [row("base", "c", "s", 1, 0.8, 1.0),
                                                      row("multiseed", "base: rope", "s", None, 1.0, 1.0)]})
    assert set(checks["experiment"]) == {"generalization", "multiseed"}
    assert comparison["replicates"].all() and len(comparison) == 2
    assert claims.set_index("experiment")["replication"]["generalization"] == "replicated"
