"""The mechanics statistics on heads whose attention is known in closed form."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import markdown_rows
from lengthgen.tables import io as tables
from lengthgen.checks.check import check, with_keys
from lengthgen.experiments.mechanics import analysis as mechanics
from lengthgen.models.head import AttentionHead, HeadConfig
from lengthgen.experiments.mechanics import figures as plots
from lengthgen.experiments.mechanics import section as prose
from lengthgen.tables.registry import schema_named
from lengthgen.tables.core import CLAIMS
from lengthgen.training.loop import init_head

TRAIN_MAX = 32
VOCAB = 4
SETTINGS = {"task": {"vocab_size": VOCAB, "train_length_min": 8, "train_length_max": TRAIN_MAX,
                     "eval_lengths": [16, 64, 128]},
            "model": {"learned_init_std": 0.02, "init": "torch_default"}}


def pinned_learned_head(position: int, logit: float, trained_positions: int = 256) -> AttentionHead:
    """A learned head whose query scores ``logit`` at key ``position`` and 0 at every other key.

    Token embeddings and the key projection's bias are zero, the query is its bias alone
    (2 * e0), the key is the position's table row, and only row ``position`` is nonzero
    (logit * e0): score_t = 2 * table[t, 0] / sqrt(4) = table[t, 0].
    """
    model = AttentionHead(HeadConfig(VOCAB, 4, "learned", trained_positions))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        model.query.bias[0] = 2.0
        model.key.weight.copy_(torch.eye(4))
        model.encoding.table[position, 0] = logit
    return model.eval()


def query_following_rope_head(strength: float = 20.0) -> AttentionHead:
    """A d=2 rope head with score(m, n) = strength * cos(m - n): it attends to the query itself."""
    model = AttentionHead(HeadConfig(VOCAB, 2, "rope", 1024))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        model.query.bias[0] = math.sqrt(strength) * 2**0.25
        model.key.bias[0] = math.sqrt(strength) * 2**0.25
    return model.eval()


def token_sets(lengths, n=20, seed=0):
    rng = torch.Generator().manual_seed(seed)
    return {length: torch.randint(VOCAB, (n, length), generator=rng) for length in lengths}


@settings(max_examples=25, deadline=None)
@given(position=st.integers(0, TRAIN_MAX - 1), logit=st.floats(0.5, 12.0),
       extra=st.integers(1, 200), offset=st.integers(1, 3))
def test_pinned_head_matches_closed_form(position, logit, extra, offset):
    length = TRAIN_MAX + extra  # past the training range
    model = pinned_learned_head(position, logit)
    row = mechanics.measure_mechanics(model, token_sets([length]), offset, 0, TRAIN_MAX)["mechanics_by_length"].iloc[0]
    partition = math.exp(logit) + length - 1  # one key at e^logit, every other at e^0
    assert row["modal_position"] == position
    assert row["modal_fraction"] == 1.0
    assert row["modal_in_training_range"] and row["past_training_range"]
    assert row["mass_in_training_range"] == pytest.approx((math.exp(logit) + TRAIN_MAX - 1) / partition, rel=1e-5)
    assert row["max_weight"] == pytest.approx(math.exp(logit) / partition, rel=1e-5)
    target_score = logit if position == length - 1 - offset else 0.0
    assert row["target_attention"] == pytest.approx(math.exp(target_score) / partition, rel=1e-5)


def test_tables_have_their_schemas_and_normalized_weights():
    model = pinned_learned_head(5, 3.0)
    eval_sets = {length: (tokens, tokens[:, -2]) for length, tokens in token_sets([16, 64]).items()}
    measured = mechanics.measure_mechanics(model, eval_sets, 1, 7, TRAIN_MAX)
    assert tuple(measured) == mechanics.TABLES
    for name, frame in measured.items():
        tables.to_arrow(frame, schema_named(name))  # raises if a column is missing or mistyped
        assert set(frame[["pe", "offset", "seed"]].itertuples(index=False)) == {("learned", 1, 7)}
    histogram, profile = measured["mechanics_argmax_histogram"], measured["mechanics_attention_profile"]
    assert histogram.groupby("length")["count"].sum().tolist() == [20, 20]
    assert profile.groupby("length")["mean_weight"].sum().to_numpy() == pytest.approx([1.0, 1.0])
    assert profile.groupby("length")["position"].max().tolist() == [15, 63]


def test_argmax_statistics_counts_the_mode():
    weights = torch.zeros(4, 40, dtype=torch.float64)
    weights[[0, 1, 2, 3], [3, 3, 3, 35]] = 0.75  # three sequences peak at 3, one at 35
    weights[:, 36] = 0.25
    stats = mechanics.argmax_statistics(weights, TRAIN_MAX, offset=2)
    assert stats["modal_position"] == 3 and stats["modal_fraction"] == 0.75
    assert stats["mass_in_training_range"] == pytest.approx(0.75 * 0.75)
    assert stats["target_attention"] == pytest.approx(0.0)  # position 40 - 1 - 2 = 37
    assert stats["max_weight"] == pytest.approx(0.75)


def test_rope_head_follows_the_query():
    by_length = mechanics.measure_mechanics(query_following_rope_head(), token_sets([16, 64, 256]), 1, 0,
                                            TRAIN_MAX)["mechanics_by_length"]
    assert by_length["modal_position"].tolist() == [15, 63, 255]
    assert by_length["modal_in_training_range"].tolist() == [True, False, False]


def learned_runs(learned_heads):
    """(run, model) pairs as the runner's ModelSet yields them: the learned heads (seed i), a rope head (seed 0)."""
    runs = [({"pe": "learned", "seed": seed, "offset": 1}, head) for seed, head in enumerate(learned_heads)]
    return runs + [({"pe": "rope", "seed": 0, "offset": 1}, query_following_rope_head())]


def measured_runs(learned_heads, lengths=(16, 64, 128)):
    """The experiment's tables of the heads, through its ``analyze``; each run has its own sequences."""
    measured = [mechanics.analyze({"models": [(run, head)], "eval_sets": {1: token_sets(lengths, seed=run["seed"])}},
                                  SETTINGS) for run, head in learned_runs(learned_heads)]
    return {name: pd.concat([tables[name] for tables in measured], ignore_index=True) for name in measured[0]}


def keyed_checks(by_length, untrained=None):
    """The checks of ``by_length``, beside ``untrained`` (default: the same rows, so the heads at init pass what
    the trained ones pass)."""
    checked = {"mechanics_by_length": by_length,
               "mechanics_untrained_by_length": by_length if untrained is None else untrained}
    return with_keys(mechanics.checks(checked, SETTINGS), "mechanics", "mechanics")


def test_analyze_measures_every_run_on_the_sets_of_its_offset():
    heads = learned_runs([pinned_learned_head(20, 10.0)])
    eval_sets = {1: token_sets([64, 128]), 2: token_sets([48])}  # every head here has offset 1
    measured = mechanics.analyze({"models": heads, "eval_sets": eval_sets}, SETTINGS)
    assert set(measured) == {*mechanics.TABLES, "mechanics_untrained_by_length"}
    for name, table in measured.items():
        tables.to_arrow(table, schema_named(name))
    untrained = measured["mechanics_untrained_by_length"]
    assert untrained[["pe", "seed", "length"]].equals(measured["mechanics_by_length"][["pe", "seed", "length"]])
    # the learned head at its init, not the hand-set pin: its argmax is nowhere in particular
    assert (untrained.loc[untrained["pe"] == "learned", "modal_fraction"] < 0.5).all()
    by_length = measured["mechanics_by_length"]
    assert sorted(by_length[["pe", "length"]].itertuples(index=False)) == [
        ("learned", 64), ("learned", 128), ("rope", 64), ("rope", 128)]
    assert by_length.loc[by_length["pe"] == "learned", "modal_position"].tolist() == [20, 20]


def test_checks_hold_for_pinned_learned_and_query_following_rope():
    measured = measured_runs([pinned_learned_head(20, 10.0), pinned_learned_head(7, 10.0)])
    checks = keyed_checks(measured["mechanics_by_length"], measured["mechanics_untrained_by_length"])
    tables.to_arrow(checks, CLAIMS)
    assert len(checks) == 5 and checks["holds"].all()
    # each rule text sets the statistic of the same heads at init beside the threshold
    assert checks["rule"].str.contains(r"\(untrained heads: [-0-9.e]+, (?:pass|fail)\)$").all()
    assert (checks["offset"] == 1).all() and (checks["kind"] == "evidence").all()
    assert not checks["claim"].str.contains("K=").any()  # the offset is a column, not part of the name


def test_checks_fail_for_a_weak_or_moving_pin():
    # logit 1: e^1 against 127 keys at e^0, so the mass on the training range is far below 0.5.
    weak = keyed_checks(measured_runs([pinned_learned_head(20, 1.0)])["mechanics_by_length"])
    assert not weak.set_index("claim").filter(like="mass", axis=0)["holds"].any()
    by_length = measured_runs([pinned_learned_head(20, 10.0)])["mechanics_by_length"]
    moved = by_length["pe"].eq("learned") & by_length["length"].eq(128)
    by_length.loc[moved, "modal_position"] = 21  # one position of jitter is the same position
    assert keyed_checks(by_length).set_index("claim").filter(like="same", axis=0)["holds"].item()
    by_length.loc[moved, "modal_position"] = 22  # two positions from 20 is a moving pin
    checks = keyed_checks(by_length).set_index("claim")
    assert not checks.filter(like="same", axis=0)["holds"].item()
    assert checks.filter(like="inside the training range", axis=0)["holds"].all()


def test_untrained_heads_fail_every_pinning_check():
    """The baseline the rule was argued from in words, measured: tiny learned heads at their seeded init (three
    seeds, the default table std) attend nowhere in particular, so none of the four pinning checks holds for
    them, and the rule text says so."""
    config = HeadConfig(vocab_size=16, d_model=16, pe="learned", trained_positions=TRAIN_MAX, learned_init_std=0.1)
    untrained = pd.concat([mechanics.measure_mechanics(init_head(config, seed).eval(),
                                                       token_sets([64, 128, 256], n=200, seed=seed), 1, seed,
                                                       TRAIN_MAX)["mechanics_by_length"] for seed in range(3)])
    pinning = [statistic for statistic in mechanics.pinning_statistics(untrained, 1)
               if statistic.claim.startswith("learned")]
    assert len(pinning) == 4 and not any(check(*statistic)["holds"] for statistic in pinning)
    trained = measured_runs([pinned_learned_head(20, 10.0)])["mechanics_by_length"]
    checks = keyed_checks(trained, pd.concat([untrained, trained[trained["pe"] == "rope"]])).set_index("claim")
    learned = checks[checks.index.str.startswith("learned")]
    assert learned["holds"].all() and learned["rule"].str.endswith(", fail)").all()


def test_missing_encoding_gives_checks_that_do_not_hold():
    by_length = measured_runs([pinned_learned_head(20, 10.0)])["mechanics_by_length"]
    checks = keyed_checks(by_length[by_length["pe"] == "learned"])
    rope_row = checks[checks["claim"].str.contains("rope")].iloc[0]
    assert not rope_row["holds"] and np.isnan(rope_row["value"])


def test_section():
    measured = measured_runs([pinned_learned_head(20, 10.0)])
    by_length = measured["mechanics_by_length"]
    text = prose.section(measured, keyed_checks(by_length, measured["mechanics_untrained_by_length"]), SETTINGS)
    assert text.startswith("## mechanics")
    learned, rope = (text.split(f"**{pe}**")[1] for pe in ("learned", "rope"))
    # the learned head's modal position and its fraction at the mode, from the table, and the same head at init
    rows = {tuple(row[:2]): row for row in markdown_rows(learned, "|K|length|")}
    assert rows["1", "128"][2:4] == ["20", "1.00 [1.00, 1.00]"]
    untrained = measured["mechanics_untrained_by_length"].query("pe == 'learned' and length == 128").iloc[0]
    at_init = f"{untrained['modal_fraction']:.2f}"
    assert rows["1", "128"][4] == f"{at_init} [{at_init}, {at_init}]"
    assert ["1", "128", "127"] in [row[:3] for row in markdown_rows(rope, "|K|length|")]
    assert "learned table initialized with std 0.02" in text
    # under a named normal init the table was drawn at the init's std, not at its own
    under_normal = {**SETTINGS, "model": {"learned_init_std": 0.02, "init": "normal@std=0.1"}}
    assert "learned table initialized with std 0.1." in prose.section(measured, keyed_checks(
        by_length, measured["mechanics_untrained_by_length"]), under_normal)
    assert "(figures/mechanics.png)" in text
    assert len(markdown_rows(text, "|claim|K|statistic|")) == 5
    # the claim's primary number first: the share of cells past the range with the modal position inside it (the
    # pinned head at 20 < 32 at 64 and 128; length 16 is in range), the share of sequences at it beside
    untrained_past = measured["mechanics_untrained_by_length"].query("pe == 'learned' and past_training_range")
    at_init = untrained_past["modal_fraction"]
    assert markdown_rows(text, "|K|cellspasttherange|") == [[
        "1", "2", "100%", f"{untrained_past['modal_in_training_range'].mean():.0%}", "1.00 [1.00, 1.00]",
        f"{at_init.mean():.2f} [{at_init.min():.2f}, {at_init.max():.2f}]"]]
    assert text.index("primary number") < text.index("**learned**")
    # the pinning rule above the checks is what they test, not a statement that the head meets it
    assert "**What the checks test**: the learned head pins where its modal position lies inside the range" in text
    assert "As measured" not in text


def test_figure_shows_the_pinned_and_the_query_following_head():
    measured = measured_runs([pinned_learned_head(20, 10.0)])
    figures = plots.draw(measured, SETTINGS)
    assert set(figures) == {"mechanics"}
    histogram, modal, mass, fraction, learned_map, rope_map = figures["mechanics"].axes
    medians = {line.get_label(): line for line in modal.get_lines() if "median" in line.get_label()}
    # lengths 16, 64, 128: at 16 the pinned key is not there, and the all-equal logits leave the argmax at 0
    assert medians["learned (median of runs)"].get_ydata().tolist() == [0, 20, 20]
    assert medians["rope (median of runs)"].get_ydata().tolist() == [15, 63, 127]
    maps = {line.get_label(): line for line in learned_map.get_lines()}
    assert maps["n=128"].get_ydata().argmax() == 20 and maps["n=128"].get_ydata().max() > 0.9
    rope_maps = {line.get_label(): line for line in rope_map.get_lines()}
    assert rope_maps["n=128"].get_ydata().argmax() == 127
    for ax in figures["mechanics"].axes:  # every legend lies outside its panel, under it
        legend = ax.get_legend().get_window_extent()
        assert legend.y1 <= ax.get_window_extent().y0
