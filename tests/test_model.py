import math

import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from lengthgen import evaluation
from lengthgen.models.checkpoint import ModelFileError, save_model
from lengthgen.models.encodings import ENCODINGS, EncodingConfig, build_encoding
from lengthgen.models.encodings.randomized import sorted_random_subsets
from lengthgen.evaluation import accuracy_by_length
from lengthgen.models.length_scaling import LOGIT_SCALES, POSITION_SCALES
from lengthgen.models.head import ATTENTION_KINDS, AttentionHead, HeadConfig, load_head
from lengthgen.runtime.device import DeviceError, resolve_device
from lengthgen.runtime.seeding import derive_seed
from lengthgen.task import TaskConfig, make_eval_set
from lengthgen.training.loop import TrainConfig, TrainingDiverged, check_not_diverged, init_head, train_head


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


@pytest.mark.parametrize("pe", ["rope", "learned"])
def test_token_tables_passed_in_give_the_same_bits_and_another_lengths_are_refused(pe):
    model = head(pe).eval()
    tokens = torch.randint(8, (3, 9), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        for position_offset in (0, 5):
            tables = model.token_tables(9, position_offset)
            for predicted, from_tables in ((model.predict(tokens, position_offset),
                                            model.predict(tokens, position_offset, tables=tables)),
                                           (model.attention(tokens, position_offset),
                                            model.attention(tokens, position_offset, tables=tables))):
                assert all(torch.equal(a, b) for a, b in zip(predicted, from_tables))
        with pytest.raises(ValueError, match="token tables of length 12 for sequences of length 9"):
            model.predict(tokens, tables=model.token_tables(12))


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


def test_the_same_weights_saved_twice_are_the_same_bytes(tmp_path):
    """Same seed, same files: a model file's bytes depend on its weights and config alone, not on the temp file
    it was written through (tables.atomic_path)."""
    save_model(head("rope", seed=3), tmp_path / "first.pt")
    save_model(head("rope", seed=3), tmp_path / "second.pt")
    assert (tmp_path / "first.pt").read_bytes() == (tmp_path / "second.pt").read_bytes()


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


# --- Mutation testing (docs/mutation.md): the definition written out, and the fast paths held to it in the unit tier ---

def head_formula_by_hand(model: AttentionHead, tokens: torch.Tensor, offset: int = 0) -> tuple[list, list, list]:
    """(output logits, attention logits, weights) per sequence, from the head's formula one key at a time in plain
    float64 Python: x_t = E[token_t] + p_t; q = W_q x_T + b_q, k_t = W_k x_t + b_k, both rotated by
    position * theta_i per block (x_2i, x_2i+1) for rope; logit_t = (q . k_t / sqrt(D) + bias_t) * logit factor;
    weights = softmax over t (or the logits, for linear attention); output = W_u sum_t w_t (W_v x_t + b_v) + b_u.
    Positions are (t + offset) times the position scale's factor. Only the position term p_t and a learned bias
    (t5, fire) are read from the encoding's hooks, whose formulas tests/test_encodings.py pins."""
    config = model.config
    weight = {name: p.detach().double().tolist() for name, p in model.named_parameters()}
    length = tokens.shape[1]
    factor = POSITION_SCALES[config.position_scale](length, config.reference_length)
    positions = [(t + offset) * factor for t in range(length)]
    ids = torch.tensor(positions, dtype=torch.float64) if factor != 1 else torch.arange(length) + offset
    terms = model.encoding.position_embedding(ids)
    bias = model.encoding.logit_bias(ids[-1:], ids)
    bias = None if bias is None else bias.detach()
    kind = config.pe.partition("@")[0]

    def affine(name, x):
        return [sum(w * v for w, v in zip(row, x)) + b for row, b in zip(weight[f"{name}.weight"], weight[f"{name}.bias"])]

    def rotate(x, p):
        if kind != "rope":
            return x
        base = float(config.pe.partition("=")[2]) if "@" in config.pe else config.rope_base
        out = []
        for i in range(0, len(x), 2):
            angle = p * base ** (-i / len(x))
            out += [x[i] * math.cos(angle) - x[i + 1] * math.sin(angle), x[i] * math.sin(angle) + x[i + 1] * math.cos(angle)]
        return out

    scale = LOGIT_SCALES[config.logit_scale](length, config.reference_length)
    outputs, all_scores, all_weights = [], [], []
    for sequence in tokens.tolist():
        xs = [list(weight["token_embedding.weight"][token]) for token in sequence]
        if terms is not None:
            xs = [[a + b for a, b in zip(x, term)] for x, term in zip(xs, terms.double().tolist())]
        query = rotate(affine("query", xs[-1]), positions[-1])
        scores = []
        for t, x in enumerate(xs):
            key = rotate(affine("key", x), positions[t])
            score = sum(a * b for a, b in zip(query, key)) / math.sqrt(config.d_model)
            if bias is not None:
                score += float(bias[0, t])
            scores.append(score * scale)
        if config.attention == "softmax":
            exps = [math.exp(s - max(scores)) for s in scores]
            weights = [e / sum(exps) for e in exps]
        else:
            weights = scores
        values = [affine("value", x) for x in xs]
        attended = [sum(w * value[d] for w, value in zip(weights, values)) for d in range(config.d_model)]
        outputs.append(affine("unembedding", attended))
        all_scores.append(scores)
        all_weights.append(weights)
    return outputs, all_scores, all_weights


@pytest.mark.parametrize("pe, options", [
    ("nope", {}), ("learned", {}), ("sinusoidal", {}), ("rope", {}), ("rope@base=100", {}), ("alibi@slope=0.5", {}),
    ("t5", {}), ("fire", {}), ("rope", {"attention": "linear"}), ("learned", {"attention": "linear"}),
    ("rope", {"logit_scale": "log_length", "reference_length": 4}), ("learned", {"logit_scale": "yarn", "reference_length": 4}),
    ("rope", {"position_scale": "interpolate", "reference_length": 4}),
    ("learned", {"position_scale": "interpolate", "reference_length": 4}),
])
def test_reference_predict_is_the_heads_formula_written_out(pe, options):
    """The definition itself, against the formula computed key by key (with a shift of every position id)."""
    model = head(pe, seed=3, d_model=4, learned_init_std=1.0, **options).double()
    tokens = torch.randint(8, (2, 7), generator=torch.Generator().manual_seed(5))
    logits, scores, weights = model.reference_predict(tokens, position_offset=2)
    expected_logits, expected_scores, expected_weights = head_formula_by_hand(model, tokens, offset=2)
    torch.testing.assert_close(scores, torch.tensor(expected_scores, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(weights, torch.tensor(expected_weights, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(logits, torch.tensor(expected_logits, dtype=torch.float64), rtol=0, atol=1e-12)
    assert (scores[:, 1:] - scores[:, :-1]).abs().max() > 1e-6  # the keys' logits differ: an index slip shows


# Every registered encoding, with per-sequence ids where it can take them (randomized ones draw their own).
FAST_PATH_CASES = [(pe, {}) for pe in sorted(ENCODINGS)] + [
    ("rope", {"attention": "linear"}), ("learned", {"attention": "linear"}), ("t5", {"attention": "linear"}),
    ("randomized_learned", {"attention": "linear"}),
    ("rope", {"logit_scale": "log_length", "reference_length": 4}), ("learned", {"logit_scale": "yarn", "reference_length": 4}),
    ("alibi@slope=0.5", {"logit_scale": "yarn", "reference_length": 4}),
    ("rope", {"position_scale": "interpolate", "reference_length": 4}),
    ("learned", {"position_scale": "interpolate", "reference_length": 4}),
]


@pytest.mark.parametrize("pe, options", FAST_PATH_CASES)
def test_fast_paths_compute_the_reference_function_and_its_gradients(pe, options):
    """The unit tier's fixed examples of the heavy test above: ``predict`` and ``attention`` (token tables, and
    per-sequence ids) equal ``reference_predict``, values and gradients, with a shift of every position id."""
    model = head(pe, seed=2, learned_init_std=1.0, **options).double()
    rng = torch.Generator().manual_seed(7)
    tokens = torch.randint(8, (3, 9), generator=rng)
    targets = torch.randint(8, (3,), generator=rng)
    drawn = model.encoding.sample_positions(3, 9, rng)
    cases = [(3, None)] if drawn is None else []
    if "position_scale" not in options:  # a position scale is defined for 0..T-1 only
        cases.append((0, drawn) if drawn is not None else (2, sorted_random_subsets(3, 9, 40, rng)))
    for shift, positions in cases:
        (logits, weights), (scores, same_weights) = model.predict(tokens, shift, positions), model.attention(tokens, shift, positions)
        reference_logits, reference_scores, reference_weights = model.reference_predict(tokens, shift, positions)
        for fast, reference in ((logits, reference_logits), (scores, reference_scores), (weights, reference_weights),
                                (same_weights, reference_weights), (model(tokens, None, shift, positions)[0], reference_logits)):
            torch.testing.assert_close(fast, reference, rtol=0, atol=1e-12)
        parameters = list(model.parameters())
        gradients = torch.autograd.grad(F.cross_entropy(logits, targets), parameters, allow_unused=True)
        reference_gradients = torch.autograd.grad(F.cross_entropy(reference_logits, targets), parameters, allow_unused=True)
        for (name, _), fast, reference in zip(model.named_parameters(), gradients, reference_gradients):
            assert (fast is None) == (reference is None), name
            if fast is not None:
                torch.testing.assert_close(fast, reference, rtol=0, atol=1e-12, msg=name)


# The meta device holds no data, only shapes, dtypes and devices: a tensor made on the CPU by mistake (a device
# argument dropped) meets the head's meta tensors and fails, on a machine without any accelerator. The learned
# table reads its position ids' values (rows drawn past the stored ones), which the meta device does not have.
@pytest.mark.parametrize("pe", [pe for pe in sorted(ENCODINGS) if pe != "learned"])
def test_the_head_computes_on_the_device_its_weights_are_on(pe):
    model = head(pe).to("meta")
    tokens = torch.zeros(2, 5, dtype=torch.long, device="meta")
    positions = torch.arange(5, device="meta").expand(2, 5)
    per_sequence = [] if model.config.position_scale != "none" else [positions]
    for drawn in [None, *per_sequence]:
        logits, weights = model.predict(tokens, 1, drawn)
        scores, _ = model.attention(tokens, 1, drawn)
        reference_logits, reference_scores, _ = model.reference_predict(tokens, 1, drawn)
        _, loss = model(tokens, tokens[:, 0], 1, drawn)
        for tensor, shape in ((logits, (2, 8)), (weights, (2, 5)), (scores, (2, 5)), (reference_logits, (2, 8)),
                              (reference_scores, (2, 5)), (loss, ())):
            assert tensor.device.type == "meta" and tensor.shape == shape


def test_a_saved_head_loads_onto_the_device_asked_for(tmp_path):
    save_model(head("rope"), tmp_path / "model.pt")
    assert {p.device.type for p in load_head(tmp_path / "model.pt", device="meta").parameters()} == {"meta"}
    assert not load_head(tmp_path / "model.pt").training  # in eval mode


def test_per_sequence_ids_under_a_position_scale_are_refused_by_name():
    model = head("rope", position_scale="interpolate", reference_length=4)
    tokens = torch.zeros(1, 6, dtype=torch.long)
    for call in (model.predict, model.attention, model.reference_predict):
        with pytest.raises(ValueError, match="^position_scale 'interpolate' rescales 0..T-1; it is not defined for "
                                             "per-sequence position ids$"):
            call(tokens, 0, torch.arange(6)[None])


def test_per_sequence_ids_with_both_a_position_term_and_a_rotation_are_refused_by_name():
    """No registered encoding has both (per-sequence ids would need the rotation key by key); one that did is named."""

    class RotatedLearned(ENCODINGS["learned"]):
        rotate = ENCODINGS["rope"].rotate

        def __init__(self, config):
            super().__init__(config)
            self.register_buffer("theta", ENCODINGS["rope"](config).theta, persistent=False)

    model = head("learned")
    model.encoding = RotatedLearned(model.config.encoding_config())
    with pytest.raises(NotImplementedError, match="^learned: per-sequence ids with both a position term and a rotation$"):
        model.predict(torch.zeros(1, 4, dtype=torch.long), 0, torch.arange(4)[None])


def test_a_float32_head_keeps_float32_with_a_float64_position_term():
    """The sinusoidal term is computed in float64; the head casts it to its own dtype on every path."""
    model = head("sinusoidal")
    tokens = torch.randint(8, (2, 6), generator=torch.Generator().manual_seed(0))
    for positions in (None, sorted_random_subsets(2, 6, 30, torch.Generator().manual_seed(1))):
        logits, weights = model.predict(tokens, 0, positions)
        reference_logits, _, _ = model.reference_predict(tokens, 0, positions)
        assert logits.dtype == weights.dtype == reference_logits.dtype == torch.float32
        torch.testing.assert_close(logits, reference_logits, rtol=1e-5, atol=1e-5)


def test_the_heads_encoding_gets_its_base_init_width_and_seed():
    """The head's settings reach its encoding: rope's frequencies base^(-2i/D), and each learned row drawn
    N(0, learned_init_std^2) from the generator of (learned_row, init_seed, position) (encodings.LearnedAbsolute)."""
    rope = AttentionHead(HeadConfig(vocab_size=8, d_model=16, pe="rope", trained_positions=8, rope_base=100.0))
    torch.testing.assert_close(rope.encoding.theta, 100.0 ** (-torch.arange(0, 16, 2, dtype=torch.float64) / 16),
                               rtol=1e-15, atol=0)
    learned = AttentionHead(HeadConfig(vocab_size=8, d_model=16, pe="learned", trained_positions=8,
                                       learned_init_std=0.5, init_seed=5))
    for position in (0, 7, 30):  # stored rows, and one drawn past them
        row = torch.randn(16, generator=torch.Generator().manual_seed(derive_seed("learned_row", 5, position))) * 0.5
        assert torch.equal(learned.encoding.position_embedding(torch.tensor([position]))[0], row)


def test_default_position_ids_start_at_zero_on_every_path():
    """Without a shift the ids are 0..T-1: the definition, the fast paths and the formula agree for an absolute encoding."""
    model = head("learned", seed=1, d_model=4, learned_init_std=1.0).double()
    tokens = torch.randint(8, (2, 5), generator=torch.Generator().manual_seed(3))
    expected_logits, expected_scores, _ = head_formula_by_hand(model, tokens)
    reference_logits, reference_scores, _ = model.reference_predict(tokens)
    torch.testing.assert_close(reference_scores, torch.tensor(expected_scores, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(reference_logits, torch.tensor(expected_logits, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(model.predict(tokens)[0], reference_logits, rtol=0, atol=1e-12)
    torch.testing.assert_close(model.attention(tokens)[0], reference_scores, rtol=0, atol=1e-12)
    torch.testing.assert_close(model(tokens)[0], reference_logits, rtol=0, atol=1e-12)


def test_an_unknown_attention_kind_is_named_with_the_known_ones():
    with pytest.raises(ValueError, match=r"^attention must be one of \('softmax', 'linear'\), got 'sigmoid'$"):
        head("rope", attention="sigmoid")
