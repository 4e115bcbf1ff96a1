"""Training models on the retrieval task, every seed of a run side by side, with a per-step
training curve and a record of whether each model fits its training range.

One loop (``fit``) serves every model: the single head (``train_heads``) and the transformer
(``train_transformers``) differ in the model they build and the targets they learn.
"""

import copy
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, NamedTuple

import pandas as pd
import torch
from torch import nn
from torch.func import functional_call, stack_module_state

from lengthgen.training.adam import FusedAdam
from lengthgen.training.fast_heads import FastHeads
from lengthgen.training.fast_select import fast_heads
from lengthgen.training.position_draws import draw_positions
from lengthgen.models.checkpoint import save_model
from lengthgen.models.defaults import TRAIN_DEFAULTS
from lengthgen.models.head import AttentionHead, HeadConfig
from lengthgen.runtime.device import resolve_device
from lengthgen.models.head_stacked import StackedHeads, stackable
from lengthgen.models.transformer import Transformer, TransformerConfig
from lengthgen.models.transformer_stacked import stack_transformers
from lengthgen.tables.core import RANGE_FIT, TRAINING_CURVE
from lengthgen.runtime.seeding import derive_seed, generator
from lengthgen.tables.io import write_table
from lengthgen.training.range_fit import fit_record
from lengthgen.task import (IGNORE_INDEX, TaskConfig, full_sequence_targets, retrieval_targets, sample_seed_batches,
                            sample_sequences, training_length)

log = logging.getLogger(__name__)

# A run has diverged when a loss is NaN or infinite, or when its mean loss over one progress window
# (train.log_every steps) is above this many times ln V, the loss of a uniform guess: such a head is
# confidently wrong, not slowly learning. Measured at the default config (30 heads at lr 1e-2, 4 linear
# controls at lr 1e-3): the largest window mean was 0.92 x ln V and the largest single step 3.7 x ln V;
# tiny heads at lr 1 reach about 80 x ln V, at lr 1e12 NaN at step 2. It judges no claim, so it lives
# here rather than in lengthgen/checks/shared_rules.py, whose claim rules the models must not depend on: editing a
# rule reruns the analyses, not the training.
DIVERGED_LOSS_FACTOR = 10.0


@dataclass(frozen=True)
class TrainConfig:
    steps: int
    batch_size: int
    lr: float  # the peak learning rate of the schedule
    log_every: int = TRAIN_DEFAULTS["log_every"]
    precision: str = "float32"  # or "bf16": bfloat16 autocast of the forward pass (on a GPU)
    # The schedule (``learning_rate_factor``): a linear warmup over this share of the steps, then a
    # cosine decay to almost zero, so that the saved weights are those of a settled model and not
    # of a step taken at full rate (a mid-spike head).
    warmup_fraction: float = TRAIN_DEFAULTS["warmup_fraction"]


PRECISIONS = {"float32": None, "bf16": torch.bfloat16}  # the autocast dtype of each precision


def seeded_init(model_class: Callable[[Any], nn.Module], config, seed: int) -> nn.Module:
    """``model_class(config)`` freshly initialized, with ``config.init_seed`` set to ``seed``; the init
    depends on ``seed`` only, not on global state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed("init", seed))
        return model_class(replace(config, init_seed=seed))


def init_head(config: HeadConfig, seed: int) -> AttentionHead:
    return seeded_init(AttentionHead, config, seed)


class TrainingDiverged(RuntimeError):
    """The training loss became NaN or infinite, or far worse than a uniform guess: the run's
    weights mean nothing, so the run fails instead of writing them."""


class TrainedModel(NamedTuple):
    """One seed's trained model, its per-step curve, and its fit of the training range (``range_fit``)."""

    seed: int
    model: nn.Module
    curve: pd.DataFrame
    fit: dict


def train_heads(head_config: HeadConfig, task: TaskConfig, train: TrainConfig, seeds: list[int],
                device: str = "auto") -> list[TrainedModel]:
    """The single head, one per seed, trained side by side on the last position's target (see ``fit``)."""
    options = "".join(f" {key}={value}" for key, value in (("attention", head_config.attention),
                      ("logit_scale", head_config.logit_scale), ("init", head_config.init))
                      if value not in ("softmax", "none", "torch_default"))
    run = f"pe={head_config.pe}{options} seed={{seed}} offset={task.offset}"
    return fit([init_head(head_config, seed) for seed in seeds], seeds, task, train, device, retrieval_targets, run,
               fast=fast_heads)


def train_head(head_config: HeadConfig, task: TaskConfig, train: TrainConfig, seed: int,
               device: str = "auto") -> tuple[AttentionHead, pd.DataFrame]:
    """One seed's head and curve: the same numbers as when it trains beside other seeds."""
    trained, = train_heads(head_config, task, train, [seed], device)
    return trained.model, trained.curve


def train_transformers(config: TransformerConfig, task: TaskConfig, train: TrainConfig, seeds: list[int],
                       device: str = "auto") -> list[TrainedModel]:
    """One transformer per seed, trained side by side on the full-sequence task, every position
    t >= K, by the loop that trains the single head (``fit``), stacked where
    ``transformer_stacked`` computes the encoding."""
    run = f"transformer pe={config.pe} seed={{seed}} offset={task.offset}"
    models = [seeded_init(Transformer, config, seed) for seed in seeds]
    return fit(models, seeds, task, train, device, full_sequence_targets, run, stack_transformers)


def train_transformer(config: TransformerConfig, task: TaskConfig, train: TrainConfig, seed: int,
                      device: str = "auto") -> tuple[Transformer, pd.DataFrame]:
    """One seed's transformer and curve: the same numbers as when it trains beside other seeds."""
    trained, = train_transformers(config, task, train, [seed], device)
    return trained.model, trained.curve


def stack_heads(models: list[nn.Module]) -> StackedHeads | None:
    """The single heads ``models`` stacked, or None where ``StackedHeads`` does not compute them (the mapped path)."""
    return StackedHeads(models) if all(stackable(model) for model in models) else None


def fit(models: list[nn.Module], seeds: list[int], task: TaskConfig, train: TrainConfig, device: str,
        targets: Callable[[torch.Tensor, int], torch.Tensor], run: str,
        stack: Callable[[list[nn.Module]], StackedHeads | None] = stack_heads,
        fast: Callable[[list[nn.Module], str], FastHeads | None] | None = None) -> list[TrainedModel]:
    """Train one model per seed (each ``models[i]`` initialized from ``seeds[i]``) with Adam on fresh
    batches, side by side: their parameters are stacked along a leading seed dimension and one pass
    runs every seed's batch (single heads as ``StackedHeads``, other models through ``torch.func.vmap``
    of the model's forward). That saves the
    per-process and per-op overhead of training seeds one by one, not the arithmetic (docs/performance.md).

    A seed's numbers do not depend on which seeds train beside it: each seed has its own init,
    its own batches (from a generator seeded by (seed, offset)) and its own position draws, every
    op acts on each seed's slice alone, and the total loss is the plain sum of the seeds' losses,
    whose gradient is each seed's own. What the seeds share is the length of each step's batch,
    drawn from a generator seeded by the offset alone (one shape per step is what stacking
    needs); the tokens differ. On one CPU thread a seed's weights are bit-identical alone and
    beside others (``tests/test_training.py``); several threads may split a kernel's work by
    the number of seeds, and then the last bits can differ.

    ``model(tokens, targets)`` returns (logits, loss); ``targets(tokens, offset)`` gives the targets
    of a batch, ``IGNORE_INDEX`` where a position has none (accuracy counts the others). Batches are
    drawn on the CPU, so the data is the same whatever the device and whatever the encoding: runs
    are paired. Losses stay on the device until a progress line is due; there a seed that diverged
    (``check_not_diverged``) raises ``TrainingDiverged`` naming the run (``run`` with the seed put in
    for ``{seed}``) and the step.

    ``stack(models)`` gives the models' stacked parameters and forward pass (``stack_heads``;
    ``stacked_transformer.stack_transformers``), or None for the mapped path. ``fast(models, precision)``
    gives a step written for the models' shape (``fast_select.fast_heads``: forward, backward and Adam by
    hand, the same function at float32 rounding), or None where none applies; it takes precedence over
    ``stack``. None: no fast step.
    """
    device = resolve_device(device)
    if len(models) == 1:
        # A stack of one takes other kernels in places (a batched matrix product of one matrix is
        # computed as a plain one), so a lone seed trains beside a twin, whose results are dropped.
        return fit(models + [copy.deepcopy(models[0])], seeds * 2, task, train, device, targets, run, stack, fast)[:1]
    models = [model.to(device) for model in models]
    template = copy.deepcopy(models[0]).to("meta")
    _, buffers = stack_module_state(models)
    names = [name for name, _ in template.named_parameters()]
    # Each seed keeps its own parameter tensors, stacked afresh for every forward pass (the stack's
    # backward hands each seed its own gradient): an optimizer over stacked tensors would give a
    # seed's entries other places in its vectorized loops than alone, and other last bits.
    # The fused step updates every parameter in one kernel: a third of the per-step cost otherwise.
    # Single heads (with or without per-sequence positions) and transformers without them run stacked
    # (lengthgen/models/head_stacked.py, stacked_transformer.py: the same bits as the mapped path, without vmap or
    # restacking); the optimizer gets each seed's parameters as views, as before. Where a fast step applies
    # (every single head of the default run, on the CPU: lengthgen/training/fast_select.py), it takes the whole step,
    # forward, backward and Adam, on one flat buffer padded so that a seed's entries keep their places in the
    # vectorized loops alone and beside others.
    fast_step = fast(models, train.precision) if fast else None
    stacked = None if fast_step else stack(models)
    optimizer = None if fast_step else FusedAdam(stacked.seed_parameters() if stacked else
                                                 [parameter for model in models for parameter in model.parameters()])
    # Positions are stacked per seed where an encoding draws them, and absent (None) otherwise.
    seed_step = {drawn: torch.func.vmap(partial(_seed_step, template), in_dims=(0, 0, 0, 0, 0 if drawn else None))
                 for drawn in (False, True)}
    autocast_dtype = PRECISIONS[train.precision]
    length_rng = generator("train_lengths", task.offset)
    data_rngs = [generator("train", seed, task.offset) for seed in seeds]
    position_rngs = [generator("train_positions", seed, task.offset) for seed in seeds]
    n_seeds = len(seeds)
    losses = torch.empty(train.steps, n_seeds, device=device)
    accuracies = torch.empty(train.steps, n_seeds, device=device)
    lengths, rates = [], []
    checked = 0  # steps whose losses were checked
    for step in range(train.steps):
        length = training_length(length_rng, task.train_length_min, task.train_length_max)
        tokens = sample_seed_batches(data_rngs, train.batch_size, length, task.vocab_size)
        if not fast_step:
            tokens = tokens.contiguous()  # laid out for the fast steps; the models read them sequence by sequence
        batch_targets = targets(tokens, task.offset)
        positions = draw_positions(template.encoding, train.batch_size, length, position_rngs)  # (S, B, T) or None
        positions = None if positions is None else positions.to(device)
        tokens, batch_targets = tokens.to(device), batch_targets.to(device)
        rates.append(train.lr * learning_rate_factor(train, step))  # as LambdaLR computes it
        if fast_step:
            loss, accuracy = fast_step.step(tokens, batch_targets, rates[-1], positions)
        else:
            with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
                if stacked:
                    loss, logits = stacked.forward(tokens, batch_targets, positions)
                else:
                    parameters = {name: torch.stack(per_seed)
                                  for name, per_seed in zip(names, zip(*(model.parameters() for model in models)))}
                    loss, logits = seed_step[positions is not None](parameters, buffers, tokens, batch_targets,
                                                                    positions)
            if stacked:
                stacked.zero_grad()  # in place: the optimizer's views of the gradients stay valid
            else:
                for parameter in optimizer.parameters:
                    parameter.grad = None
            loss.sum().backward()
            optimizer.step(rates[-1])
            accuracy = seed_accuracies(logits.detach(), batch_targets)
        losses[step] = loss.detach()
        accuracies[step] = accuracy
        lengths.append(length)
        if (step + 1) % train.log_every == 0 or step + 1 == train.steps:
            for index, seed in enumerate(seeds):
                check_not_diverged(losses[checked:step + 1, index], checked + 1, run.format(seed=seed),
                                   math.log(task.vocab_size))
            checked = step + 1
            log.info("step %d/%d  length %d  lr %.2e  loss %s  accuracy %s", step + 1, train.steps, length, rates[-1],
                     " ".join(f"{value:.4f}" for value in losses[step].tolist()),
                     " ".join(f"{value:.3f}" for value in accuracies[step].tolist()))
    for trained_stack in (fast_step, stacked):
        if trained_stack:
            trained_stack.write_back()
    trained = []
    for index, (seed, model) in enumerate(zip(seeds, models)):
        curve = pd.DataFrame({"step": range(1, train.steps + 1), "length": lengths, "lr": rates,
                              "loss": losses[:, index].cpu().double().numpy(),
                              "accuracy": accuracies[:, index].cpu().double().numpy()})
        model.eval()
        trained.append(TrainedModel(seed, model, curve, range_fit(model, task, targets, seed, curve, train.log_every)))
    return trained


# Where the schedule starts and ends, as fractions of the peak rate: torch's OneCycleLR defaults
# (div_factor 25, final_div_factor 1e4), whose shape this is.
INITIAL_LR_FACTOR, FINAL_LR_FACTOR = 1 / 25, 1 / 25 / 1e4


def learning_rate_factor(train: TrainConfig, step: int) -> float:
    """The learning rate at ``step`` (from 0) as a fraction of ``train.lr``: linear from
    ``INITIAL_LR_FACTOR`` to 1 over the warmup steps, then a half cosine down to ``FINAL_LR_FACTOR``
    at the last step. (OneCycleLR computes the same shape but fails when the warmup is one step.)"""
    warmup = round(train.warmup_fraction * train.steps)
    if step < warmup:
        return INITIAL_LR_FACTOR + (1 - INITIAL_LR_FACTOR) * step / warmup
    progress = (step - warmup) / max(1, train.steps - 1 - warmup)
    return FINAL_LR_FACTOR + (1 - FINAL_LR_FACTOR) * (1 + math.cos(math.pi * min(progress, 1.0))) / 2


def _seed_step(template: nn.Module, parameters: dict, buffers: dict, tokens: torch.Tensor, targets: torch.Tensor,
               positions: torch.Tensor | None):
    """One seed's (loss, logits) from its slice of the stacked parameters: what ``fit`` maps over seeds."""
    per_sequence = {} if positions is None else {"positions": positions}
    logits, loss = functional_call(template, (parameters, buffers), (tokens, targets), per_sequence)
    return loss, logits


def seed_accuracies(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per seed, the fraction of its positions with a target whose argmax is right. (S, ..., V), (S, ...) -> (S,)."""
    has_target = targets != IGNORE_INDEX
    right = (logits.argmax(-1) == targets) & has_target
    return right.flatten(1).sum(1) / has_target.flatten(1).sum(1)


# Held-out sequences per training length (from generators of their own: never a training batch).
HELDOUT_PER_LENGTH = 64


@torch.no_grad()
def range_fit(model: nn.Module, task: TaskConfig, targets: Callable, seed: int, curve: pd.DataFrame,
              window: int) -> dict:
    """How well ``model`` fits its training range: held-out accuracy over every training length
    (``HELDOUT_PER_LENGTH`` sequences each, all positions with a target), the mean loss of the last
    ``window`` steps, and whether each meets its rule (``training_record.fit_record``)."""
    device = next(model.parameters()).device
    correct = total = 0
    for length in range(task.train_length_min, task.train_length_max + 1):
        rng = generator("heldout", seed, task.offset, length)
        tokens = sample_sequences(rng, HELDOUT_PER_LENGTH, length, task.vocab_size)
        positions = model.encoding.sample_positions(HELDOUT_PER_LENGTH, length, generator("heldout_positions", seed,
                                                                                           task.offset, length))
        per_sequence = {} if positions is None else {"positions": positions.to(device)}
        logits, _ = model(tokens.to(device), **per_sequence)
        answers = targets(tokens, task.offset).to(device)
        has_target = answers != IGNORE_INDEX
        correct += int(((logits.argmax(-1) == answers) & has_target).sum())
        total += int(has_target.sum())
    return fit_record(correct / total, float(curve["loss"].tail(window).mean()))


def train_and_save(train_models: Callable, model_config, runs: list[dict], task: dict, train: dict, device: str,
                   output) -> None:
    """A training job: ``train_models(model_config, task, train, seeds, device)`` (``train_heads``,
    ``train_transformers``) for ``runs`` {pe, seed, offset} of one (pe, offset), side
    by side; each seed's weights, curve and range fit to its own files (``output.model``,
    ``output.curve``, ``output.fit``, in the order of ``runs``)."""
    offset, = {run["offset"] for run in runs}
    log.info("training %s", runs)
    trained = train_models(model_config, TaskConfig(offset=offset, **task), TrainConfig(**train),
                           [run["seed"] for run in runs], device)
    for run, result, model_path, curve_path, fit_path in zip(runs, trained, output.model, output.curve, output.fit):
        save_model(result.model, model_path)
        write_table(result.curve.assign(**run), curve_path, TRAINING_CURVE)
        write_table(pd.DataFrame([{**run, **result.fit}]), fit_path, RANGE_FIT)
        log.info("%s: %s", run, result.fit)


def check_not_diverged(losses: torch.Tensor, first_step: int, run: str, uniform_loss: float) -> None:
    """Raise ``TrainingDiverged`` when the losses of steps ``first_step``, ... (one progress window)
    show a run that blew up: a loss that is NaN or infinite (naming the first such step), or a mean
    loss above ``DIVERGED_LOSS_FACTOR`` times ``uniform_loss``, the loss of a uniform guess, ln V."""
    bad = (~torch.isfinite(losses)).nonzero()
    if len(bad):
        step = first_step + int(bad[0])
        raise TrainingDiverged(f"training run {run} diverged: loss {losses[step - first_step].item()} at step "
                               f"{step}; lower train.lr (or linear.lr) and rerun")
    mean = losses.mean().item()
    if mean > DIVERGED_LOSS_FACTOR * uniform_loss:
        raise TrainingDiverged(
            f"training run {run} diverged: mean loss {mean:.3g} over steps {first_step}-{first_step + len(losses) - 1} "
            f"is above {DIVERGED_LOSS_FACTOR:g} x ln(V) = {DIVERGED_LOSS_FACTOR * uniform_loss:.3g}, the loss of a "
            "uniform guess; lower train.lr (or linear.lr) and rerun")
