"""prop1: the dilution-law predictors against closed forms and exact enumeration."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lengthgen.tables import io as tables
from lengthgen.checks.check import with_keys
from lengthgen.experiments.prop1 import analysis as prop1
from lengthgen.science import dilution
from lengthgen.science import prediction_errors as errors_of_predictions
from lengthgen.science.dilution import (attention_profiles, exact_target_attention, kernel_softmax_weights, predict_dilution,
                                profile_weights, ranking_probability, readout_accuracy, token_outputs)
from lengthgen.experiments.prop1.analysis import (compare_with_measured, kernel_profile, kernel_summary,
                                                  prediction_checks, ranking_checks, untrained_comparison)
from lengthgen.experiments.prop1.summaries import best_predictor, scope_offset
from lengthgen.science.prediction_errors import (ATTENTION_PREDICTORS, PREDICTORS, PROFILE_PREDICTORS, prediction_errors,
                                         trivial_predictions, with_baselines)
from lengthgen.science.kernel import logit_kernel
from lengthgen.models.head import AttentionHead, HeadConfig
from lengthgen.experiments.prop1.figures import ACCURACY_ONLY, PREDICTOR_STYLES, draw
from lengthgen.experiments.prop1.section import predictor_choice, section
from lengthgen.checks.rule_history import RuleChange
from lengthgen.tables.core import CLAIMS
from lengthgen.experiments.prop1.tables import (PROP1_ERROR, PROP1_KERNEL, PROP1_KERNEL_SUMMARY, PROP1_PREDICTION,
                                           PROP1_UNTRAINED_PREDICTION)
from lengthgen.task import make_eval_set
from lengthgen.training.loop import init_head


def content_free_head(d_model: int, vocab_size: int, query_bias: list[float], key_bias: list[float]) -> AttentionHead:
    """Token embeddings zero: every token has the same query and key, so logits depend on delta only."""
    model = init_head(HeadConfig(vocab_size, d_model, "rope", trained_positions=256), 0).double()
    with torch.no_grad():
        model.token_embedding.weight.zero_()
        model.query.bias.copy_(torch.tensor(query_bias))
        model.key.bias.copy_(torch.tensor(key_bias))
    return model.eval()


def random_kernel(seed: int, vocab_size: int, length: int, scale: float = 3.0) -> torch.Tensor:
    return scale * torch.randn(vocab_size, vocab_size, length, generator=torch.Generator().manual_seed(seed),
                               dtype=torch.float64)


def target_attention(kernel: torch.Tensor, offset: int, length: int) -> dict:
    """Every predictor's mean target weight at one length."""
    predicted = {name: profile[:, :, offset].mean().item()
                 for name, profile in attention_profiles(kernel, offset, length).items()}
    predicted["exact"] = exact_target_attention(kernel, offset, [length])[0].mean().item()
    return predicted


def test_flat_logits_give_one_over_n_for_every_predictor():
    model = content_free_head(4, 5, [0.0] * 4, [0.0] * 4)
    # 200: exact takes its distractors' deltas in chunks of 64, so a long length needs every chunk counted.
    for length in (4, 9, 100, 200):
        predicted = target_attention(logit_kernel(model, length), 2, length)
        assert predicted == pytest.approx(dict.fromkeys(ATTENTION_PREDICTORS, 1 / length))


def test_content_free_head_every_predictor_equals_the_model_weight():
    model = content_free_head(4, 3, [1.0, 2.0, -0.5, 1.5], [2.0, 0.5, 1.0, -1.0])
    offset, length = 2, 37
    tokens = torch.randint(3, (4, length), generator=torch.Generator().manual_seed(1))
    _, weights = model.attention(tokens)
    exact = weights[0, -1 - offset].item()
    assert torch.allclose(weights[:, -1 - offset], torch.tensor(exact, dtype=torch.float64))
    predicted = target_attention(logit_kernel(model, length), offset, length)
    assert predicted == pytest.approx(dict.fromkeys(ATTENTION_PREDICTORS, exact), abs=1e-12)


def enumerated_target_attention(kernel: torch.Tensor, offset: int, length: int) -> float:
    """E[softmax weight on the target] over every sequence of uniform tokens, enumerated."""
    vocab_size = kernel.shape[0]
    total = 0.0
    sequences = list(itertools.product(range(vocab_size), repeat=length))
    for by_delta in sequences:  # by_delta[0] is the query token
        logits = torch.stack([kernel[by_delta[0], token, delta] for delta, token in enumerate(by_delta)])
        total += logits.softmax(0)[offset].item()
    return total / len(sequences)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_target_conditioned_mean_field_is_exact_without_distractors(seed):
    # length = offset + 1: the keys are the query itself and the target; nothing is averaged.
    kernel = random_kernel(seed, 3, 2)
    predicted = target_attention(kernel, 1, 2)
    assert predicted["mean_field_target"] == pytest.approx(enumerated_target_attention(kernel, 1, 2), abs=1e-12)


def test_mean_field_is_exact_when_logits_do_not_depend_on_the_key_token():
    kernel = random_kernel(3, 3, 4)[:, :1, :].expand(3, 3, 4).clone()  # S[a, b, delta] = f(a, delta)
    predicted = target_attention(kernel, 2, 4)
    exact = enumerated_target_attention(kernel, 2, 4)
    assert predicted["mean_field"] == pytest.approx(exact, abs=1e-12)
    assert predicted["mean_field_target"] == pytest.approx(exact, abs=1e-12)
    assert predicted["exact"] == pytest.approx(exact, abs=1e-9)


def test_predictors_are_close_to_enumeration_on_a_random_kernel():
    # Sanity: with mild logits the mean-field forms are close to the exact expectation.
    kernel = random_kernel(4, 2, 8, scale=0.5)
    exact = enumerated_target_attention(kernel, 3, 8)
    predicted = target_attention(kernel, 3, 8)
    assert predicted["exact"] == pytest.approx(exact, abs=1e-9)
    assert abs(predicted["mean_field_target"] - exact) < abs(predicted["mean_logit"] - exact) + 0.02
    assert abs(predicted["mean_field"] - exact) < 0.05


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("scale", [4.0, 300.0])  # logits spread over ~ +-12, or over thousands (each target's window)
def test_exact_predictor_equals_enumeration_per_query_and_target_token(seed, scale):
    vocab_size, offset, lengths = 3, 2, [3, 5, 7]
    kernel = random_kernel(seed, vocab_size, 7, scale=scale)
    exact = exact_target_attention(kernel, offset, lengths)  # (L, V, V)
    for index, length in enumerate(lengths):
        sequences = torch.tensor(list(itertools.product(range(vocab_size), repeat=length)))  # by delta
        weights = kernel_softmax_weights(kernel[:, :, :length], sequences)[:, offset]
        for query, target in itertools.product(range(vocab_size), repeat=2):
            chosen = (sequences[:, 0] == query) & (sequences[:, offset] == target)
            assert exact[index, query, target].item() == pytest.approx(weights[chosen].mean().item(), abs=1e-9)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), offset=st.integers(1, 3), vocab_size=st.integers(2, 4))
def test_every_predictor_decreases_strictly_with_length(seed, offset, vocab_size):
    # Dilution: a longer sequence only adds positive terms to the softmax denominator.
    kernel = random_kernel(seed, vocab_size, 12)
    lengths = list(range(offset + 1, 13))
    by_length = [{name: profile[:, :, offset].mean().item()
                  for name, profile in attention_profiles(kernel, offset, length).items()} for length in lengths]
    exact = exact_target_attention(kernel, offset, lengths).mean(dim=(1, 2))  # (L,)
    for row, value in zip(by_length, exact):
        row["exact"] = value.item()
    for predictor in ATTENTION_PREDICTORS:
        values = np.array([row[predictor] for row in by_length])
        assert np.all(np.diff(values) < 0)
        assert np.all((values > 0) & (values < 1))


def test_profiles_are_distributions_over_delta():
    profiles = attention_profiles(random_kernel(5, 3, 10), 2, 10)
    assert tuple(profiles) == PROFILE_PREDICTORS
    for profile in profiles.values():
        assert torch.allclose(profile.sum(-1), torch.ones(3, 3, dtype=torch.float64))


def test_offset_must_be_a_key_of_the_sequence():
    with pytest.raises(ValueError):
        attention_profiles(random_kernel(0, 2, 5), 5, 5)


def identity_readout(vocab_size: int):
    eye = torch.eye(vocab_size, dtype=torch.float64)
    return eye, eye, torch.zeros(vocab_size, dtype=torch.float64)


def test_readout_accuracy_is_one_with_all_attention_on_the_target():
    vocab_size, length, offset = 4, 20, 3
    profile = torch.zeros(vocab_size, vocab_size, length, dtype=torch.float64)
    profile[:, :, offset] = 1.0
    tokens = torch.randint(vocab_size, (500, length), generator=torch.Generator().manual_seed(0))
    weights = profile_weights(profile, tokens, offset)
    assert readout_accuracy(weights, tokens, *identity_readout(vocab_size), offset) == 1.0


def test_readout_accuracy_reading_the_query_is_right_only_when_query_equals_target():
    vocab_size, length, offset = 4, 20, 3
    profile = torch.zeros(vocab_size, vocab_size, length, dtype=torch.float64)
    profile[:, :, 0] = 1.0
    tokens = torch.randint(vocab_size, (500, length), generator=torch.Generator().manual_seed(0))
    expected = (tokens[:, 0] == tokens[:, offset]).double().mean().item()
    weights = profile_weights(profile, tokens, offset)
    assert readout_accuracy(weights, tokens, *identity_readout(vocab_size), offset) == expected


def test_kernel_softmax_weights_are_the_model_weights():
    model = small_head(3).double()
    tokens = torch.randint(5, (6, 25), generator=torch.Generator().manual_seed(2))  # by position
    _, weights = model.attention(tokens)
    by_delta = kernel_softmax_weights(logit_kernel(model, 25), tokens.flip(1))
    assert torch.allclose(by_delta.flip(1), weights, atol=1e-12)
    # A kernel out to more offsets than the sequences have: the offsets past them are not read.
    assert torch.allclose(kernel_softmax_weights(logit_kernel(model, 40), tokens.flip(1)).flip(1), weights, atol=1e-12)


def small_head(seed: int) -> AttentionHead:
    """A small random rope head with logits of a few units."""
    model = init_head(HeadConfig(5, 8, "rope", trained_positions=256), seed)
    with torch.no_grad():
        model.query.weight.mul_(4.0)
        model.key.weight.mul_(4.0)
    return model.eval()


def test_predict_dilution_rows_and_reproducibility():
    first = predict_dilution(small_head(0), offset=2, seed=7, lengths=[16, 4, 64], n_samples=300)
    second = predict_dilution(small_head(0), offset=2, seed=7, lengths=[4, 16, 64], n_samples=300)
    pd.testing.assert_frame_equal(first, second)
    assert len(first) == 3 * len(PREDICTORS)
    assert set(first["predictor"]) == set(PREDICTORS)
    assert first["predicted_attention"].between(0, 1).all() and first["predicted_accuracy"].between(0, 1).all()
    # Ranking: P_rank averaged over (query, target) tokens, where the target token reads out as itself; no
    # sampled sequences. Its attention column repeats mean_field's.
    values, unembedding, bias = token_outputs(small_head(0))
    reads_as_itself = (values @ unembedding.T + bias).argmax(-1) == torch.arange(5)
    by_predictor = first.set_index(["length", "predictor"])
    for length in (4, 16, 64):
        expected = (ranking_probability(logit_kernel(small_head(0), length), 2, length) * reads_as_itself).mean()
        assert by_predictor.at[(length, "ranking"), "predicted_accuracy"] == pytest.approx(expected.item(), abs=1e-12)
        assert (by_predictor.at[(length, "ranking"), "predicted_attention"]
                == by_predictor.at[(length, "mean_field"), "predicted_attention"])
    without_exact = predict_dilution(small_head(0), offset=2, seed=7, lengths=[4, 16, 64], n_samples=300,
                                     with_exact=False)
    pd.testing.assert_frame_equal(without_exact, first[first["predictor"] != "exact"].reset_index(drop=True))


def test_predict_dilution_refuses_linear_attention():
    model = init_head(HeadConfig(5, 8, "rope", trained_positions=64, attention="linear"), 0)
    with pytest.raises(ValueError, match="softmax"):
        predict_dilution(model, 1, 0, [8], 10)


def measured_table(rows) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["offset", "seed", "length", "target_attention", "accuracy"])
    return frame.assign(experiment="generalization", pe="rope", in_training_range=frame["length"] <= 32, loss=0.0)


def predictions_table(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["offset", "seed", "length", "predictor", "predicted_attention",
                                       "predicted_accuracy"])


def kernel_summary_table() -> pd.DataFrame:
    profile = kernel_profile(step_kernel(4, 64, offset=1, far_delta=40), 1, train_length_max=32)
    return pd.DataFrame([{"offset": 1, "seed": 0, **kernel_summary(profile, 1)}])


def test_errors_from_hand_made_tables():
    measured = measured_table([(1, 0, 32, 0.9, 1.0), (1, 0, 64, 0.5, 0.8), (1, 0, 128, 0.3, 0.6)])
    learned = measured.assign(pe="learned", target_attention=0.0)  # must be ignored
    other = measured.assign(experiment="variants", target_attention=0.0)  # must be ignored
    predictions = predictions_table([
        (1, 0, 32, "mean_field", 0.9, 1.0), (1, 0, 64, "mean_field", 0.6, 0.8), (1, 0, 128, "mean_field", 0.2, 0.9),
        (1, 0, 32, "mean_logit", 1.0, 1.0), (1, 0, 64, "mean_logit", 0.9, 1.0), (1, 0, 128, "mean_logit", 0.8, 1.0),
        (1, 0, 32, "ranking", 0.9, 1.0), (1, 0, 64, "ranking", 0.6, 0.8), (1, 0, 128, "ranking", 0.2, 0.7),
    ])
    comparison = compare_with_measured(predictions, pd.concat([measured, learned, other]))
    tables.to_arrow(comparison, PROP1_PREDICTION)  # the schema's columns are all there
    errors = prediction_errors(comparison, train_length_max=32, vocab_size=16)
    untrained = compare_with_measured(predictions.assign(predicted_attention=1 / predictions["length"],
                                                         predicted_accuracy=1 / 16),
                                      measured.assign(target_attention=1 / measured["length"], accuracy=1 / 16 + 0.01))
    errors = pd.concat([errors, prediction_errors(untrained, 32, 16, heads="untrained")], ignore_index=True)
    tables.to_arrow(errors, PROP1_ERROR)

    def row(predictor, quantity, lengths="beyond_training", scope="K=1", heads="trained"):
        return errors[(errors["predictor"] == predictor) & (errors["quantity"] == quantity) & (errors["lengths"] == lengths)
                      & (errors["scope"] == scope) & (errors["heads"] == heads)].iloc[0]

    assert row("mean_field", "target_attention")["mae"] == pytest.approx(0.1)
    assert row("mean_field", "target_attention")["bias"] == pytest.approx(0.0)
    assert row("mean_field", "target_attention")["n"] == 2
    assert row("mean_field", "accuracy")["mae"] == pytest.approx(0.15)
    assert row("mean_logit", "target_attention", "all")["mae"] == pytest.approx((0.1 + 0.4 + 0.5) / 3)
    assert np.isnan(row("mean_logit", "accuracy")["correlation"])  # constant prediction
    assert row("mean_logit", "target_attention", scope="all")["correlation"] == pytest.approx(1.0)
    assert row("ranking", "accuracy")["mae"] == pytest.approx(0.05)
    assert errors[(errors["predictor"] == "ranking") & (errors["quantity"] == "target_attention")].empty
    # The trivial baselines: chance (1/n, 1/V) and no decay (the value at length 32, held).
    assert row("chance", "target_attention")["mae"] == pytest.approx((0.5 - 1 / 64 + 0.3 - 1 / 128) / 2)
    assert row("chance", "accuracy")["mae"] == pytest.approx((0.8 + 0.6) / 2 - 1 / 16)
    assert row("no_decay", "target_attention")["mae"] == pytest.approx(0.5)
    assert row("no_decay", "accuracy")["mae"] == pytest.approx(0.3)
    assert row("mean_field", "accuracy", heads="untrained")["mae"] == pytest.approx(0.01)
    assert best_predictor(errors) == "mean_field"
    assert best_predictor(errors, "accuracy") == "ranking"  # 0.05 against mean_field's 0.15

    rows = {"trained": with_baselines(comparison, 32, 16), "untrained": with_baselines(untrained, 32, 16)}
    checks = with_keys(prediction_checks(rows, 32, "mean_field", max_attention_mae=0.1 + 1e-9, max_accuracy_mae=0.1)
                       + ranking_checks(rows, 32, "mean_field"), "prop1", "prop1")
    tables.to_arrow(checks, CLAIMS)
    # attention MAE, its gain over the better baseline, accuracy MAE, its gain; mean_field minus ranking
    assert checks["holds"].tolist() == [True, True, False, True, False]
    assert checks["value"].tolist() == pytest.approx([0.1, (0.5 - 1 / 64 + 0.3 - 1 / 128) / 2 - 0.1, 0.15,
                                                      0.3 - 0.15, 0.15 - 0.05])
    assert checks["offset"].tolist() == [1] * 5 and set(checks["kind"]) == {"evidence"}
    # The untrained heads' values, shown in the rules: an MAE that passes, a gain that cannot.
    assert checks["rule"].tolist()[2:4] == ["<= 0.1 (untrained heads: 0.01)", ">= 0.05 (untrained heads: -0.01)"]
    text = section({"prop1_error": errors, "prop1_kernel_summary": kernel_summary_table()}, checks,
                   {"task": {"train_length_max": 32}})
    assert text.startswith("## prop1")
    assert "figures/prop1_validation_K1.png" in text
    rows = markdown_rows(text)
    assert rows[("K=1", "mean_field")][:3] == ["0.100", "+0.000", "1.000"]
    assert rows[("K=1", "ranking")][3:6] == ["0.050", "+0.050", "1.000"]
    assert rows[("K=1", "no_decay")][3] == "0.300"
    assert "`mean_field` for attention, `ranking` for accuracy" in text
    assert rows[("K=1", "1")][4:6] == ["+1.00 to +1.00", "40"]  # the kernel table: first unseen beating offset
    assert "rope@base=100" in text
    # the claim's form of the law and the plain one side by side in the error table
    assert rows[("K=1", "mean_logit")][0] == f"{row('mean_logit', 'target_attention')['mae']:.3f}"
    assert rows[("K=1", "mean_field")][0] == f"{row('mean_field', 'target_attention')['mae']:.3f}"
    assert "The paper's exact form is unknown" in text
    assert "fixed in 525f81a (data looked at by then: the feasibility run" in text  # rule history
    assert "The law's predictions for the cures: the cures page; for the rope bases" in text


def test_the_form_of_the_law_is_dated_by_every_rule_history_entry_that_names_it():
    def change(rules, commit):
        return RuleChange(rules, commit, f"data of {commit}", ("prop1",), False)

    history = (change("prop1: DILUTION_LAW_PREDICTOR (mean_field)", "aaa"), change("cures: other", "bbb"),
               change("prop1: DILUTION_LAW_PREDICTOR again", "ccc"))
    assert predictor_choice(history) == ("in aaa (data looked at by then: data of aaa); "
                                         "then in ccc (data looked at by then: data of ccc)")
    with pytest.raises(ValueError, match="DILUTION_LAW_PREDICTOR"):
        predictor_choice(history[1:2])


def markdown_rows(text: str) -> dict[tuple[str, str], list[str]]:
    """Every markdown table row of ``text``, by its first two cells (the first where several tables have it)."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| "):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows.setdefault(tuple(cells[:2]), cells[2:])  # the first table with that row: the trained heads
    return rows


def test_checks_use_the_rules_of_lengthgen_rules_at_every_offset():
    measured = measured_table([(offset, 0, length, 0.5, 0.5) for offset in (1, 3) for length in (32, 64)])
    predictions = predictions_table([row for offset in (1, 3) for length in (32, 64)
                                     for row in ((offset, 0, length, "mean_field", 0.55, 0.7),
                                                 (offset, 0, length, "ranking", 0.55, 0.55))])
    at_chance = measured.assign(target_attention=1 / measured["length"], accuracy=1 / 16)
    tables_in = {"prop1_prediction": compare_with_measured(predictions, measured),
                 "prop1_untrained_prediction": compare_with_measured(predictions, at_chance)}
    checks = with_keys(prop1.checks(tables_in, {"task": {"train_length_max": 32, "vocab_size": 16}}), "prop1", "prop1")
    assert checks["offset"].tolist() == [1] * 4 + [3] * 4 + [1, 3]
    # attention off by 0.05 but no better than no decay; accuracy off by 0.2, worse than ranking (0.05)
    assert checks["holds"].tolist() == [True, False, False, False] * 2 + [False, False]
    assert checks["threshold"].tolist() == [0.1, 0.05, 0.1, 0.05] * 2 + [0.0, 0.0]


def step_kernel(vocab_size: int, length: int, offset: int, far_delta: int) -> torch.Tensor:
    """Logits 0 everywhere but 1 at the target's offset and 2 at ``far_delta``, for every token pair."""
    kernel = torch.zeros(vocab_size, vocab_size, length, dtype=torch.float64)
    kernel[:, :, offset], kernel[:, :, far_delta] = 1.0, 2.0
    return kernel


def enumerated_ranking(kernel: torch.Tensor, offset: int, length: int) -> torch.Tensor:
    """P[a, t] that no key of a token other than t outranks the target, over every sequence, enumerated."""
    vocab_size = kernel.shape[0]
    counts, wins = torch.zeros(vocab_size, vocab_size), torch.zeros(vocab_size, vocab_size)
    for by_delta in itertools.product(range(vocab_size), repeat=length):  # by_delta[0] is the query token
        query, target = by_delta[0], by_delta[offset]
        logits = [kernel[query, token, delta] for delta, token in enumerate(by_delta)]
        outranked = any(logits[delta] > logits[offset] and token != target for delta, token in enumerate(by_delta))
        counts[query, target] += 1
        wins[query, target] += not outranked
    return (wins / counts).double()


@pytest.mark.parametrize("seed", [0, 1])
def test_ranking_probability_equals_enumeration(seed):
    kernel = random_kernel(seed, 3, 6, scale=1.0)
    for length in (3, 6):
        assert torch.allclose(ranking_probability(kernel, 2, length), enumerated_ranking(kernel, 2, length), atol=1e-12)


def test_ranking_probability_on_step_kernels():
    vocab_size = 4
    # The target outranks every key: ranking is certain at any length.
    assert torch.all(ranking_probability(step_kernel(vocab_size, 64, 1, 1), 1, 64) == 1.0)
    # A key at delta 40 outranks it: only sequences whose key there holds the target's token stay right.
    kernel = step_kernel(vocab_size, 64, 1, 40)
    assert torch.all(ranking_probability(kernel, 1, 40) == 1.0)
    assert torch.allclose(ranking_probability(kernel, 1, 41), torch.full((4, 4), 1 / vocab_size, dtype=torch.float64))


def test_ranking_is_the_readout_of_the_target_token_when_the_target_always_wins():
    # Token embeddings zero: every token has the same value, so one token of three reads out as itself.
    model = content_free_head(4, 3, [1.0, 2.0, -0.5, 1.5], [2.0, 0.5, 1.0, -1.0])
    kernel = logit_kernel(model, 40)
    offset = int(kernel[0, 0, 1:].argmax()) + 1  # the offset of the largest logit: no key outranks it
    rows = predict_dilution(model, offset, 0, [offset + 1, 40], 200).set_index(["length", "predictor"])
    for length in (offset + 1, 40):
        assert rows.at[(length, "ranking"), "predicted_accuracy"] == pytest.approx(1 / 3, abs=1e-12)


def test_kernel_profile_and_summary_of_a_step_kernel():
    vocab_size, offset = 4, 1
    profile = kernel_profile(step_kernel(vocab_size, 64, offset, 40), offset, train_length_max=32)
    tables.to_arrow(profile.assign(offset=offset, seed=0), PROP1_KERNEL)
    assert profile["delta"].tolist() == list(range(1, 64))
    assert profile["seen"].tolist() == [delta < 32 for delta in range(1, 64)]
    far = profile.set_index("delta").loc[40]
    # Logits do not depend on the tokens: every gap is the same, and a key of another token beats the target.
    assert far["mean_relative"] == far["gap_min"] == far["gap_max"] == far["gap_median"] == 1.0
    assert far["beat_probability"] == pytest.approx((vocab_size - 1) / vocab_size)
    assert profile.set_index("delta").loc[5, "gap_max"] == -1.0
    summary = pd.DataFrame([{"offset": offset, "seed": 0, **kernel_summary(profile, offset)}]).astype(
        {"delta_of_max_mean_relative_unseen": "Int64", "first_unseen_beating_delta": "Int64"})
    tables.to_arrow(summary, PROP1_KERNEL_SUMMARY)
    row = summary.iloc[0]
    assert (row["first_unseen_beating_delta"], row["delta_of_max_mean_relative_unseen"]) == (40, 40)
    assert (row["max_gap_seen"], row["max_gap_unseen"], row["target_mean_logit"]) == (-1.0, 1.0, 1.0)
    assert row["expected_unseen_beaters"] == pytest.approx((vocab_size - 1) / vocab_size)
    flat = kernel_summary(kernel_profile(step_kernel(vocab_size, 64, offset, offset), offset, 32), offset)
    assert flat["first_unseen_beating_delta"] is None and flat["max_gap_unseen"] == -2.0  # target logit 2


def test_untrained_comparison_measures_the_head_at_its_seeded_init():
    task = {"vocab_size": 5, "train_length_min": 8, "train_length_max": 16, "eval_lengths": [16, 32]}
    eval_sets = {length: make_eval_set(0, 2, length, 100, 5) for length in task["eval_lengths"]}
    trained = small_head(3)  # any weights: only its config and the seed matter
    rows = untrained_comparison(trained, eval_sets, offset=2, seed=4, task=task, n_samples=50)
    tables.to_arrow(rows, PROP1_UNTRAINED_PREDICTION)
    assert set(rows["predictor"]) == set(PREDICTORS) - {"exact"}
    at_init = init_head(trained.config, 4).eval()
    measured = rows.drop_duplicates("length").set_index("length")
    for length, (tokens, targets) in eval_sets.items():
        logits, weights = at_init.predict(tokens)
        assert measured.at[length, "measured_accuracy"] == pytest.approx((logits.argmax(-1) == targets).double().mean())
        assert measured.at[length, "measured_attention"] == pytest.approx(weights[:, -1 - 2].mean().item())
    assert measured["in_training_range"].tolist() == [True, False]


def test_trivial_predictions_without_an_in_range_length_have_no_no_decay_rows():
    comparison = compare_with_measured(predictions_table([(1, 0, 64, "mean_field", 0.5, 0.5)]),
                                       measured_table([(1, 0, 64, 0.4, 0.4)]))
    assert trivial_predictions(comparison, 32, 16)["predictor"].tolist() == ["chance"]


def test_missing_measurement_is_an_error():
    measured = measured_table([(1, 0, 32, 0.9, 1.0)])
    predictions = predictions_table([(1, 0, 64, "mean_field", 0.5, 0.5)])
    with pytest.raises(ValueError, match="no measurement"):
        compare_with_measured(predictions, measured)


def test_figures_show_measured_and_predicted_means_per_offset():
    measured = measured_table([(offset, seed, length, 0.9 / (1 + length / 100), 1.0 - length / 2000)
                               for offset in (2, 3) for seed in (0, 1) for length in (16, 32, 64, 128)])
    predictions = pd.concat([predict_dilution(small_head(1), offset=offset, seed=seed, lengths=[16, 32, 64, 128],
                                              n_samples=50) for offset in (2, 3) for seed in (0, 1)])
    comparison = compare_with_measured(predictions, measured)
    settings = {"task": {"vocab_size": 5, "train_length_min": 8, "train_length_max": 32}}
    figures = draw({"prop1_prediction": comparison}, settings)
    assert list(figures) == ["prop1_validation_K2", "prop1_validation_K3"]
    attention, accuracy = figures["prop1_validation_K3"].axes
    lines = {line.get_label(): line for line in attention.get_lines()}
    at_k3 = comparison[comparison["offset"] == 3]
    lengths = np.array([16, 32, 64, 128])
    np.testing.assert_allclose(lines["measured, mean of 2 seeds"].get_ydata(), 0.9 / (1 + lengths / 100))
    predicted = at_k3[at_k3["predictor"] == "mean_field"].groupby("length")["predicted_attention"].mean()
    # the form the claim judges is named so in the legend
    np.testing.assert_allclose(lines["predicted: mean_field (the law the claim judges)"].get_ydata(),
                               predicted.to_numpy())
    labels = {line.get_label().removesuffix(" (the law the claim judges)") for line in accuracy.get_lines()}
    assert {f"predicted: {name}" for name in PREDICTORS} <= labels
    assert "predicted: ranking" not in lines  # it predicts no attention


def test_the_figure_draws_every_predictor():
    assert tuple(PREDICTOR_STYLES) == PREDICTORS
    assert set(ACCURACY_ONLY) == set(errors_of_predictions.BORROWED_ATTENTION)


# --- Mutation testing (docs/mutation.md): each profile predictor written out from its definition ------------------

def test_profile_predictors_follow_their_definitions_with_the_query_alone_at_delta_zero():
    """mean_logit: softmax over delta of the content-averaged logit, where at delta = 0 the key is the query itself
    (the mean of S[a, a, 0], not of S[a, b, 0]); mean_field: per query token a, softmax over delta of
    log E_b exp S[a, b, delta] (delta = 0: S[a, a, 0]); mean_field_target: the same with the target token t's own
    logit S[a, t, K] at delta = K."""
    vocab_size, offset, length = 3, 2, 5
    kernel = random_kernel(11, vocab_size, length + 2)
    kernel[:, :, 0] += 4.0 * torch.eye(vocab_size, dtype=torch.float64)  # the diagonal far from the rest at delta 0
    profiles = attention_profiles(kernel, offset, length)

    def softmax(values):
        exps = [np.exp(value) for value in values]
        return [value / sum(exps) for value in exps]

    def mean_over_pairs(delta):
        return np.mean([kernel[a, b, delta].item() for a in range(vocab_size) for b in range(vocab_size)])

    mean = [np.mean([kernel[a, a, 0].item() for a in range(vocab_size)])] + [mean_over_pairs(d)
                                                                            for d in range(1, length)]
    expected_mean_logit = softmax(mean)
    plain = softmax([mean_over_pairs(d) for d in range(length)])  # delta 0 averaged over every key token: wrong
    assert abs(expected_mean_logit[offset] - plain[offset]) > 0.01
    for a in range(vocab_size):
        log_mean = [kernel[a, a, 0].item()] + [np.log(np.mean([np.exp(kernel[a, b, d].item())
                                                                for b in range(vocab_size)])) for d in range(1, length)]
        for t in range(vocab_size):
            assert profiles["mean_logit"][a, t].tolist() == pytest.approx(expected_mean_logit, abs=1e-12)
            assert profiles["mean_field"][a, t].tolist() == pytest.approx(softmax(log_mean), abs=1e-12)
            with_target = log_mean[:offset] + [kernel[a, t, offset].item()] + log_mean[offset + 1:]
            assert profiles["mean_field_target"][a, t].tolist() == pytest.approx(softmax(with_target), abs=1e-12)
    for profile in profiles.values():
        assert profile.shape == (vocab_size, vocab_size, length)  # the kernel cut at the length


@pytest.mark.parametrize("offset, length", [(0, 4), (4, 4), (2, 8)])
def test_profiles_refuse_an_offset_outside_the_sequence_or_a_length_past_the_kernel(offset, length):
    with pytest.raises(ValueError, match="need 0 < offset < length <= kernel offsets"):
        attention_profiles(random_kernel(0, 2, 7), offset, length)


# --- Mutation testing (docs/mutation.md): analyze and kernel_tables, assembled from the pieces tested above ---------

def test_analyze_assembles_each_table_from_its_pieces():
    """Two rope heads (offsets 1 and 2, seeds 0 and 3): each table is what its documented pieces give, head by head,
    and fits its schema; the measured rows are the generalization experiment's rope rows."""
    from lengthgen.evaluation import accuracy_by_length, label_runs
    task = {"vocab_size": 5, "train_length_min": 4, "train_length_max": 8, "eval_lengths": [8, 12]}
    runs = [({"offset": 1, "seed": 0}, small_head(0)), ({"offset": 2, "seed": 3}, small_head(1))]
    eval_sets = {offset: {length: make_eval_set(offset, offset, length, 40, 5) for length in task["eval_lengths"]}
                 for offset in (1, 2)}
    measured = pd.concat([label_runs(accuracy_by_length(model, eval_sets[run["offset"]], run["offset"], run["seed"]),
                                     "generalization", 4, 8, pe="rope", **run) for run, model in runs], ignore_index=True)
    other = measured.assign(pe="learned", accuracy=0.0)  # another encoding's rows: not read
    inputs = {"models": runs, "eval_sets": eval_sets, "accuracy_by_length": pd.concat([measured, other], ignore_index=True)}
    out = prop1.analyze(inputs, {"task": task, "prop1": {"n_samples": 30}})

    predictions = pd.concat([predict_dilution(model, run["offset"], run["seed"], [8, 12], 30) for run, model in runs],
                            ignore_index=True)
    expected = compare_with_measured(predictions, measured)
    pd.testing.assert_frame_equal(out["prop1_prediction"], expected)
    untrained = pd.concat([untrained_comparison(model, eval_sets[run["offset"]], run["offset"], run["seed"], task, 30)
                           for run, model in runs], ignore_index=True)
    pd.testing.assert_frame_equal(out["prop1_untrained_prediction"], untrained)
    pd.testing.assert_frame_equal(out["prop1_error"], pd.concat(
        [prediction_errors(expected, 8, 5, "trained"), prediction_errors(untrained, 8, 5, "untrained")], ignore_index=True))
    # Each head's kernel rows and summary carry its keys (the groupby below would skip a key that is missing).
    keys = [[run["offset"], run["seed"]] for run, _ in runs]
    assert out["prop1_kernel"][["offset", "seed"]].drop_duplicates().values.tolist() == keys
    assert out["prop1_kernel_summary"][["offset", "seed"]].values.tolist() == keys
    for (run, model), (_, kernel_rows) in zip(runs, out["prop1_kernel"].groupby(["offset", "seed"], sort=False)):
        profile = kernel_profile(logit_kernel(model, 12), run["offset"], train_length_max=8)  # out to the longest length
        pd.testing.assert_frame_equal(kernel_rows.reset_index(drop=True), profile.assign(**run))
        row = out["prop1_kernel_summary"].set_index(["offset", "seed"]).loc[(run["offset"], run["seed"])]
        assert row.to_dict() == pytest.approx(kernel_summary(profile, run["offset"]), nan_ok=True)
    assert out["prop1_kernel_summary"]["first_unseen_beating_delta"].dtype == "Int64"
    assert out["prop1_kernel_summary"]["delta_of_max_mean_relative_unseen"].dtype == "Int64"
    for name, schema in (("prop1_prediction", PROP1_PREDICTION), ("prop1_untrained_prediction", PROP1_UNTRAINED_PREDICTION),
                         ("prop1_error", PROP1_ERROR), ("prop1_kernel", PROP1_KERNEL),
                         ("prop1_kernel_summary", PROP1_KERNEL_SUMMARY)):
        tables.to_arrow(out[name], schema)


def test_kernel_tables_are_the_profile_and_summary_of_the_heads_kernel_with_its_keys():
    model = small_head(2)
    profile, summary = prop1.kernel_tables(model, offset=2, seed=5, length=20, train_length_max=8)
    expected = kernel_profile(logit_kernel(model, 20), 2, train_length_max=8)
    pd.testing.assert_frame_equal(profile, expected.assign(offset=2, seed=5))
    assert summary == {"offset": 2, "seed": 5, **kernel_summary(expected, 2)}


def test_prediction_errors_come_in_scope_then_lengths_then_predictor_order():
    """Per offset in increasing order, then all offsets; past the range, then all lengths; predictors by name,
    whatever order the comparison lists them in."""
    measured = measured_table([(offset, 0, length, 0.5, 0.5) for offset in (2, 1) for length in (32, 64)])
    predictions = predictions_table([(offset, 0, length, name, 0.4, 0.4) for offset in (2, 1) for length in (32, 64)
                                     for name in ("mean_logit", "exact", "mean_field")])
    errors = prediction_errors(compare_with_measured(predictions, measured), train_length_max=32, vocab_size=16)
    blocks = errors[["scope", "lengths"]].drop_duplicates().apply(tuple, axis=1).tolist()
    assert blocks == [(scope, lengths) for scope in ("K=1", "K=2", "all") for lengths in ("beyond_training", "all")]
    for _, block in errors.groupby(["scope", "lengths"]):
        assert block["predictor"].drop_duplicates().tolist() == ["chance", "exact", "mean_field", "mean_logit", "no_decay"]


def error_row(mae: float, predictor: str = "mean_field", heads: str = "trained", scope: str = "all",
              lengths: str = "beyond_training", quantity: str = "target_attention") -> dict:
    return {"heads": heads, "scope": scope, "lengths": lengths, "predictor": predictor, "quantity": quantity,
            "n": 1, "mae": mae, "bias": 0.0, "correlation": float("nan")}


def test_best_predictor_reads_the_trained_heads_over_all_offsets_past_the_range_only():
    """Each decoy row has a lower MAE than mean_logit's but differs in one of the row's keys, or is no candidate."""
    errors = pd.DataFrame([
        error_row(0.3, "mean_field"), error_row(0.2, "mean_logit"),
        error_row(0.01, "mean_field", heads="untrained"), error_row(0.01, "mean_field", scope="K=1"),
        error_row(0.01, "mean_field", lengths="all"), error_row(0.01, "mean_field", quantity="accuracy"),
        error_row(0.01, "exact"),
    ])
    assert best_predictor(errors) == "mean_logit"
    assert best_predictor(errors, quantity="accuracy") == "mean_field"


def test_best_predictor_of_accuracy_counts_ranking_and_of_attention_does_not():
    """ranking predicts accuracy only: among the accuracy candidates it wins with the lowest MAE; a ranking row of
    target attention (the table holds none) and exact's accuracy are no candidates."""
    errors = pd.DataFrame([
        error_row(0.05, "mean_field", quantity="accuracy"), error_row(0.023, "ranking", quantity="accuracy"),
        error_row(0.001, "exact", quantity="accuracy"), error_row(0.03, "mean_field"),
        error_row(0.001, "ranking"), error_row(0.001, "exact"),
    ])
    assert best_predictor(errors, quantity="accuracy") == "ranking"
    assert best_predictor(errors) == "mean_field"


def test_beyond_mae_reads_its_own_row_and_is_nan_without_one():
    errors = pd.DataFrame([error_row(0.1, scope="K=1"), error_row(0.2, scope="K=2"), error_row(0.3, scope="all"),
                           error_row(0.4, scope="K=2", lengths="all")])
    assert [errors_of_predictions.beyond_mae(errors, "trained", scope, "mean_field", "target_attention")
            for scope in ("K=1", "K=2", "all")] == [0.1, 0.2, 0.3]
    assert np.isnan(errors_of_predictions.beyond_mae(errors, "trained", "K=1", "exact", "target_attention"))


def test_kernel_profile_gap_statistics_by_hand_on_a_random_kernel():
    """Gaps s_ab(delta) - s_at(K) over every triple (a, t, b), b != t, counted one by one: min, linear-interpolated
    5/50/95% quantiles, max, and the share of all V^3 triples in which b != t beats the target."""
    kernel, offset = random_kernel(4, 3, 6), 2
    profile = kernel_profile(kernel, offset, train_length_max=4).set_index("delta")
    for delta in range(1, 6):
        gaps = [float(kernel[a, b, delta] - kernel[a, t, offset]) for a in range(3) for t in range(3) for b in range(3)
                if b != t]
        row = profile.loc[delta]
        assert row["gap_min"] == pytest.approx(min(gaps), abs=1e-12) and row["gap_max"] == pytest.approx(max(gaps), abs=1e-12)
        for column, q in (("gap_q05", 0.05), ("gap_median", 0.5), ("gap_q95", 0.95)):
            assert row[column] == pytest.approx(np.quantile(gaps, q), abs=1e-12)
        assert row["beat_probability"] == pytest.approx(sum(gap > 0 for gap in gaps) / 27, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 400), columns=st.integers(1, 5), levels=st.integers(1, 1000), seed=st.integers(0, 2 ** 31 - 1))
def test_quantiles_of_sorted_columns_are_torch_quantile_bit_for_bit(rows, columns, levels, seed):
    """kernel_profile's quantiles are torch.quantile's numbers, not merely close ones: the committed tables
    were made with it. Values on a grid of ``levels`` steps, so that ties come often."""
    generator = torch.Generator().manual_seed(seed)
    values = torch.randint(levels, (rows, columns), generator=generator).double() / 7 - 3.0
    probabilities = (0.05, 0.5, 0.95)
    ordered = prop1.sorted_columns(values)
    assert torch.equal(ordered[0], values.min(0).values) and torch.equal(ordered[-1], values.max(0).values)
    expected = torch.quantile(values, torch.tensor(probabilities, dtype=torch.float64), dim=0)
    assert torch.equal(prop1.quantiles_of_sorted(ordered, probabilities), expected)


def test_kernel_gaps_with_nan_are_an_error():
    with pytest.raises(ValueError, match="NaN"):
        prop1.sorted_columns(torch.tensor([[0.0], [math.nan]], dtype=torch.float64))


def test_a_distractor_that_only_ties_the_target_does_not_beat_it():
    """Gap 0 is no beat (the module's "> 0: it beats it"): neither in beat_probability nor in the summary's first
    unseen beating delta."""
    kernel = step_kernel(4, 64, offset=1, far_delta=40)
    kernel[:, :, 40] = 1.0  # the far key's logit now equals the target's
    profile = kernel_profile(kernel, 1, train_length_max=32)
    assert profile.set_index("delta").loc[40, ["gap_max", "beat_probability"]].tolist() == [0.0, 0.0]
    summary = kernel_summary(profile, 1)
    assert summary["first_unseen_beating_delta"] is None and summary["max_gap_unseen"] == 0.0
    assert summary["expected_unseen_beaters"] == 0.0


def test_kernel_summary_of_the_mean_logit_seen_and_unseen_and_of_a_profile_with_no_unseen_delta():
    profile = kernel_profile(step_kernel(4, 64, offset=1, far_delta=40), 1, train_length_max=32)
    summary = kernel_summary(profile, 1)
    # mean logit 0 at every distractor delta but 2 at 40 (unseen), 1 at the target: relative -1 seen, +1 unseen
    assert (summary["max_mean_relative_seen"], summary["max_mean_relative_unseen"]) == (-1.0, 1.0)
    assert summary["delta_of_max_mean_relative_unseen"] == 40
    all_seen = kernel_summary(kernel_profile(step_kernel(4, 64, offset=1, far_delta=40), 1, train_length_max=64), 1)
    assert all_seen["max_mean_relative_seen"] == 1.0 and all_seen["max_gap_seen"] == 1.0
    assert all_seen["delta_of_max_mean_relative_unseen"] is None and all_seen["first_unseen_beating_delta"] is None
    assert np.isnan(all_seen["max_mean_relative_unseen"]) and np.isnan(all_seen["max_gap_unseen"])
    assert all_seen["expected_unseen_beaters"] == 0.0


def test_checks_show_the_untrained_heads_values_and_the_ranking_check_can_hold():
    """prop1.checks on tables where mean_field reads the accuracy better than ranking: the ranking check holds with
    value claim MAE - ranking MAE, and each rule shows the values it was decided on, the untrained heads' included."""
    measured = measured_table([(1, 0, length, 0.5, 0.5) for length in (32, 64)])
    predictions = predictions_table([row for length in (32, 64) for row in ((1, 0, length, "mean_field", 0.55, 0.52),
                                                                           (1, 0, length, "ranking", 0.55, 0.6))])
    at_chance = measured.assign(target_attention=1 / measured["length"], accuracy=1 / 16)
    tables_in = {"prop1_prediction": compare_with_measured(predictions, measured),
                 "prop1_untrained_prediction": compare_with_measured(predictions, at_chance)}
    checks = with_keys(prop1.checks(tables_in, {"task": {"train_length_max": 32, "vocab_size": 16}}), "prop1", "prop1")
    ranking = checks.iloc[-1]
    assert bool(ranking["holds"]) and ranking["value"] == pytest.approx(0.02 - 0.1)
    assert ranking["rule"] == "< 0 (mean_field 0.02, ranking 0.1)"
    assert ranking["claim"] == "dilution rather than ranking errors sets rope's accuracy past the range"  # the key
    assert ranking["statistic"] == "accuracy MAE past the training range, mean_field minus ranking"
    untrained_attention_mae = abs(0.55 - 1 / 64)  # the one length past the range, 64
    assert checks.iloc[0]["rule"] == f"<= 0.1 (untrained heads: {untrained_attention_mae:.3g})"


def comparison_rows(offsets_and_lengths) -> pd.DataFrame:
    """prop1_prediction rows of mean_field at each (offset, length), seed 0, predicted 0.02 off the measurement."""
    return pd.DataFrame([{"offset": offset, "seed": 0, "length": length, "predictor": "mean_field",
                          "measured_attention": 0.5, "measured_accuracy": 0.6, "predicted_attention": 0.52,
                          "predicted_accuracy": 0.62} for offset, length in offsets_and_lengths])


def test_the_checked_offsets_are_the_trained_heads_offsets_in_numeric_order():
    rows = comparison_rows([(10, 64), (2, 64), (1, 32), (1, 64)])
    assert prop1.trained_offsets(rows) == [1, 2, 10]
    assert prop1.trained_offsets(comparison_rows([(10, 32), (2, 64)]), train_length_max=32) == [2]


def test_prediction_checks_name_their_claim_and_statistics_and_skip_an_offset_with_no_length_past_the_range():
    """The claim and statistic texts are the check's key (claims.KEY), by which drift and replication match a check
    across runs; an offset whose heads were measured only inside the range (no length past it) has no check."""
    comparison = comparison_rows([(1, 32), (1, 64), (2, 16), (2, 32)])
    rows = {heads: with_baselines(comparison, 32, 16) for heads in ("trained", "untrained")}
    checks = prediction_checks(rows, 32, "mean_field", max_attention_mae=0.1, max_accuracy_mae=0.1)
    assert [row["offset"] for row in checks] == [1] * 4
    assert {row["claim"] for row in checks} == {"graceful decay follows the dilution law"}
    assert [row["statistic"] for row in checks[:2]] == [
        "mean_field: MAE of predicted target_attention past the training range",
        "mean_field: MAE of predicted target_attention past the training range, below the better of the chance and "
        "no-decay baselines' MAEs"]
    assert checks[0]["value"] == pytest.approx(0.02) and checks[2]["value"] == pytest.approx(0.02)
    # no decay (0.5 and 0.6 held from length 32) is exact here: the gain over it is -0.02
    assert checks[1]["value"] == pytest.approx(-0.02) and checks[3]["value"] == pytest.approx(-0.02)


def test_error_statistics_without_a_correlation_give_nan_without_a_warning():
    """One row, or a constant side: no correlation is defined, and none is computed (numpy would warn and divide by
    zero); with spread on both sides it is Pearson's r, here of exactly anti-correlated values. (The constants are
    exact in binary: a constant such as 0.4 gets a std of rounding noise and a noise correlation: docs/mutation.md, Findings.)"""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for predicted, measured in (([0.3], [0.5]), ([0.3, 0.3, 0.3], [0.1, 0.5, 0.2]), ([0.1, 0.5, 0.2], [0.25, 0.25, 0.25])):
            stats = errors_of_predictions.error_statistics(pd.Series(predicted), pd.Series(measured))
            assert np.isnan(stats["correlation"]) and stats["n"] == len(predicted)
        assert errors_of_predictions.error_statistics(pd.Series([0.1, 0.2, 0.4]), pd.Series([0.4, 0.3, 0.1]))["correlation"] == pytest.approx(-1.0)


def test_error_statistics_read_an_object_column_as_floats():
    """A column of object dtype (as a concat with missing rows leaves it) gives the statistics of its float values."""
    predicted, measured = [0.1, 0.5, 0.3], [0.2, 0.1, 0.4]
    as_objects = errors_of_predictions.error_statistics(pd.Series(predicted, dtype=object), pd.Series(measured, dtype=object))
    assert as_objects == pytest.approx(errors_of_predictions.error_statistics(pd.Series(predicted), pd.Series(measured)))
    assert as_objects["mae"] == pytest.approx((0.1 + 0.4 + 0.1) / 3) and as_objects["bias"] == pytest.approx(0.2 / 3)


def test_measurements_with_two_rows_for_one_key_or_none_are_refused_by_name():
    predictions = predictions_table([(1, 0, 64, "mean_field", 0.5, 0.5)])
    twice = measured_table([(1, 0, 64, 0.4, 0.4), (1, 0, 64, 0.6, 0.6)])  # the same key, different values
    with pytest.raises(ValueError, match=r"^the measurements have several rows for one \(offset, seed, length\)$"):
        compare_with_measured(predictions, twice)
    with pytest.raises(ValueError, match=r"^no measurement for \(offset, seed, length\) \[\[1, 0, 64\]\]$"):
        compare_with_measured(predictions, measured_table([(1, 0, 32, 0.9, 1.0)]))


def test_predicted_accuracy_is_the_readout_on_sequences_of_the_generator_of_seed_offset_and_length():
    """Module doc: the sequences come from a seeded generator per (seed, offset, length), the same for every predictor:
    each profile predictor's accuracy is its readout on them, and exact's the kernel's own softmax on them."""
    from lengthgen.runtime.seeding import generator
    model = small_head(0)
    rows = predict_dilution(model, offset=2, seed=7, lengths=[6, 9], n_samples=200).set_index(["length", "predictor"])
    values, unembedding, bias = token_outputs(model)
    for length in (6, 9):
        tokens = torch.randint(5, (200, length), generator=generator("prop1", 7, 2, length))
        kernel = logit_kernel(model, length)
        weights = {name: profile_weights(profile, tokens, 2) for name, profile in attention_profiles(kernel, 2, length).items()}
        weights["exact"] = kernel_softmax_weights(kernel, tokens)
        for name, chosen in weights.items():
            assert rows.at[(length, name), "predicted_accuracy"] == readout_accuracy(chosen, tokens, values, unembedding,
                                                                                    bias, 2)
    with pytest.raises(ValueError, match="^the dilution law is about softmax attention; got a linear-attention head$"):
        predict_dilution(init_head(HeadConfig(5, 8, "rope", trained_positions=64, attention="linear"), 0), 1, 0, [8], 10)


def test_untrained_comparison_measures_a_randomized_head_at_the_positions_of_its_seed():
    task = {"vocab_size": 5, "train_length_min": 8, "train_length_max": 16, "eval_lengths": [16, 24]}
    eval_sets = {length: make_eval_set(0, 2, length, 60, 5) for length in task["eval_lengths"]}
    trained = init_head(HeadConfig(5, 8, "randomized_rope@noise_max_length=64", trained_positions=16), 9)
    rows = untrained_comparison(trained, eval_sets, offset=2, seed=4, task=task, n_samples=20)
    from lengthgen.evaluation import accuracy_by_length
    expected = accuracy_by_length(init_head(trained.config, 4).eval(), eval_sets, 2, 4).set_index("length")
    measured = rows.drop_duplicates("length").set_index("length")
    assert measured["measured_accuracy"].tolist() == expected.loc[measured.index, "accuracy"].tolist()
    assert measured["measured_attention"].tolist() == expected.loc[measured.index, "target_attention"].tolist()


@pytest.mark.parametrize("offset, length", [(0, 4), (4, 4), (2, 8)])
def test_ranking_and_exact_refuse_an_offset_outside_the_sequence_or_a_length_past_the_kernel(offset, length):
    kernel = random_kernel(0, 2, 7)
    with pytest.raises(ValueError, match=rf"^need 0 < offset < length <= kernel offsets, got {offset}, {length}, 7$"):
        ranking_probability(kernel, offset, length)
    with pytest.raises(ValueError, match=rf"^need 0 < offset < every length <= kernel offsets, got {offset}, \[{length}\]$"):
        exact_target_attention(kernel, offset, [length])
    with pytest.raises(ValueError, match=rf"^need 0 < offset < length <= kernel offsets, got {offset}, {length}, 7$"):
        attention_profiles(kernel, offset, length)


# --- Mutation testing (docs/mutation.md): ties in ranking, the readout's bias, the grid of exact ------------------

def test_a_key_that_only_ties_the_target_does_not_outrank_it_in_ranking():
    """ranking_probability's doc: a tie counts for the target, at a distractor's delta as at the query's own key.
    On a flat kernel every key ties the target and none outranks it: ranking is certain for every (a, t). A kernel
    of 0s and 1s is full of ties, and agrees with the enumeration (which counts only a strictly higher logit)."""
    flat = torch.zeros(3, 3, 6, dtype=torch.float64)
    assert torch.all(ranking_probability(flat, 2, 6) == 1.0)
    ties = torch.randint(2, (3, 3, 5), generator=torch.Generator().manual_seed(4)).double()
    assert torch.allclose(ranking_probability(ties, 2, 5), enumerated_ranking(ties, 2, 5), atol=1e-12)


def test_readout_accuracy_adds_the_unembedding_bias():
    """All the attention on the target, identity values and unembedding, and a bias of 5 toward token 2: every
    answer is 2, right exactly where the target is 2."""
    vocab_size, length, offset = 4, 12, 3
    profile = torch.zeros(vocab_size, vocab_size, length, dtype=torch.float64)
    profile[:, :, offset] = 1.0
    tokens = torch.randint(vocab_size, (400, length), generator=torch.Generator().manual_seed(5))
    values, unembedding, _ = identity_readout(vocab_size)
    bias = torch.tensor([0.0, 0.0, 5.0, 0.0], dtype=torch.float64)
    accuracy = readout_accuracy(profile_weights(profile, tokens, offset), tokens, values, unembedding, bias, offset)
    assert accuracy == (tokens[:, offset] == 2).double().mean().item()


def test_profile_weights_are_the_row_of_each_sequences_query_and_target_tokens():
    """w[a, t, .] with a the token at delta 0 (the query) and t the one at the offset, whatever lies between."""
    vocab_size, length, offset = 4, 6, 3
    a, t, delta = torch.meshgrid(*(torch.arange(size, dtype=torch.float64) for size in (vocab_size, vocab_size, length)),
                                 indexing="ij")
    profile = 100 * a + 10 * t + delta  # each (a, t, delta) its own value
    tokens = torch.randint(vocab_size, (50, length), generator=torch.Generator().manual_seed(6))
    expected = 100 * tokens[:, :1] + 10 * tokens[:, offset:offset + 1] + torch.arange(length)
    assert torch.equal(profile_weights(profile, tokens, offset), expected.double())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_without_distractors_misses_only_the_integral_below_the_grid(seed):
    """length = offset + 1: E[x / (x + z + Y)] is x / (x + z) (logits shifted to a maximum of 0 per query token).
    The grid's only visible loss is the integral over u (x + z) < exp(LOG_U_MIN), at most x / (x + z) exp(LOG_U_MIN)
    (module constants): the step's error is ~exp(-pi^2 / step) and the integrand past the window's end below
    exp(-TAIL). (1.1 leaves room for the trapezoid's endpoint correction, step^2 / 12 of it; 1e-14 for rounding.)"""
    kernel = random_kernel(seed, 4, 2)
    shifted = kernel - kernel.amax((1, 2), keepdim=True)
    x, z = shifted[:, :, 1].exp(), shifted[:, :, 0].diagonal().exp()[:, None]  # (V_a, V_t), (V_a, 1)
    missing = x / (x + z) - exact_target_attention(kernel, 1, [2])[0]
    assert torch.all(missing >= -1e-14)
    assert torch.all(missing <= 1.1 * x / (x + z) * math.exp(dilution.LOG_U_MIN) + 1e-14)


def test_untrained_comparison_runs_the_head_at_init_on_the_trained_heads_device(monkeypatch):
    """The head at init is measured and predicted where the trained head lives (a GPU run keeps it on the GPU), in
    eval mode. A head on the meta device stands in for one off the CPU; the measurement and the predictions are
    stubs that record the head they get."""
    task = {"vocab_size": 5, "train_length_min": 8, "train_length_max": 16, "eval_lengths": [16]}
    heads = []

    def measure(head, eval_sets, offset, seed):
        heads.append(head)
        return pd.DataFrame({"length": [16], "target_attention": [0.5], "accuracy": [0.5]})

    def predict(head, offset, seed, lengths, n_samples, with_exact):
        heads.append(head)
        return predictions_table([(offset, seed, 16, "mean_field", 0.4, 0.4)])

    monkeypatch.setattr(prop1, "accuracy_by_length", measure)
    monkeypatch.setattr(prop1, "predict_dilution", predict)
    rows = untrained_comparison(small_head(3).to("meta"), {}, offset=2, seed=4, task=task, n_samples=10)
    assert rows[["measured_attention", "predicted_attention"]].values.tolist() == [[0.5, 0.4]]
    assert [next(head.parameters()).device.type for head in heads] == ["meta", "meta"]
    assert not any(head.training for head in heads)


def test_scope_offset_reads_the_offset_of_a_per_offset_scope():
    """The section sorts the per-offset scopes by it: K=16 after K=2, which sorting the strings would not do."""
    assert scope_offset("K=2") == 2 and scope_offset("K=16") == 16
    assert sorted(["K=16", "K=2"], key=scope_offset) == ["K=2", "K=16"]
