"""lengthgen.training.adam.FusedAdam against torch.optim.Adam(fused=True) under the training schedule: the same bits."""

import subprocess
import sys
from functools import partial

import pytest
import torch

from lengthgen.training.adam import FusedAdam
from lengthgen.training.loop import TrainConfig, learning_rate_factor


def parameters(seed: int) -> list[torch.nn.Parameter]:
    generator = torch.Generator().manual_seed(seed)
    shapes = [(3, 16, 64), (3, 64), (3, 1000, 8), (5,)]  # the last one gets no gradient
    return [torch.nn.Parameter(torch.randn(shape, generator=generator)) for shape in shapes]


def gradients(params: list[torch.nn.Parameter], step: int) -> None:
    generator = torch.Generator().manual_seed(1000 + step)
    for parameter in params[:-1]:
        parameter.grad = torch.randn(parameter.shape, generator=generator) * (step + 1)
    params[-1].grad = None


def test_fused_adam_gives_torch_optims_fused_adam_bits_under_the_schedule():
    train = TrainConfig(steps=40, batch_size=8, lr=0.01)
    reference, ours = parameters(0), parameters(0)
    optimizer = torch.optim.Adam(reference, lr=train.lr, fused=True)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, partial(learning_rate_factor, train))
    adam = FusedAdam(ours)
    for step in range(train.steps):
        gradients(reference, step)
        gradients(ours, step)
        optimizer.step()
        assert schedule.get_last_lr()[0] == train.lr * learning_rate_factor(train, step)
        adam.step(train.lr * learning_rate_factor(train, step))
        schedule.step()
    for expected, got in zip(reference, ours):
        assert torch.equal(expected, got)
    assert not torch.equal(reference[0], parameters(0)[0])  # the steps moved the weights
    assert torch.equal(ours[-1], parameters(0)[-1])  # a parameter without a gradient is left alone


def test_a_training_step_imports_no_dynamo():
    script = """
import sys
import torch
from lengthgen.training.adam import FusedAdam
p = torch.nn.Parameter(torch.ones(3))
(p * 2).sum().backward()
FusedAdam([p]).step(0.1)
print('torch._dynamo' in sys.modules, p.tolist())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split(maxsplit=1)
    assert out[0] == "False"
    # Adam's first step moves each weight by lr against its gradient's sign
    assert eval(out[1]) == pytest.approx([0.9] * 3, rel=1e-6)
