"""The stacked heads compute what the mapped head computes, bit for bit: logits, losses and gradients
of every seed (``lengthgen/models/head_stacked.py``), with per-sequence position ids where the encoding draws
them, on one CPU thread as every job runs."""
import copy
from functools import partial

import pytest
import torch
from torch.func import stack_module_state

from lengthgen.models.head import HeadConfig
from lengthgen.models.head_stacked import StackedHeads, stackable
from lengthgen.task import retrieval_targets, sample_sequences
from lengthgen.runtime.seeding import generator
from lengthgen.training.loop import _seed_step, init_head

CONFIGS = {
    "rope": {}, "learned": {}, "sinusoidal": {}, "nope": {}, "alibi": {}, "alibi_learned": {}, "t5": {},
    "fire": {}, "fire_fixed": {}, "rope@base=100": {},
    "linear": {"pe": "rope", "attention": "linear"},
    "log_length": {"pe": "rope", "logit_scale": "log_length", "reference_length": 9},
    # a named normal init (model.init): zero biases, every weight (the encoding's too) N(0, 0.1^2)
    "rope normal@std=0.1": {"pe": "rope", "init": "normal@std=0.1"},
    "learned normal@std=0.1": {"pe": "learned", "init": "normal@std=0.1"},
    "fire normal@std=0.1": {"pe": "fire", "init": "normal@std=0.1"},
    # Position ids drawn per sequence and per seed (AttentionHead._attend_per_sequence).
    "randomized_rope@noise_max_length=64": {}, "randomized_learned@noise_max_length=64": {},
    "randomized_linear": {"pe": "randomized_rope@noise_max_length=64", "attention": "linear"},
}


def head_config(name: str) -> HeadConfig:
    options = {"pe": name, **CONFIGS[name]}
    return HeadConfig(vocab_size=6, d_model=8, trained_positions=9, **options)


def mapped(models, tokens, targets, positions):
    """(loss, logits, gradients) the way training.fit computed them before the stacked heads."""
    template = copy.deepcopy(models[0]).to("meta")
    parameters, buffers = stack_module_state(models)
    parameters = {name: value.detach().requires_grad_() for name, value in parameters.items()}
    loss, logits = torch.func.vmap(partial(_seed_step, template), in_dims=(0, 0, 0, 0, None if positions is None else 0))(
        parameters, buffers, tokens, targets, positions)
    return loss, logits, torch.autograd.grad(loss.sum(), list(parameters.values()))


@pytest.mark.parametrize("seeds", [2, 5])
@pytest.mark.parametrize("name", CONFIGS)
def test_stacked_heads_give_the_mapped_heads_numbers_bit_for_bit(name, seeds):
    torch.set_num_threads(1)
    models = [init_head(head_config(name), seed) for seed in range(seeds)]
    assert stackable(models[0])
    for length in (4, 9):
        tokens = torch.stack([sample_sequences(generator("t", seed, length), 7, length, 6) for seed in range(seeds)])
        targets = torch.stack([retrieval_targets(seed_tokens, 2) for seed_tokens in tokens])
        drawn = [models[0].encoding.sample_positions(7, length, generator("p", seed, length)) for seed in range(seeds)]
        positions = None if drawn[0] is None else torch.stack(drawn)  # (S, B, T)
        loss, logits, gradients = mapped(models, tokens, targets, positions)
        stacked = StackedHeads(models)
        stacked_loss, stacked_logits = stacked.forward(tokens, targets, positions)
        stacked_loss.sum().backward()
        assert torch.equal(stacked_logits, logits)
        assert torch.equal(stacked_loss, loss)
        for (parameter, value), gradient in zip(stacked.parameters.items(), gradients):
            assert torch.equal(value.grad, gradient), parameter


def test_seed_views_share_the_stacked_values_and_gradients():
    models = [init_head(head_config("learned"), seed) for seed in range(3)]
    stacked = StackedHeads(models)
    views = stacked.seed_parameters()
    assert len(views) == 3 * len(stacked.parameters)
    views[0].add_(1.0)
    views[0].grad.add_(2.0)
    first = next(iter(stacked.parameters.values()))
    assert torch.equal(first.detach()[0], views[0]) and torch.equal(first.grad[0], views[0].grad)
    stacked.write_back()
    assert torch.equal(next(models[0].parameters()), views[0])
