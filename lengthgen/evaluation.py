"""Accuracy at every evaluation length of one trained model: the single head's accuracy and
target attention per length, the transformer's accuracy per position; and ``in_chunks``, how every
measurement of the single head reads an evaluation set, a chunk of sequences at a time."""

from collections.abc import Iterator
from typing import NamedTuple

import pandas as pd
import torch
import torch.nn.functional as F

from lengthgen.models.head import AttentionHead, TokenTables
from lengthgen.runtime.seeding import generator
from lengthgen.task import full_sequence_targets

# Sequences per forward pass are chosen so that B * T stays near this many tokens.
TOKENS_PER_BATCH = 2**17


class Chunk(NamedTuple):
    """A few sequences of one length, on the head's device, with what the head needs to read them."""
    tokens: torch.Tensor  # (B, T)
    targets: torch.Tensor | None  # (B,), where the caller gave targets
    positions: torch.Tensor | None  # (B, T) position ids per sequence, where the encoding draws them
    tables: TokenTables | None  # the head's token tables of length T; None with per-sequence positions


def in_chunks(model: AttentionHead, tokens: torch.Tensor, targets: torch.Tensor | None = None,
              positions: torch.Tensor | None = None) -> Iterator[Chunk]:
    """The sequences ``tokens`` (N, T) of one length, with their ``targets`` (N,) and ``positions`` (N, T), in
    order, a chunk of about ``TOKENS_PER_BATCH`` tokens at a time, each to be passed to ``model.predict`` or
    ``model.attention`` with its ``tables=``.

    The token tables are built once for all the chunks of the length, not per chunk: the same numbers, since
    they depend on the length alone. Per-sequence position ids have none to build.
    """
    device = next(model.parameters()).device
    tables = None if positions is not None else model.token_tables(tokens.shape[1])
    batch = max(1, TOKENS_PER_BATCH // tokens.shape[1])
    for start in range(0, len(tokens), batch):
        rows = slice(start, start + batch)
        yield Chunk(tokens[rows].to(device), None if targets is None else targets[rows].to(device),
                    None if positions is None else positions[rows].to(device), tables)


@torch.no_grad()
def accuracy_by_length(model: AttentionHead, eval_sets: dict, offset: int, seed: int) -> pd.DataFrame:
    """Per length: accuracy, mean attention weight on the target position, and loss.

    An encoding that draws position ids (randomized) draws them here too, one row per sequence,
    from a generator seeded by (seed, offset, length): the same for every chunking and device.
    """
    rows = []
    for length, (tokens, targets) in sorted(eval_sets.items()):
        positions = model.encoding.sample_positions(len(tokens), length, generator("eval_positions", seed, offset, length))
        correct, target_attention, loss = 0.0, 0.0, 0.0
        for chunk in in_chunks(model, tokens, targets, positions):
            logits, weights = model.predict(chunk.tokens, positions=chunk.positions, tables=chunk.tables)
            correct += (logits.argmax(-1) == chunk.targets).sum().item()
            target_attention += weights[:, -1 - offset].sum().item()
            loss += F.cross_entropy(logits, chunk.targets, reduction="sum").item()
        n = len(tokens)
        rows.append({"length": length, "accuracy": correct / n, "target_attention": target_attention / n,
                     "loss": loss / n})
    return pd.DataFrame(rows)


@torch.no_grad()
def accuracy_by_position(model: torch.nn.Module, eval_sets: dict, offset: int, n_samples: int,
                         tokens_per_batch: int = 2**15) -> pd.DataFrame:
    """Per (length, position t >= offset): accuracy and loss of the full-sequence task over the
    first ``n_samples`` sequences of each length. ``model(tokens)`` returns logits (B, T, V).

    Fewer tokens per forward pass than the single head's: the transformer's attention at
    length T holds (B, H, T, T) weights in every layer.
    """
    device = next(model.parameters()).device
    frames = []
    for length, (tokens, _) in sorted(eval_sets.items()):
        tokens = tokens[:n_samples]
        correct, loss = torch.zeros(length, dtype=torch.float64), torch.zeros(length, dtype=torch.float64)
        for chunk in tokens.split(max(1, tokens_per_batch // length)):
            chunk = chunk.to(device)
            logits, _ = model(chunk)  # (B, T, V)
            targets = full_sequence_targets(chunk, offset)[:, offset:]  # (B, T - offset)
            logits = logits[:, offset:].float()
            correct[offset:] += (logits.argmax(-1) == targets).sum(0).double().cpu()
            loss[offset:] += F.cross_entropy(logits.transpose(1, 2), targets, reduction="none").sum(0).double().cpu()
        frames.append(pd.DataFrame({"length": length, "position": range(offset, length),
                                    "accuracy": (correct[offset:] / len(tokens)).numpy(),
                                    "loss": (loss[offset:] / len(tokens)).numpy()}))
    return pd.concat(frames, ignore_index=True)


def label_runs(evaluation: pd.DataFrame, experiment: str, train_length_min: int, train_length_max: int, *,
               pe: str, offset: int, seed: int) -> pd.DataFrame:
    """One run's per-length evaluation as rows of the ``accuracy_by_length`` table."""
    in_range = evaluation["length"].between(train_length_min, train_length_max)
    return evaluation.assign(experiment=experiment, pe=pe, offset=offset, seed=seed, in_training_range=in_range)
