"""Training one head on the retrieval task, with a per-step training curve."""

import logging
import math
from dataclasses import dataclass

import pandas as pd
import torch

from lengthgen.model import AttentionHead, HeadConfig
from lengthgen.rules import DIVERGED_LOSS_FACTOR
from lengthgen.runtime import resolve_device
from lengthgen.seeding import derive_seed, generator
from lengthgen.task import TaskConfig, sample_training_batch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainConfig:
    steps: int
    batch_size: int
    lr: float
    log_every: int = 100


def init_head(config: HeadConfig, seed: int) -> AttentionHead:
    """A freshly initialized head; the init depends on ``seed`` only, not on global state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed("init", seed))
        return AttentionHead(config)


class TrainingDiverged(RuntimeError):
    """The training loss became NaN or infinite, or far worse than a uniform guess: the run's
    weights mean nothing, so the run fails instead of writing them."""


def train_head(
    head_config: HeadConfig, task: TaskConfig, train: TrainConfig, seed: int, device: str = "auto"
) -> tuple[AttentionHead, pd.DataFrame]:
    """Train with Adam on fresh batches; return the model and its curve (step, length, loss, accuracy).

    Batches are drawn on the CPU from a generator seeded by (seed, offset), so the data
    is the same whatever the device and whatever the encoding: runs are paired. Losses stay
    on the device until a progress line is due, so a GPU is not stopped every step; there a run
    that diverged (``check_not_diverged``) raises ``TrainingDiverged`` naming the run and the step.
    """
    device = resolve_device(device)
    model = init_head(head_config, seed).to(device)
    # The fused step updates every parameter in one kernel: a third of the per-step cost otherwise.
    optimizer = torch.optim.Adam(model.parameters(), lr=train.lr, fused=True)
    data_rng = generator("train", seed, task.offset)
    losses, accuracies = torch.empty(train.steps, device=device), torch.empty(train.steps, device=device)
    lengths = []
    run = f"pe={head_config.pe}{' attention=linear' if head_config.attention == 'linear' else ''} seed={seed} " \
          f"offset={task.offset}"
    checked = 0  # steps whose losses were checked
    for step in range(train.steps):
        tokens, targets = sample_training_batch(data_rng, task, train.batch_size)
        tokens, targets = tokens.to(device), targets.to(device)
        logits, loss = model(tokens, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses[step] = loss.detach()
        accuracies[step] = (logits.detach().argmax(-1) == targets).float().mean()
        lengths.append(tokens.shape[1])
        if (step + 1) % train.log_every == 0 or step + 1 == train.steps:
            check_not_diverged(losses[checked:step + 1], checked + 1, run, math.log(task.vocab_size))
            checked = step + 1
            log.info("step %d/%d  length %d  loss %.4f  accuracy %.3f", step + 1, train.steps, lengths[-1],
                     losses[step].item(), accuracies[step].item())
    curve = pd.DataFrame({"step": range(1, train.steps + 1), "length": lengths,
                          "loss": losses.cpu().double().numpy(), "accuracy": accuracies.cpu().double().numpy()})
    return model.eval(), curve


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
