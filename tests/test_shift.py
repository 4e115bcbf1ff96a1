"""Shift equivariance: rope logits are invariant to a shift of every position id, absolute ones are not."""

import math

import numpy as np
import pandas as pd
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lengthgen.tables import io as tables
from lengthgen.checks.check import with_keys
from lengthgen.experiments.shift import analysis as shift
from lengthgen.experiments.shift.figures import draw
from lengthgen.experiments.shift.section import section
from lengthgen.tables.core import CLAIMS
from lengthgen.experiments.shift.tables import SHIFT_CHANGES
from lengthgen.experiments.shift.thresholds import ABSOLUTE_MIN_CHANGE, ROPE_MAX_CHANGE

VOCAB, D_MODEL = 8, 16


# A table of 64 rows and no rows past them: position ids from 64 on are not defined.
FINITE_TABLE = "randomized_learned@noise_max_length=64"

def tokens_of(length: int, n: int = 8, seed: int = 0) -> torch.Tensor:
    return torch.randint(VOCAB, (n, length), generator=torch.Generator().manual_seed(seed))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), length=st.integers(2, 48),
       shifts=st.lists(st.integers(1, 100_000), min_size=1, max_size=3))
def test_rope_logits_are_shift_invariant_in_float64(seed, length, shifts):
    model = shift.untrained_head("rope", VOCAB, D_MODEL, 64, seed)
    changes = shift.shift_changes(model, tokens_of(length, seed=seed), shifts, dtypes=("float64",))
    assert changes["defined"].all()
    assert (changes["attention_logit_change"] <= 1e-9).all()
    assert (changes["output_logit_change"] <= 1e-9).all()


def test_rope_float32_change_is_rounding_sized():
    model = shift.untrained_head("rope", VOCAB, D_MODEL, 64, 0)
    changes = shift.shift_changes(model, tokens_of(32), [1, 1000, 100_000], dtypes=("float32",))
    scale = changes["attention_logit_scale"].iloc[0]
    assert (changes["attention_logit_change"] <= 1e-5 * max(scale, 1.0)).all()


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), shift_by=st.integers(1, 100_000))
def test_sinusoidal_logits_change_under_a_shift(seed, shift_by):
    model = shift.untrained_head("sinusoidal", VOCAB, D_MODEL, 64, seed)
    changes = shift.shift_changes(model, tokens_of(16, seed=seed), [shift_by])
    # The encoding is added to the embeddings, O(1) in size: the logits move well above rounding.
    assert (changes["attention_logit_change"] > 1e-4).all()


def test_learned_logits_change_at_every_shift():
    # Rows past the 64 stored ones are drawn from their seeded init: every shift is defined.
    model = shift.untrained_head("learned", VOCAB, D_MODEL, 64, 0)
    changes = shift.shift_changes(model, tokens_of(32), [1, 32, 33, 100_000])
    assert changes["defined"].all() and (changes["attention_logit_change"] > 1e-6).all()


def test_shifts_past_a_finite_table_are_missing():
    model = shift.untrained_head(FINITE_TABLE, VOCAB, D_MODEL, 64, 0)  # rows 0..63, no more
    changes = shift.shift_changes(model, tokens_of(32), [1, 32, 33, 1000]).set_index(["dtype", "shift"])
    # length 32 shifted by s uses ids s..s+31: defined while s + 31 <= 63.
    assert changes["defined"].groupby("shift").all().to_dict() == {1: True, 32: True, 33: False, 1000: False}
    undefined = changes[~changes["defined"]]
    assert undefined["attention_logit_change"].isna().all() and undefined["output_logit_change"].isna().all()
    assert (changes.loc[changes["defined"], "attention_logit_change"] > 1e-6).all()


def test_shift_leaves_the_callers_model_in_float32():
    model = shift.untrained_head("rope", VOCAB, D_MODEL, 64, 0)
    shift.shift_changes(model, tokens_of(8), [10])
    assert all(parameter.dtype == torch.float32 for parameter in model.parameters())


def measured(pes=("rope", "learned", "sinusoidal"), seeds=(0, 1), offset=1):
    frames = []
    for pe in pes:
        for seed in seeds:
            model = shift.untrained_head(pe, VOCAB, D_MODEL, 64, seed)
            frames.append(shift.measure_shift(model, {32: (tokens_of(32), None)}, [1, 10, 100], offset, seed,
                                              trained=False))
    return pd.concat(frames, ignore_index=True)


class Heads(list):
    """(run, model) pairs with the settings every model holds, as the runner's ``ModelSet`` gives them."""

    expected = {"vocab_size": VOCAB, "d_model": D_MODEL, "trained_positions": 64}


def test_analyze_measures_the_untrained_encodings_at_init_under_every_sweep_seed():
    rope = shift.untrained_head("rope", VOCAB, D_MODEL, 64, 5)
    inputs = {"models": Heads([({"pe": "rope", "seed": 5, "offset": 2}, rope)]),
              "eval_sets": {2: {16: (tokens_of(16), None), 32: (tokens_of(32), None)}}}
    settings = {"offset": 2, "sweep": {"pe": ["rope"], "seed": [5, 6]},
                "shift": {"shifts": [1, 100], "lengths": [32], "pe_at_init": ["rope", "sinusoidal"]}}
    changes = shift.analyze(inputs, settings)["shift_changes"]
    tables.to_arrow(changes, SHIFT_CHANGES)
    runs = changes.groupby(["pe", "seed", "trained"]).size()
    # rope is the sweep's, so only its trained head; sinusoidal at init under each sweep seed; 2 dtypes x 2 shifts.
    assert runs.to_dict() == {("rope", 5, True): 4, ("sinusoidal", 5, False): 4, ("sinusoidal", 6, False): 4}
    assert set(changes["length"]) == {32} and set(changes["offset"]) == {2}


def checks_of(changes: pd.DataFrame, offset: int = 1) -> pd.DataFrame:
    return with_keys(shift.checks({"shift_changes": changes}, {"offset": offset}), "shift", f"shift_K{offset}")


def test_checks_on_untrained_heads():
    changes = measured()
    tables.to_arrow(changes, SHIFT_CHANGES)
    checks = checks_of(changes)
    tables.to_arrow(checks, CLAIMS)
    checks = checks.set_index("claim")
    assert (checks["offset"] == 1).all()
    rope = checks.filter(like="rope", axis=0).iloc[0]
    assert rope["holds"] and rope["kind"] == "sanity"  # an identity of the encoding: only a bug fails it
    # Heads at init test the code, not what training did: their logits move by more than rounding unless the
    # positions never reach them. (Untrained learned rows are std-0.02 noise: they need not reach O(1).)
    sinusoidal = checks.filter(like="sinusoidal", axis=0).iloc[0]
    assert sinusoidal["holds"] and sinusoidal["kind"] == "sanity"
    assert (sinusoidal["comparison"], sinusoidal["threshold"]) == (">", ROPE_MAX_CHANGE)


def test_a_trained_absolute_head_is_evidence_held_to_order_one():
    changes = measured(pes=("rope", "sinusoidal")).assign(trained=True)
    sinusoidal = checks_of(changes).set_index("claim").filter(like="sinusoidal", axis=0).iloc[0]
    assert sinusoidal["kind"] == "evidence" and sinusoidal["threshold"] == ABSOLUTE_MIN_CHANGE
    frozen = changes.assign(attention_logit_change=np.where(changes["pe"] == "sinusoidal", 0.05,
                                                            changes["attention_logit_change"]))
    assert not checks_of(frozen).set_index("claim").filter(like="sinusoidal", axis=0)["holds"].item()


def test_an_absolute_head_at_init_that_does_not_move_is_a_bug():
    changes = measured(pes=("rope", "sinusoidal"))
    frozen = changes.assign(attention_logit_change=np.where(changes["pe"] == "sinusoidal", 1e-12,
                                                            changes["attention_logit_change"]))
    sinusoidal = checks_of(frozen).set_index("claim").filter(like="sinusoidal", axis=0).iloc[0]
    assert not sinusoidal["holds"] and sinusoidal["kind"] == "sanity"


def test_checks_keep_their_names_at_another_offset():
    changes = measured()
    names = checks_of(changes)[["claim", "statistic"]]
    other = checks_of(changes.assign(offset=3), offset=3)
    pd.testing.assert_frame_equal(names, other[["claim", "statistic"]])
    assert (other["offset"] == 3).all()


def test_checks_fail_when_rope_moves_or_an_encoding_is_missing():
    changes = measured(pes=("rope", "learned"))
    broken = changes.assign(attention_logit_change=np.where(changes["pe"] == "rope", 1e-6,
                                                            changes["attention_logit_change"]))
    checks = checks_of(broken).set_index("claim")
    assert not checks.filter(like="rope", axis=0)["holds"].item()
    sinusoidal = checks.filter(like="sinusoidal", axis=0).iloc[0]
    assert not sinusoidal["holds"] and math.isnan(sinusoidal["value"])


def test_section_and_figure():
    finite = shift.untrained_head(FINITE_TABLE, VOCAB, D_MODEL, 64, 0)
    changes = pd.concat([measured(), measured(pes=(FINITE_TABLE,), seeds=(0,)),
                         shift.measure_shift(finite, {32: tokens_of(32)}, [1000], 1, 0, trained=False)],
                        ignore_index=True)
    text = section({"shift_changes": changes}, checks_of(changes), {"offset": 1})
    assert text.startswith("## shift_K1")
    rows = {tuple(cell.strip() for cell in line.strip("|").split("|")[:2]): [cell.strip() for cell in
                                                                           line.strip("|").split("|")[2:]]
            for line in text.splitlines() if line.startswith("| ")}
    assert rows[("encoding", "dtype")] == ["s=1", "s=10", "s=100", "s=1000"]
    # The finite table has 64 rows: from s = 100 the shifted ids 100..131 are past it; s = 1000 ran for it only.
    measured_at_10, *past_the_table = rows[(FINITE_TABLE, "float64")][1:]
    assert float(measured_at_10) > 0 and past_the_table == ["missing", "missing"]
    assert rows[("learned", "float64")][-1] == "-" and rows[("rope", "float64")][-1] == "-"
    assert f"{FINITE_TABLE} at length 32 for s >= 100." in text
    assert "Sanity checks" in text and "(figures/shift_equivariance_K1.png)" in text
    # the two halves of the paper's sentence stated apart: the shift tests the first, the errors section the second
    assert "(1) Rotary encodings make the attention logit a function of the relative offset alone" in text
    assert "(2) So the rule learned at training lengths is reproduced at every longer length: a shift cannot test " \
           "this, since" in text

    figures = draw({"shift_changes": changes}, {"offset": 1})
    assert list(figures) == ["shift_equivariance_K1"]
    attention = figures["shift_equivariance_K1"].axes[0]
    bold = {line.get_label(): line for line in attention.get_lines() if line.get_label().endswith("float64")}
    # The bold curve of each encoding is its largest change over seeds and lengths at each shift.
    worst = changes[(changes["pe"] == "sinusoidal") & (changes["dtype"] == "float64")].groupby("shift")[
        "attention_logit_change"].max()
    np.testing.assert_allclose(bold["sinusoidal, float64"].get_ydata(), worst.to_numpy())
    assert (bold["rope, float64"].get_ydata() <= 1e-9).all()
