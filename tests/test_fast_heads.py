"""The fast training steps (``lengthgen/training/fast_heads.py``, ``fast_randomized.py``) against the head's
definition: every family they train computes ``AttentionHead.forward``'s loss to float32 rounding and its gradients,
takes the same Adam step, and keeps each seed's weights bit-identical alone and beside other seeds."""
import copy

import pytest
import torch

from lengthgen.models.head import HeadConfig
from lengthgen.runtime.seeding import generator
from lengthgen.task import TaskConfig, retrieval_targets, sample_sequences
from lengthgen.training.adam import FusedAdam
from lengthgen.training.fast_bias import FastAlibiHeads, FastBiasHeads, FastFireHeads, FastT5Heads
from lengthgen.training.fast_heads import FastLearnedHeads, FastRopeHeads, FastSinusoidalHeads, cross_entropy
from lengthgen.training.fast_randomized import (
    FastRandomizedLearnedHeads,
    FastRandomizedRopeHeads,
    grouping_order,
    sampled_dots,
)
from lengthgen.training.fast_select import fast_heads
from lengthgen.training.loop import (
    TrainConfig,
    fit,
    init_head,
    seed_accuracies,
    train_heads,
)

# Every head the fast step trains: the sweep's two encodings, a rotary base the name sets, the linear-attention
# control and the log-length head, and a named normal init.
FAST = {
    "rope": {"pe": "rope"},
    "learned": {"pe": "learned"},
    "rope@base=100": {"pe": "rope@base=100"},
    "linear": {"pe": "rope", "attention": "linear"},
    "log_length": {"pe": "rope", "logit_scale": "log_length", "reference_length": 9},
    "rope normal@std=0.1": {"pe": "rope", "init": "normal@std=0.1"},
    "learned normal@std=0.1": {"pe": "learned", "init": "normal@std=0.1"},
    # ids drawn per sequence: the default range, and one a sequence nearly fills (gaps of every size)
    "randomized_rope": {"pe": "randomized_rope"},
    "randomized_rope@noise_max_length=12 linear": {"pe": "randomized_rope@noise_max_length=12", "attention": "linear"},
    "randomized_learned": {"pe": "randomized_learned"},
    "randomized_learned@noise_max_length=12 linear": {"pe": "randomized_learned@noise_max_length=12",
                                                      "attention": "linear"},
    # a bias from an MLP of the offset: the threshold learned, above the query position or tied with it (length 9's,
    # 8), fixed, under a length scale, and a named normal init
    "fire": {"pe": "fire"},
    "fire@threshold=8": {"pe": "fire@threshold=8"},
    "fire_fixed log_length": {"pe": "fire_fixed", "logit_scale": "log_length", "reference_length": 9},
    "fire normal@std=0.1": {"pe": "fire", "init": "normal@std=0.1"},
    # fixed position rows; no bias; a fixed, a steep and a learned slope; learned buckets (under linear attention)
    "sinusoidal": {"pe": "sinusoidal"},
    "nope": {"pe": "nope"},
    "alibi": {"pe": "alibi"},
    "alibi@slope=0.5 log_length": {"pe": "alibi@slope=0.5", "logit_scale": "log_length", "reference_length": 9},
    "alibi_learned": {"pe": "alibi_learned"},
    "t5": {"pe": "t5"},
    "t5 linear": {"pe": "t5", "attention": "linear"},
}
SHAPES = {"test": (6, 8), "default": (16, 64)}  # (V, D): the tests' small head and the default run's


def head_config(name: str, shape: str = "test") -> HeadConfig:
    vocab_size, d_model = SHAPES[shape]
    return HeadConfig(vocab_size=vocab_size, d_model=d_model, trained_positions=9, **FAST[name])


def batch(seeds: list[int], length: int, config: HeadConfig,
          size: int = 16) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Each seed's own batch (S, B, T), targets (S, B) and position ids (S, B, T) where the encoding draws them, else
    None, from generators of the seed."""
    vocab_size, encoding = config.vocab_size, init_head(config, 0).encoding
    tokens = torch.stack([sample_sequences(generator("fast", seed, length), size, length, vocab_size)
                          for seed in seeds])
    drawn = [encoding.sample_positions(size, length, generator("fast_positions", seed, length)) for seed in seeds]
    positions = None if drawn[0] is None else torch.stack(drawn)
    return tokens, torch.stack([retrieval_targets(seed_tokens, 2) for seed_tokens in tokens]), positions


def definition(models, tokens, targets, positions):
    """Per seed: (loss, accuracy, gradients by name) of ``AttentionHead.forward`` on the seed's batch, by autograd."""
    results = []
    for index, (model, seed_tokens, seed_targets) in enumerate(zip(models, tokens, targets)):
        logits, loss = model(seed_tokens, seed_targets, positions=None if positions is None else positions[index])
        names, parameters = zip(*model.named_parameters())
        gradients = dict(zip(names, torch.autograd.grad(loss, parameters)))
        results.append((loss.detach(), seed_accuracies(logits[None].detach(), seed_targets[None])[0], gradients))
    return results


def close_gradients(fast: torch.Tensor, reference: torch.Tensor, head_scale: float) -> bool:
    """Equal to 2e-5 of the parameter's largest entry; a gradient that is zero in exact arithmetic (the key bias of an
    encoding without rotation adds one logit to every key, which softmax ignores) is rounding on both sides, held to
    1e-6 of the head's largest gradient entry instead."""
    tolerance = max(2e-5 * float(reference.abs().max()), 1e-6 * head_scale)
    return float((fast - reference).abs().max()) <= tolerance


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", FAST)
def test_the_fast_step_computes_the_heads_loss_accuracy_and_gradients(name, shape):
    torch.set_num_threads(1)
    models = [init_head(head_config(name, shape), seed) for seed in range(3)]
    step = fast_heads(models, "float32")
    for length in (4, 9):
        tokens, targets, positions = batch(list(range(3)), length, models[0].config)
        loss, accuracy = step.step(tokens, targets, 0.0, positions)  # lr 0: the weights stay those of the models
        for seed, (reference_loss, reference_accuracy, gradients) in enumerate(definition(models, tokens, targets,
                                                                                           positions)):
            assert abs(float(loss[seed] / reference_loss) - 1) <= 1e-6
            assert float(accuracy[seed]) == float(reference_accuracy)
            head_scale = max(float(gradient.abs().max()) for gradient in gradients.values())
            for name_, gradient in gradients.items():
                assert close_gradients(step.g[name_][seed], gradient, head_scale), (name_, length)


@pytest.mark.parametrize("name", FAST)
def test_one_adam_step_of_the_fast_step_is_the_definitions(name):
    """After one step at the default learning rate, every weight is where Adam takes the definition's weight, to
    float32 rounding of the step, wherever the gradient is more than rounding (Adam's first step is lr times the
    gradient's sign, and a gradient of rounding alone has a random sign)."""
    torch.set_num_threads(1)
    lr = 1e-2
    models = [init_head(head_config(name, "default"), seed) for seed in range(2)]
    references = copy.deepcopy(models)
    step = fast_heads(models, "float32")
    tokens, targets, positions = batch([0, 1], 9, models[0].config, size=32)
    results = definition(references, tokens, targets, positions)
    adam = FusedAdam([parameter for model in references for parameter in model.parameters()])
    for model, (_, _, gradients) in zip(references, results):
        for parameter_name, parameter in model.named_parameters():
            parameter.grad = gradients[parameter_name]
    adam.step(lr)
    step.step(tokens, targets, lr, positions)
    for seed, model in enumerate(references):
        gradients = results[seed][2]
        head_scale = max(float(gradient.abs().max()) for gradient in gradients.values())
        for parameter_name, parameter in model.named_parameters():
            counted = gradients[parameter_name].abs() > 1e-4 * head_scale
            difference = (step.p[parameter_name][seed] - parameter.detach()).abs()
            bound = 1e-6 * lr + 1e-7 * float(parameter.detach().abs().max())
            assert float(torch.where(counted, difference, 0).max()) <= bound, parameter_name


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", FAST)
def test_a_seeds_weights_are_bit_identical_alone_and_beside_other_seeds(name, shape):
    """A seed trained beside a twin (as ``fit`` trains a lone seed) and beside three others, five steps on its own
    batches: the same bits (one thread, as every job runs)."""
    torch.set_num_threads(1)
    config = head_config(name, shape)

    def train(seeds: list[int]) -> dict:
        step = fast_heads([init_head(config, seed) for seed in seeds], "float32")
        for length in (9, 4, 7, 9, 5):
            tokens, targets, positions = batch(seeds, length, config)
            step.step(tokens, targets, 1e-2, positions)
        return {name_: value[seeds.index(3)].clone() for name_, value in step.p.items()}

    alone, beside = train([3, 3]), train([5, 3, 0, 8])
    assert all(torch.equal(alone[key], beside[key]) for key in alone)


@pytest.mark.parametrize("name", FAST)
def test_train_heads_trains_through_the_fast_step_to_the_autograd_paths_curve(name):
    """``train_heads`` takes the fast step: its curve is the autograd path's (``fit`` without one) to float32
    rounding, and its weights are not that path's bits."""
    torch.set_num_threads(1)
    config, task = head_config(name), TaskConfig(vocab_size=6, offset=2, train_length_min=4, train_length_max=9)
    train = TrainConfig(steps=8, batch_size=16, lr=1e-3, log_every=4)
    fast, = train_heads(config, task, train, [1], "cpu")
    autograd, = fit([init_head(config, 1)], [1], task, train, "cpu", retrieval_targets, "test")
    assert torch.allclose(torch.tensor(fast.curve["loss"].values), torch.tensor(autograd.curve["loss"].values),
                          rtol=1e-5, atol=0)
    assert (fast.curve["accuracy"] == autograd.curve["accuracy"]).all()
    assert not all(torch.equal(a, b) for a, b in zip(fast.model.state_dict().values(),
                                                     autograd.model.state_dict().values()))


@pytest.mark.parametrize("options, step", [
    ({"pe": "rope"}, FastRopeHeads), ({"pe": "rope@base=1e6"}, FastRopeHeads),
    ({"pe": "rope", "attention": "linear"}, FastRopeHeads),
    ({"pe": "rope", "logit_scale": "yarn", "reference_length": 9}, FastRopeHeads),
    ({"pe": "learned"}, FastLearnedHeads), ({"pe": "randomized_rope@noise_max_length=64"}, FastRandomizedRopeHeads),
    ({"pe": "randomized_learned@noise_max_length=64"}, FastRandomizedLearnedHeads),
    ({"pe": "fire"}, FastFireHeads), ({"pe": "fire_fixed@threshold=64"}, FastFireHeads),
    ({"pe": "sinusoidal"}, FastSinusoidalHeads), ({"pe": "nope"}, FastBiasHeads), ({"pe": "alibi"}, FastAlibiHeads),
    ({"pe": "alibi_learned"}, FastAlibiHeads), ({"pe": "t5"}, FastT5Heads),
    # the autograd path: fractional position ids
    ({"pe": "rope", "position_scale": "interpolate", "reference_length": 9}, None),
    ({"pe": "t5", "position_scale": "interpolate", "reference_length": 9}, None),
])
def test_the_fast_step_takes_exactly_the_heads_it_computes(options, step):
    models = [init_head(HeadConfig(vocab_size=6, d_model=8, trained_positions=9, **options), seed) for seed in (0, 1)]
    chosen = fast_heads(models, "float32")
    assert (None if chosen is None else type(chosen)) is step
    assert fast_heads(models, "bf16") is None  # autocast is the autograd path's


@pytest.mark.parametrize("values", [3, 1000, None])
def test_the_fast_steps_accuracy_counts_as_argmax_does_ties_included(values):
    """Output logits (S, V, B) drawn from ``values`` integers (3: ties in most columns, the target among them or not;
    1000: few; None: apart by 1e-9, distinct logits whose probabilities tie in float32): each seed's accuracy is
    ``seed_accuracies``' on the logits laid out (S, B, V)."""
    rng = generator("fast_accuracy", values)
    output = torch.randint(values or 1000, (4, 6, 64), generator=rng).float() * (1e-9 if values is None else 1)
    targets = torch.randint(6, (4, 1, 64), generator=rng)
    expected = seed_accuracies(output.transpose(1, 2), targets[:, 0])
    assert torch.equal(cross_entropy(output, targets)[1], expected)


def test_a_confidently_wrong_heads_loss_is_finite_and_cross_entropys():
    """Logits 200 apart: the target's probability underflows to 0 in float32, its log-probability does not (a linear
    attention head at a high learning rate gets there; a loss of inf would stop its run as diverged)."""
    output = torch.zeros(2, 6, 8)
    output[:, 0] = 200.0
    targets = torch.full((2, 1, 8), 3)
    loss, _, d_output = cross_entropy(output, targets)
    expected = torch.nn.functional.cross_entropy(output.transpose(1, 2).reshape(-1, 6), targets.reshape(-1))
    assert torch.isfinite(loss).all() and torch.allclose(loss, expected.expand(2), rtol=1e-6)
    assert torch.isfinite(d_output).all()


@pytest.mark.parametrize("size", [300, 2 ** 16, 2 ** 16 + 1])
def test_keys_group_in_a_stable_order_by_either_sort(size):
    """Radix-sorted (keys below 2^16) or by torch: each key's entries in their order, key by key."""
    keys = torch.randint(size, (5000,), generator=generator("grouping", size), dtype=torch.int32)
    keys[:50] = size - 1  # the largest key, many times
    assert torch.equal(grouping_order(keys, size), torch.argsort(keys, stable=True))


def test_sampled_dots_take_each_entrys_dot_product_of_its_own_two_rows():
    """Every entry is the dot product of its run's row of the left table with its row of the right one (runs of any
    size, empty ones and repeated right rows included), and its bits do not depend on the other runs."""
    rng = generator("sampled_dots", 0)
    left, right = torch.randn(40, 64, generator=rng), torch.randn(70, 64, generator=rng)
    run_sizes = torch.randint(0, 9, (40,), generator=rng)
    run_sizes[3] = 0
    ends = torch.cat([torch.zeros(1, dtype=torch.int64), run_sizes.cumsum(0)]).to(torch.int32)
    right_rows = torch.randint(70, (int(ends[-1]),), generator=rng, dtype=torch.int32)
    right_rows[ends[5]:ends[6]] = 11
    left_rows = torch.repeat_interleave(torch.arange(40), run_sizes)
    dots = sampled_dots(left, ends, right_rows, right)
    expected = (left[left_rows].double() * right[right_rows.long()].double()).sum(1)
    torch.testing.assert_close(dots.double(), expected, rtol=1e-5, atol=1e-5)
    later = slice(int(ends[20]), None)  # the last 20 runs alone
    assert torch.equal(sampled_dots(left[20:], ends[20:] - ends[20], right_rows[later], right), dots[later])
