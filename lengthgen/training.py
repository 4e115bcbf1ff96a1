"""Training one head on the retrieval task, with a per-step training curve."""

import logging
from dataclasses import dataclass

import pandas as pd
import torch

from lengthgen.model import AttentionHead, HeadConfig
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
    """The training loss became NaN or infinite: the run's weights mean nothing."""


def train_head(
    head_config: HeadConfig, task: TaskConfig, train: TrainConfig, seed: int, device: str = "auto"
) -> tuple[AttentionHead, pd.DataFrame]:
    """Train with Adam on fresh batches; return the model and its curve (step, length, loss, accuracy).

    Batches are drawn on the CPU from a generator seeded by (seed, offset), so the data
    is the same whatever the device and whatever the encoding: runs are paired. Position ids
    of randomized encodings come from a generator of their own, so the batches stay the same.
    Losses stay on the device until a progress line is due, so a GPU is not stopped every
    step; a loss that is NaN or infinite there raises ``TrainingDiverged`` naming the run and
    the step.
    """
    device = resolve_device(device)
    model = init_head(head_config, seed).to(device)
    # The fused step updates every parameter in one kernel: a third of the per-step cost otherwise.
    optimizer = torch.optim.Adam(model.parameters(), lr=train.lr, fused=True)
    data_rng = generator("train", seed, task.offset)
    position_rng = generator("train_positions", seed, task.offset)
    losses, accuracies = torch.empty(train.steps, device=device), torch.empty(train.steps, device=device)
    lengths = []
    for step in range(train.steps):
        tokens, targets = sample_training_batch(data_rng, task, train.batch_size)
        positions = model.encoding.sample_positions(*tokens.shape, position_rng)  # (B, T) or None
        tokens, targets = tokens.to(device), targets.to(device)
        logits, loss = model(tokens, targets, positions=None if positions is None else positions.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses[step] = loss.detach()
        accuracies[step] = (logits.detach().argmax(-1) == targets).float().mean()
        lengths.append(tokens.shape[1])
        if (step + 1) % train.log_every == 0 or step + 1 == train.steps:
            check_finite(losses[:step + 1], f"pe={head_config.pe} seed={seed} offset={task.offset}")
            log.info("step %d/%d  length %d  loss %.4f  accuracy %.3f", step + 1, train.steps, lengths[-1],
                     losses[step].item(), accuracies[step].item())
    curve = pd.DataFrame({"step": range(1, train.steps + 1), "length": lengths,
                          "loss": losses.cpu().double().numpy(), "accuracy": accuracies.cpu().double().numpy()})
    return model.eval(), curve


def check_finite(losses: torch.Tensor, run: str) -> None:
    """Raise ``TrainingDiverged`` at the first step (1-based) whose loss is NaN or infinite."""
    bad = (~torch.isfinite(losses)).nonzero()
    if len(bad):
        step = int(bad[0]) + 1
        raise TrainingDiverged(f"training run {run} diverged: loss {losses[step - 1].item()} at step {step}; "
                               "lower train.lr (or linear.lr) and rerun")
