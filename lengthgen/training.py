"""Training one head on the retrieval task, with a per-step training curve."""

import logging
from dataclasses import dataclass

import pandas as pd
import torch

from lengthgen.model import AttentionHead, HeadConfig
from lengthgen.seeding import derive_seed, generator
from lengthgen.task import TaskConfig, sample_training_batch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainConfig:
    steps: int
    batch_size: int
    lr: float
    log_every: int = 100


def resolve_device(device: str) -> torch.device:
    """``auto`` picks CUDA when present, else CPU; anything else is passed to torch."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def init_head(config: HeadConfig, seed: int) -> AttentionHead:
    """A freshly initialized head; the init depends on ``seed`` only, not on global state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed("init", seed))
        return AttentionHead(config)


def train_head(
    head_config: HeadConfig, task: TaskConfig, train: TrainConfig, seed: int, device: str = "auto"
) -> tuple[AttentionHead, pd.DataFrame]:
    """Train with Adam on fresh batches; return the model and its curve (step, length, loss, accuracy).

    Batches are drawn on the CPU from a generator seeded by (seed, offset), so the data
    is the same whatever the device and whatever the encoding: runs are paired.
    """
    device = resolve_device(device)
    model = init_head(head_config, seed).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=train.lr)
    data_rng = generator("train", seed, task.offset)
    curve = []
    for step in range(1, train.steps + 1):
        tokens, targets = sample_training_batch(data_rng, task, train.batch_size)
        tokens, targets = tokens.to(device), targets.to(device)
        logits, loss = model(tokens, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        accuracy = (logits.argmax(-1) == targets).float().mean().item()
        curve.append({"step": step, "length": tokens.shape[1], "loss": loss.item(), "accuracy": accuracy})
        if step % train.log_every == 0 or step == train.steps:
            log.info("step %d/%d  length %d  loss %.4f  accuracy %.3f", step, train.steps, tokens.shape[1],
                     loss.item(), accuracy)
    return model.eval(), pd.DataFrame(curve)
