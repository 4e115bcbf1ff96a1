"""The mechanics statistics on heads whose attention is known in closed form."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lengthgen import tables
from lengthgen.experiments import mechanics
from lengthgen.model import AttentionHead, HeadConfig
from lengthgen.plots.mechanics import plot_mechanics
from lengthgen.schemas.core import CLAIMS
from lengthgen.schemas.mechanics import MECHANICS_ARGMAX_HISTOGRAM, MECHANICS_ATTENTION_PROFILE, MECHANICS_BY_LENGTH

TRAIN_MAX = 32
VOCAB = 4


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
    row = mechanics.measure_mechanics(model, token_sets([length]), offset, 0, TRAIN_MAX)[MECHANICS_BY_LENGTH].iloc[0]
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
    for kind, frame in measured.items():
        tables.to_arrow(frame, kind)  # raises if a column is missing or mistyped
        assert set(frame[["pe", "offset", "seed"]].itertuples(index=False)) == {("learned", 1, 7)}
    histogram, profile = measured[MECHANICS_ARGMAX_HISTOGRAM], measured[MECHANICS_ATTENTION_PROFILE]
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
                                            TRAIN_MAX)[MECHANICS_BY_LENGTH]
    assert by_length["modal_position"].tolist() == [15, 63, 255]
    assert by_length["modal_in_training_range"].tolist() == [True, False, False]


def measured_runs(learned_heads, lengths=(16, 64, 128)):
    frames = [mechanics.measure_mechanics(head, token_sets(lengths, seed=seed), 1, seed, TRAIN_MAX)
              for seed, head in enumerate(learned_heads)]
    frames.append(mechanics.measure_mechanics(query_following_rope_head(), token_sets(lengths), 1, 0, TRAIN_MAX))
    return {kind: pd.concat([frame[kind] for frame in frames], ignore_index=True) for kind in frames[0]}


def test_claims_hold_for_pinned_learned_and_query_following_rope():
    measured = measured_runs([pinned_learned_head(20, 10.0), pinned_learned_head(7, 10.0)])
    claims = mechanics.claims_mechanics(measured[MECHANICS_BY_LENGTH])
    tables.to_arrow(claims, CLAIMS)
    assert len(claims) == 5 and claims["holds"].all()
    assert (claims["experiment"] == "mechanics").all()


def test_claims_fail_for_a_weak_or_moving_pin():
    # logit 1: e^1 against 127 keys at e^0, so the mass on the training range is far below 0.5.
    weak = mechanics.claims_mechanics(measured_runs([pinned_learned_head(20, 1.0)])[MECHANICS_BY_LENGTH])
    assert not weak.set_index("claim").filter(like="mass", axis=0)["holds"].any()
    by_length = measured_runs([pinned_learned_head(20, 10.0)])[MECHANICS_BY_LENGTH]
    moved = by_length["pe"].eq("learned") & by_length["length"].eq(128)
    by_length.loc[moved, "modal_position"] = 21
    claims = mechanics.claims_mechanics(by_length).set_index("claim")
    assert not claims.filter(like="same", axis=0)["holds"].item()
    assert claims.filter(like="inside the training range", axis=0)["holds"].all()


def test_missing_encoding_gives_claims_that_do_not_hold():
    by_length = measured_runs([pinned_learned_head(20, 10.0)])[MECHANICS_BY_LENGTH]
    claims = mechanics.claims_mechanics(by_length[by_length["pe"] == "learned"])
    rope_row = claims[claims["claim"].str.contains("rope")].iloc[0]
    assert not rope_row["holds"] and np.isnan(rope_row["value"])


def test_section_and_figure(tmp_path):
    measured = measured_runs([pinned_learned_head(20, 10.0)])
    by_length = measured[MECHANICS_BY_LENGTH]
    claims = mechanics.claims_mechanics(by_length)
    text = mechanics.section_markdown(by_length, claims, TRAIN_MAX, 0.02)
    assert text.startswith("## mechanics")
    assert "| 1 | 128 | 20 | 1.00, 1.00 |" in text  # the learned head's modal position from the table
    assert "(figures/mechanics.png)" in text
    path = tmp_path / "mechanics.png"
    plot_mechanics(by_length, measured[MECHANICS_ARGMAX_HISTOGRAM], measured[MECHANICS_ATTENTION_PROFILE],
                   8, TRAIN_MAX, path, dpi=40)
    assert path.read_bytes()[:4] == b"\x89PNG"
