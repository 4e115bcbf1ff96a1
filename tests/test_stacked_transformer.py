"""The stacked transformers compute what the mapped transformer computes, bit for bit: logits, losses and
gradients of every seed (``lengthgen/models/transformer_stacked.py``), on one CPU thread as every job runs."""
import copy
from functools import partial

import pytest
import torch
from torch.func import stack_module_state

from lengthgen.runtime.seeding import generator
from lengthgen.models.transformer_stacked import StackedTransformers, stackable_transformer
from lengthgen.task import full_sequence_targets, sample_sequences
from lengthgen.training.loop import _seed_step, seeded_init
from lengthgen.models.transformer import Transformer, TransformerConfig

STACKED = ["rope", "rope@base=100", "learned", "sinusoidal", "nope", "alibi", "alibi@slope=0.5"]
MAPPED = ["t5", "fire", "fire_fixed", "alibi_learned", "randomized_rope@noise_max_length=64",
          "randomized_learned@noise_max_length=64"]


def transformers(pe: str, seeds: int, weight_std: float | None = None) -> list[Transformer]:
    """Seeded transformers (2 layers, 2 heads); ``weight_std`` redraws every parameter, so that the
    attention is far from uniform and the gradients large (at nanoGPT's init the logits are about 0.02)."""
    config = TransformerConfig(vocab_size=6, pe=pe, n_layers=2, n_heads=2, d_model=16, trained_positions=9)
    models = [seeded_init(Transformer, config, seed) for seed in range(seeds)]
    if weight_std is not None:
        with torch.no_grad():
            for seed, model in enumerate(models):
                rng = torch.Generator().manual_seed(seed)
                for parameter in model.parameters():
                    parameter.copy_(torch.randn(parameter.shape, generator=rng) * weight_std)
    return models


def mapped(models, tokens, targets):
    """(loss, logits, gradients) the way training.fit computes them on the mapped path."""
    template = copy.deepcopy(models[0]).to("meta")
    parameters, buffers = stack_module_state(models)
    parameters = {name: value.detach().requires_grad_() for name, value in parameters.items()}
    loss, logits = torch.func.vmap(partial(_seed_step, template), in_dims=(0, 0, 0, 0, None))(
        parameters, buffers, tokens, targets, None)
    return loss, logits, torch.autograd.grad(loss.sum(), list(parameters.values()))


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # the mapped path's loop over the seeds
@pytest.mark.parametrize("weight_std", [None, 0.5])
@pytest.mark.parametrize("seeds", [2, 3])
@pytest.mark.parametrize("pe", STACKED)
def test_stacked_transformers_give_the_mapped_transformers_numbers_bit_for_bit(pe, seeds, weight_std):
    torch.set_num_threads(1)
    models = transformers(pe, seeds, weight_std)
    assert stackable_transformer(models[0])
    for length in (4, 9):
        tokens = torch.stack([sample_sequences(generator("t", seed, length), 5, length, 6) for seed in range(seeds)])
        targets = torch.stack([full_sequence_targets(seed_tokens, 2) for seed_tokens in tokens])
        loss, logits, gradients = mapped(models, tokens, targets)
        stacked = StackedTransformers(models)
        stacked_loss, stacked_logits = stacked.forward(tokens, targets)
        stacked_loss.sum().backward()
        assert torch.equal(stacked_logits, logits)
        assert torch.equal(stacked_loss, loss)
        for (parameter, value), gradient in zip(stacked.parameters.items(), gradients):
            assert torch.equal(value.grad, gradient), parameter


@pytest.mark.parametrize("pe", MAPPED)
def test_learned_biases_and_drawn_positions_keep_the_mapped_path(pe):
    assert not stackable_transformer(transformers(pe, 1)[0])
