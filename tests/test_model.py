import math

import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from lengthgen import evaluation
from lengthgen.checkpoint import ModelFileError, save_model
from lengthgen.encodings import ENCODINGS, EncodingConfig, build_encoding, sorted_random_subsets
from lengthgen.evaluation import accuracy_by_length
from lengthgen.length_scaling import LOGIT_SCALES, POSITION_SCALES
from lengthgen.model import ATTENTION_KINDS, AttentionHead, HeadConfig, load_head
from lengthgen.runtime import DeviceError, resolve_device
from lengthgen.task import TaskConfig, make_eval_set
from lengthgen.training import TrainConfig, TrainingDiverged, check_not_diverged, init_head, train_head


def head(pe: str, seed: int = 0, d_model: int = 16, trained_positions: int = 64, **kwargs) -> AttentionHead:
    return init_head(HeadConfig(vocab_size=8, d_model=d_model, pe=pe, trained_positions=trained_positions, **kwargs),
                     seed)


@given(length=st.integers(2, 24), shift=st.integers(1, 100_000), seed=st.integers(0, 1000))
@settings(max_examples=30, deadline=None)
def test_rope_logits_depend_on_relative_offset_only(length, shift, seed):
    model = head("rope", seed).double()
    tokens = torch.randint(8, (3, length), generator=torch.Generator().manual_seed(seed))
    scores, _ = model.attention(tokens)
    shifted, _ = model.attention(tokens, position_offset=shift)
    assert torch.allclose(scores, shifted, rtol=0, atol=1e-9)


# None, and every length scale on its own, with reference length 6 so that test lengths fall on both sides of it.
SCALINGS = [{}, *({"logit_scale": name, "reference_length": 6} for name in LOGIT_SCALES if name != "none"),
            *({"position_scale": name, "reference_length": 6} for name in POSITION_SCALES if name != "none")]


@pytest.mark.heavy
@pytest.mark.parametrize("scaling", SCALINGS, ids=lambda options: "+".join(
    value for key, value in options.items() if key != "reference_length") or "unscaled")
@pytest.mark.parametrize("attention", ATTENTION_KINDS)
@pytest.mark.parametrize("pe", sorted(ENCODINGS) + ["rope@base=100", "fire@threshold=8"])
@pytest.mark.parametrize("per_sequence", [False, True], ids=["shared positions", "per-sequence positions"])
@given(length=st.integers(1, 30), shift=st.integers(0, 30), seed=st.integers(0, 1000))
@settings(max_examples=6, deadline=None)
def test_token_tables_compute_the_reference_function_and_its_gradients(pe, attention, scaling, per_sequence, length,
                                                                        shift, seed):
    """Both fast paths against the definition: shared positions 0..T-1 (shifted), and per-sequence
    position ids, the encoding's own draws where it draws them (randomized), else sorted random ones;
    each under every length scaling (a position scale is defined for shared positions only)."""
    # learned_init_std 1: position terms as large as token terms, so a wrong table index shows.
    model = head(pe, seed, attention=attention, learned_init_std=1.0, **scaling).double()
    rng = torch.Generator().manual_seed(seed)
    tokens = torch.randint(8, (5, length), generator=rng)
    targets = torch.randint(8, (5,), generator=rng)
    positions = model.encoding.sample_positions(5, length, rng)
    if positions is not None:
        if not per_sequence:
            return  # a randomized encoding always draws its positions ...
        shift = 0  # ... over its whole range of ids
    elif per_sequence:
        positions = sorted_random_subsets(5, length, 64 - shift, rng)
    fractional = "position_scale" in scaling and length > scaling["reference_length"]
    if "position_scale" in scaling and (positions is not None or (fractional and pe == "t5")):
        # A position scale is defined for shared positions 0..T-1, and fractional ones for offsets not bucketed.
        with pytest.raises(ValueError, match="not defined for per-sequence position ids|fractional positions"):
            model.predict(tokens, shift, positions)
        return
    (logits, weights), (scores, _) = model.predict(tokens, shift, positions), model.attention(tokens, shift, positions)
    reference_logits, reference_scores, reference_weights = model.reference_predict(tokens, shift, positions)
    for fast, reference in ((logits, reference_logits), (scores, reference_scores), (weights, reference_weights)):
        torch.testing.assert_close(fast, reference, rtol=0, atol=1e-12)
    parameters = [p for p in model.parameters() if p.requires_grad]
    gradients = torch.autograd.grad(F.cross_entropy(logits, targets), parameters, allow_unused=True)
    reference_gradients = torch.autograd.grad(F.cross_entropy(reference_logits, targets), parameters,
                                              allow_unused=True)
    for (name, _), fast, reference in zip(model.named_parameters(), gradients, reference_gradients):
        assert (fast is None) == (reference is None), name
        if fast is not None:
            torch.testing.assert_close(fast, reference, rtol=0, atol=1e-12, msg=name)


@pytest.mark.parametrize("pe", ["learned", "sinusoidal"])
def test_absolute_encodings_change_under_a_shift(pe):
    model = head(pe, learned_init_std=1.0)
    tokens = torch.randint(8, (3, 10), generator=torch.Generator().manual_seed(0))
    assert (model.attention(tokens)[0] - model.attention(tokens, position_offset=7)[0]).abs().max() > 1e-3


def test_learned_rows_past_the_training_range_receive_no_gradient():
    config = HeadConfig(vocab_size=8, d_model=16, pe="learned", trained_positions=64)
    task = TaskConfig(vocab_size=8, offset=1, train_length_min=4, train_length_max=12)
    initial = init_head(config, seed=3).encoding.table.detach().clone()
    model, _ = train_head(config, task, TrainConfig(steps=30, batch_size=16, lr=1e-2), seed=3, device="cpu")
    table = model.encoding.table.detach()
    assert torch.equal(table[12:], initial[12:])
    assert not torch.equal(table[:12], initial[:12])


def test_softmax_weights_sum_to_one_and_linear_weights_are_the_logits():
    tokens = torch.randint(8, (2, 9), generator=torch.Generator().manual_seed(1))
    scores, weights = head("rope").attention(tokens)
    assert torch.allclose(weights.sum(-1), torch.ones(2))
    scores, weights = head("rope", attention="linear").attention(tokens)
    assert torch.equal(scores, weights)


def test_unknown_encoding_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown positional encoding 'rotary'.*rope"):
        build_encoding("rotary", EncodingConfig(d_model=8, trained_positions=16))


def test_every_registered_encoding_builds_and_runs():
    tokens = torch.randint(8, (2, 6), generator=torch.Generator().manual_seed(0))
    for pe in ENCODINGS:
        logits, loss = head(pe)(tokens, tokens[:, -2])
        assert logits.shape == (2, 8) and torch.isfinite(loss)


def test_learned_rows_past_the_stored_ones_are_those_of_a_longer_table():
    """Rows past the training range are drawn when read, from their seeded init: a head that stores
    8 rows computes what one storing 64 computes, at every position, so no table size is a setting
    of training."""
    short, long = head("learned", seed=4, trained_positions=8), head("learned", seed=4, trained_positions=64)
    positions = torch.tensor([0, 7, 8, 40, 63])
    assert torch.equal(short.encoding.position_embedding(positions), long.encoding.position_embedding(positions))
    tokens = torch.randint(8, (3, 60), generator=torch.Generator().manual_seed(0))
    assert torch.equal(short.attention(tokens)[0], long.attention(tokens)[0])
    with pytest.raises(IndexError, match="negative"):
        short.attention(tokens, position_offset=-5)


def test_saved_head_reloads_with_identical_outputs(tmp_path):
    model = head("learned", seed=5)
    save_model(model, tmp_path / "model.pt")
    tokens = torch.randint(8, (4, 12), generator=torch.Generator().manual_seed(2))
    assert torch.equal(model(tokens)[0], load_head(tmp_path / "model.pt")(tokens)[0])


def test_a_head_of_another_config_is_named_not_used(tmp_path):
    save_model(head("rope", d_model=8), tmp_path / "model.pt")
    with pytest.raises(ModelFileError, match="model.pt: a AttentionHead saved under another config: d_model 8 where this config has 16"):
        load_head(tmp_path / "model.pt", expected={"d_model": 16, "vocab_size": 8, "pe": "rope"})


def test_weights_of_another_shape_are_named(tmp_path):
    checkpoint = {"config": HeadConfig(vocab_size=8, d_model=16, pe="rope", trained_positions=64).__dict__,
                  "state_dict": head("rope", d_model=8).state_dict()}
    torch.save(checkpoint, tmp_path / "model.pt")
    with pytest.raises(ModelFileError, match=r"model.pt: weights do not fit the model's config: "
                                             r"token_embedding.weight has shape \(8, 8\), expected \(8, 16\)"):
        load_head(tmp_path / "model.pt")


@pytest.mark.parametrize("content", [b"", b"not a checkpoint", b"PK\x03\x04truncated zip"])
def test_a_file_that_is_not_a_checkpoint_is_named(tmp_path, content):
    (tmp_path / "model.pt").write_bytes(content)
    with pytest.raises(ModelFileError, match="model.pt: not a saved model .*delete it and rerun"):
        load_head(tmp_path / "model.pt")


@pytest.mark.parametrize("losses, first_step, message", [
    ([2.0, float("nan"), 1.0], 11, "run pe=rope seed=0 diverged: loss nan at step 12;"),
    ([2.0, 1.0, float("inf")], 1, "loss inf at step 3;"),
    ([30.0, 25.0], 101, "mean loss 27.5 over steps 101-102 is above 10 x ln\\(V\\) = 20.8"),
])
def test_a_run_that_blew_up_is_named_with_its_step(losses, first_step, message):
    with pytest.raises(TrainingDiverged, match=message):
        check_not_diverged(torch.tensor(losses), first_step, "pe=rope seed=0", math.log(8))
    check_not_diverged(torch.tensor([2.0, 15.0]), first_step, "pe=rope seed=0", math.log(8))  # slow, not diverged


def test_training_at_an_absurd_learning_rate_fails_before_writing_anything():
    config = HeadConfig(vocab_size=8, d_model=16, pe="learned", trained_positions=64)
    task = TaskConfig(vocab_size=8, offset=1, train_length_min=4, train_length_max=8)
    with pytest.raises(TrainingDiverged, match="training run pe=learned seed=3 offset=1 diverged: loss nan at step 2"):
        train_head(config, task, TrainConfig(steps=50, batch_size=16, lr=1e12, log_every=10), seed=3, device="cpu")


@pytest.mark.heavy
@pytest.mark.parametrize("pe", ["rope", "randomized_learned"])
def test_same_seed_same_numbers_bit_for_bit(pe):
    config = HeadConfig(vocab_size=8, d_model=16, pe=pe, trained_positions=64)
    task = TaskConfig(vocab_size=8, offset=2, train_length_min=4, train_length_max=8)
    train = TrainConfig(steps=20, batch_size=16, lr=1e-2)
    first, curve = train_head(config, task, train, seed=7, device="cpu")
    second, same_curve = train_head(config, task, train, seed=7, device="cpu")
    other, other_curve = train_head(config, task, train, seed=8, device="cpu")
    assert curve.equals(same_curve) and not curve.equals(other_curve)
    for name, tensor in first.state_dict().items():
        assert torch.equal(tensor, second.state_dict()[name])


def test_randomized_positions_leave_the_training_batches_of_every_other_encoding():
    task = TaskConfig(vocab_size=8, offset=1, train_length_min=4, train_length_max=12)
    curves = [train_head(HeadConfig(vocab_size=8, d_model=16, pe=pe, trained_positions=64), task,
                         TrainConfig(steps=15, batch_size=8, lr=1e-2), seed=3, device="cpu")[1]
              for pe in ("rope", "randomized_rope")]
    assert curves[0]["length"].equals(curves[1]["length"]) and not curves[0]["loss"].equals(curves[1]["loss"])


def test_evaluation_draws_the_same_positions_whatever_the_chunking(monkeypatch):
    model = head("randomized_rope", seed=2)
    eval_sets = {length: make_eval_set(0, 1, length, 40, 8) for length in (8, 24)}
    whole = accuracy_by_length(model, eval_sets, offset=1, seed=0)
    monkeypatch.setattr(evaluation, "TOKENS_PER_BATCH", 50)  # chunks of 2 to 6 sequences
    pd.testing.assert_frame_equal(accuracy_by_length(model, eval_sets, offset=1, seed=0), whole)
    assert not accuracy_by_length(model, eval_sets, offset=1, seed=1).equals(whole)  # the draws follow the seed


def test_a_cuda_device_this_machine_lacks_is_named():
    with pytest.raises(DeviceError, match="device: 'cuda:99' does not exist on this machine"):
        resolve_device("cuda:99")
    assert resolve_device("cpu") == torch.device("cpu")
