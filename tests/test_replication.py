"""Replication (lengthgen/replication.py): matching checks across configs, the verdict rule and its causes."""

import pandas as pd
import pytest

from lengthgen.claims import check_identities, check_identity, with_verdicts
from lengthgen.replication import (COMPARISONS, EXPLORATORY, annotated_checks, claim_replication, compare_runs, margin,
                                   replication_table, rule_threshold, section_markdown)
from lengthgen.rule_history import history_markdown
from lengthgen.schemas.replication import REPLICATION
from lengthgen.tables import to_arrow

RULE = ">= 0.5"


def run_tables(*checks):
    """(all_claims, claim_spread) of one run from (experiment, claim, statistic, value, holds_fraction) rows,
    each checked against RULE; the spread is +-0.02 around the value, over 5 seeds."""
    rows = pd.DataFrame(checks, columns=["experiment", "claim", "statistic", "value", "holds_fraction"])
    claims = with_verdicts(rows.assign(rule=RULE, holds=rows["value"] >= 0.5)[
        ["experiment", "claim", "statistic", "value", "rule", "holds"]])
    spread = rows.assign(n_seeds=5, resamples=200, spread_low=rows["value"] - 0.02, spread_high=rows["value"] + 0.02)[
        ["experiment", "claim", "statistic", "n_seeds", "resamples", "spread_low", "spread_high", "holds_fraction"]]
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


@pytest.mark.parametrize("rule, expected", [
    (">= 0.99", (">=", 0.99)),
    (">= 5 x chance = 0.312", (">=", 0.312)),
    ("<= 0.05 (chance = 0.0625)", ("<=", 0.05)),
    ("<= 4/V = 0.25", ("<=", 0.25)),
    ("> chance + 0.05 = 0.113", (">", 0.113)),
    ("< 0.9 (fails in range)", ("<", 0.9)),
    ("< 0", ("<", 0.0)),
    ("== 1 (every seed at every offset)", ("==", 1.0)),
    ("min over ... the mean attention mass on positions < train_length_max >= 0.5", (">=", 0.5)),
    ("max over seeds ... float64 max abs attention logit change <= 1e-09", ("<=", 1e-9)),
    ("no threshold here", None),
])
def test_the_threshold_is_read_from_every_form_of_rule(rule, expected):
    assert rule_threshold(rule) == expected


def test_margin_is_the_distance_to_the_threshold_on_the_passing_side_relative_to_it():
    assert margin(0.75, ">= 0.5") == pytest.approx(0.5)
    assert margin(0.25, ">= 0.5") == pytest.approx(-0.5)
    assert margin(1e-10, "<= 1e-09") == pytest.approx(0.9)
    assert margin(-0.2, "< 0") == pytest.approx(0.2)  # a zero threshold: absolute distance
    assert margin(0.8, "== 1") == pytest.approx(-0.2) and margin(1.0, "== 1") == 0.0


def test_a_check_is_the_same_check_whatever_the_settings_put_in_its_text():
    at_v16 = check_identity("base", "K=1", "rope: mean accuracy at n=128")
    at_v8 = check_identity("base", "K=1", "rope: mean accuracy at n=96")
    assert at_v16 == at_v8 == ("base", "rope: mean accuracy at n=#", "K=1")
    assert check_identity("shift_K2", "K=2: rope x", "s")[:2] == check_identity("shift_K4", "K=4: rope x", "s")[:2]
    assert check_identity("shift_K4", "K=4: rope x", "s")[2] == "K=4"
    assert check_identity("frequency", "K=1", "lowest top-4 share over 5 seeds (untrained: 0.95 to 0.97)") == \
        check_identity("frequency", "K=1", "lowest top-4 share over 3 seeds (untrained: -0.81 to 0.3)")
    named = [check_identity("variants", "no collapse", f"{pe}, K=2: mean accuracy at n=128")[1]
             for pe in ("rope@base=100", "rope@base=1e6", "rope")]
    assert len(set(named)) == 3 and "rope@base=1e6" in named[1]  # numbers that name an encoding stay
    twice = check_identities(pd.DataFrame({"experiment": ["x", "x"], "claim": ["a", "a"], "statistic": ["s 1", "s 2"]}))
    assert list(twice["check"]) == ["a | s #", "a | s # (2)"]


def test_the_same_outcome_replicates():
    _, comparison, claims = replicate([("base", "K=1", "rope at n=128", 0.9, 1.0)],
                                      {"other": [("base", "K=1", "rope at n=96", 0.8, 1.0)]})
    assert only(comparison)["replicates"] and claims.iloc[0]["replication"] == "replicated"


def test_a_flip_the_bootstrap_leaves_open_is_measurement():
    _, comparison, claims = replicate([("base", "K=1", "s", 0.52, 0.6)], {"other": [("base", "K=1", "s", 0.45, 0.0)]})
    row = only(comparison)
    assert not row["replicates"] and row["cause"] == "measurement" and "open" in row["explanation"]
    assert "0.52 [0.5, 0.54], holds in 60% of resamples" in row["explanation"]  # the numbers, from the tables
    assert claims.iloc[0]["replication"] == "not replicated" and claims.iloc[0]["causes"] == {"measurement": 1}


def test_a_decided_flip_on_fresh_seeds_of_the_same_task_is_measurement():
    _, comparison, _ = replicate([("base", "K=1", "s", 0.9, 1.0)], {"other": [("base", "K=1", "s", 0.1, 0.0)]},
                                 same_task={"other": True})
    row = only(comparison)
    assert row["cause"] == "measurement" and "fresh seeds" in row["explanation"]


def test_a_decided_flip_on_another_task_is_the_rule_when_the_miss_is_within_the_margin_else_the_claim():
    # The exploratory value clears 0.5 by 60% of it; missing it by 10% of it is the threshold's doing.
    _, near, _ = replicate([("base", "K=1", "s", 0.8, 1.0)], {"other": [("base", "K=1", "s", 0.45, 0.0)]})
    assert only(near)["cause"] == "rule" and "misses the threshold by up to 10% of it" in only(near)["explanation"]
    # Missing it by 90% of it, more than the exploratory margin: the effect is gone.
    _, far, _ = replicate([("base", "K=1", "s", 0.8, 1.0)], {"other": [("base", "K=1", "s", 0.05, 0.0)]})
    assert only(far)["cause"] == "claim" and "clears it by 60% (median)" in only(far)["explanation"]


def test_an_offset_only_the_confirmation_has_is_predicted_only_by_an_outcome_shared_by_every_exploratory_offset():
    everywhere = [("mechanics", "K=1: pins", "s", 0.9, 1.0), ("mechanics", "K=2: pins", "s", 0.8, 1.0)]
    _, comparison, _ = replicate(everywhere, {"other": [("mechanics", "K=4: pins", "s", 0.2, 0.0)]})
    assert not only(comparison)["replicates"]  # held at K=1 and K=2, so it should hold at K=4
    partly = [("mechanics", "K=1: pins", "s", 0.9, 1.0), ("mechanics", "K=2: pins", "s", 0.2, 0.0)]
    _, comparison, claims = replicate(partly, {"other": [("mechanics", "K=4: pins", "s", 0.2, 0.0)]})
    assert comparison.empty and claims.iloc[0]["replication"] == "not tested"  # no prediction at K=4
    _, comparison, _ = replicate(partly, {"other": [("mechanics", "K=1: pins", "s", 0.9, 1.0),
                                                    ("mechanics", "K=4: pins", "s", 0.9, 1.0)]})
    assert only(comparison)["replicates"]  # K=1 as explored; K=4 is not compared


def test_a_claim_is_partly_replicated_when_it_replicates_in_some_runs_and_not_tested_where_none_runs_it():
    exploratory = [("base", "K=1", "s", 0.9, 1.0), ("shift_K1", "K=1: rope", "s", 0.9, 1.0)]
    checks, comparison, claims = replicate(exploratory, {"same": [("base", "K=1", "s", 0.8, 1.0)],
                                                         "other": [("base", "K=1", "s", 0.1, 0.0)]})
    replication = claims.set_index("family")["replication"]
    assert replication["base"] == "partly" and replication["shift"] == "not tested"
    table = replication_table(checks, comparison, claims)
    to_arrow(table, REPLICATION)  # the schema the workflow writes it with
    assert set(table.loc[table["run"] == "other", "replicates"]) == {"no"}
    assert set(table.loc[table["run"] == EXPLORATORY, "replicates"]) == {""}


def test_the_section_states_the_rule_the_numbers_and_the_history():
    checks, comparison, claims = replicate([("base", "K=1", "rope at n=128", 0.8, 1.0)],
                                           {"other": [("base", "K=1", "rope at n=96", 0.05, 0.0)]})
    run = {"name": "other", "seeds": [5], "vocab_size": 8, "train_lengths": [6, 24], "offsets": [1], "left_out": {},
           "differences": ["task.vocab_size: 16 -> 8"], "same_task": False, "note": "another task"}
    explored = {**run, "name": EXPLORATORY, "seeds": [0], "vocab_size": 16, "differences": []}
    record = {"commit": "a" * 40, "date": "2026-11-30", "subject": "freeze", "changes": [], "diffstat": "", "error": ""}
    text = section_markdown(checks, comparison, claims, [run], explored, record, ["lengthgen/rules.py"],
                            history_markdown())
    assert "| `base` | mixed" not in text and "| `base` | confirmed | not confirmed (does not replicate) |" in text
    assert "**not replicated** | claim: 1 |" in text and "0.05 [0.03, 0.07], holds in 0% of resamples" in text
    assert "`aaaaaaaaaaaa`" in text and "None of these files has changed since that commit." in text
    assert "`task.vocab_size: 16 -> 8`" in text and "| rules | fixed in | data looked at before |" in text
    assert "| nothing | another task |" in text  # the run's note says why its settings differ


def test_every_rule_of_a_real_run_is_read_back_to_its_outcome(smoke_run):
    claims = pd.read_parquet(smoke_run / "results/tables/claims.parquet")
    for row in claims.dropna(subset=["value"]).itertuples():
        comparison, threshold = rule_threshold(row.rule)
        assert COMPARISONS[comparison](row.value, threshold) == row.holds, row


def test_the_checks_of_a_real_run_have_distinct_identities_and_spreads_row_for_row(smoke_run):
    for results in (smoke_run / "results", smoke_run / "results/confirm/tiny"):
        claims = pd.read_parquet(results / "tables/claims.parquet")
        spread = pd.read_parquet(results / "tables/claim_spread.parquet")
        keys = ["experiment", "claim", "statistic"]
        assert claims[keys].equals(spread[keys])
        identities = check_identities(claims)
        # No two checks of a run share an identity even before the " (2)" suffix tells them apart.
        assert not identities["check"].str.contains(r" \(\d+\)$").any()
        assert (spread["resamples"] > 0).all() and spread["holds_fraction"].between(0, 1).all()
