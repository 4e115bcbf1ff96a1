"""Training a model on the retrieval task, with a per-step training curve.

One loop (``fit``) serves every model: the single head (``train_head``, here) and the transformer
(``transformer.train_transformer``) differ in the model they build and the targets they learn.
"""

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import torch
from torch import nn

from lengthgen.checkpoint import save_model
from lengthgen.model import AttentionHead, HeadConfig
from lengthgen.runtime import resolve_device
from lengthgen.schemas.core import TRAINING_CURVE
from lengthgen.seeding import derive_seed, generator
from lengthgen.tables import write_table
from lengthgen.task import IGNORE_INDEX, TaskConfig, retrieval_targets, sample_training_batch

log = logging.getLogger(__name__)

# A run has diverged when a loss is NaN or infinite, or when its mean loss over one progress window
# (train.log_every steps) is above this many times ln V, the loss of a uniform guess: such a head is
# confidently wrong, not slowly learning. Measured at the default config (30 heads at lr 1e-2, 4 linear
# controls at lr 1e-3): the largest window mean was 0.92 x ln V and the largest single step 3.7 x ln V;
# tiny heads at lr 1 reach about 80 x ln V, at lr 1e12 NaN at step 2. It judges no claim, so it lives
# here rather than in lengthgen/rules.py, whose claim rules the models must not depend on: editing a
# rule reruns the analyses, not the training.
DIVERGED_LOSS_FACTOR = 10.0


@dataclass(frozen=True)
class TrainConfig:
    steps: int
    batch_size: int
    lr: float
    log_every: int = 100
    precision: str = "float32"  # or "bf16": bfloat16 autocast of the forward pass (on a GPU)


PRECISIONS = {"float32": None, "bf16": torch.bfloat16}  # the autocast dtype of each precision


def seeded_init(model_class: Callable[[Any], nn.Module], config, seed: int) -> nn.Module:
    """``model_class(config)`` freshly initialized; the init depends on ``seed`` only, not on global state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed("init", seed))
        return model_class(config)


def init_head(config: HeadConfig, seed: int) -> AttentionHead:
    return seeded_init(AttentionHead, config, seed)


class TrainingDiverged(RuntimeError):
    """The training loss became NaN or infinite, or far worse than a uniform guess: the run's
    weights mean nothing, so the run fails instead of writing them."""


def train_head(
    head_config: HeadConfig, task: TaskConfig, train: TrainConfig, seed: int, device: str = "auto"
) -> tuple[AttentionHead, pd.DataFrame]:
    """The single head, trained on the last position's target (see ``fit``)."""
    options = "".join(f" {key}={value}" for key, value in (("attention", head_config.attention),
                      ("logit_scale", head_config.logit_scale)) if value not in ("softmax", "none"))
    run = f"pe={head_config.pe}{options} seed={seed} offset={task.offset}"
    return fit(init_head(head_config, seed), task, train, seed, device, retrieval_targets, run)


def fit(model: nn.Module, task: TaskConfig, train: TrainConfig, seed: int, device: str,
        targets: Callable[[torch.Tensor, int], torch.Tensor], run: str) -> tuple[nn.Module, pd.DataFrame]:
    """Train with Adam on fresh batches; return the model and its curve (step, length, loss, accuracy).

    ``model(tokens, targets)`` returns (logits, loss); ``targets(tokens, offset)`` gives the targets
    of a batch, ``IGNORE_INDEX`` where a position has none (accuracy counts the others).
    Batches are drawn on the CPU from a generator seeded by (seed, offset), so the data
    is the same whatever the device and whatever the encoding: runs are paired. Position ids
    of randomized encodings come from a generator of their own, so the batches stay the same.
    Losses stay on the device until a progress line is due, so a GPU is not stopped every step;
    there a run that diverged (``check_not_diverged``) raises ``TrainingDiverged`` naming the run
    and the step.
    """
    device = resolve_device(device)
    model = model.to(device)
    # The fused step updates every parameter in one kernel: a third of the per-step cost otherwise.
    optimizer = torch.optim.Adam(model.parameters(), lr=train.lr, fused=True)
    autocast_dtype = PRECISIONS[train.precision]
    data_rng = generator("train", seed, task.offset)
    position_rng = generator("train_positions", seed, task.offset)
    losses, accuracies = torch.empty(train.steps, device=device), torch.empty(train.steps, device=device)
    lengths = []
    checked = 0  # steps whose losses were checked
    for step in range(train.steps):
        tokens, batch_targets = sample_training_batch(data_rng, task, train.batch_size, targets)
        positions = model.encoding.sample_positions(*tokens.shape, position_rng)  # (B, T) or None
        tokens, batch_targets = tokens.to(device), batch_targets.to(device)
        per_sequence = {} if positions is None else {"positions": positions.to(device)}
        with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
            logits, loss = model(tokens, batch_targets, **per_sequence)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses[step] = loss.detach()
        accuracies[step] = accuracy(logits.detach(), batch_targets)
        lengths.append(tokens.shape[1])
        if (step + 1) % train.log_every == 0 or step + 1 == train.steps:
            check_not_diverged(losses[checked:step + 1], checked + 1, run, math.log(task.vocab_size))
            checked = step + 1
            log.info("step %d/%d  length %d  loss %.4f  accuracy %.3f", step + 1, train.steps, lengths[-1],
                     losses[step].item(), accuracies[step].item())
    curve = pd.DataFrame({"step": range(1, train.steps + 1), "length": lengths,
                          "loss": losses.cpu().double().numpy(), "accuracy": accuracies.cpu().double().numpy()})
    return model.eval(), curve


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Fraction of the positions with a target whose argmax is right. (..., V), (...) -> ()."""
    has_target = targets != IGNORE_INDEX
    return ((logits.argmax(-1) == targets) & has_target).sum() / has_target.sum()


def train_and_save(train_model: Callable, model_config, run: dict, task: dict, train: dict, device: str,
                   output) -> None:
    """A training job: ``train_model(model_config, ...)`` (``train_head``, ``transformer.train_transformer``)
    for ``run`` {pe, seed, offset}; its weights to ``output.model``, its curve to ``output.curve``."""
    log.info("training %s", run)
    model, curve = train_model(model_config, TaskConfig(offset=run["offset"], **task), TrainConfig(**train),
                               run["seed"], device)
    save_model(model, output.model)
    write_table(curve.assign(**run), output.curve, TRAINING_CURVE)


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
