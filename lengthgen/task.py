"""The fixed-offset retrieval task: answer the token ``offset`` places before the query.

Tokens are i.i.d. uniform over the vocabulary; the query is the last position, so the
target of a sequence of length n is ``tokens[n - 1 - offset]``.
"""

from dataclasses import dataclass

import torch

from lengthgen.seeding import generator


@dataclass(frozen=True)
class TaskConfig:
    vocab_size: int
    offset: int
    train_length_min: int
    train_length_max: int

    def __post_init__(self):
        if not 0 < self.offset < self.train_length_min <= self.train_length_max:
            raise ValueError(
                "need 0 < offset < train_length_min <= train_length_max, got "
                f"offset={self.offset}, train_length_min={self.train_length_min}, "
                f"train_length_max={self.train_length_max}"
            )


def retrieval_targets(tokens: torch.Tensor, offset: int) -> torch.Tensor:
    """The token ``offset`` places before the last one, per sequence. (B, T) -> (B,)."""
    return tokens[:, -1 - offset]


def sample_sequences(rng: torch.Generator, n_sequences: int, length: int, vocab_size: int) -> torch.Tensor:
    """(n_sequences, length) int64 tokens, i.i.d. uniform."""
    return torch.randint(vocab_size, (n_sequences, length), generator=rng)


def sample_training_batch(rng: torch.Generator, task: TaskConfig, batch_size: int):
    """One batch at a length drawn uniformly from the training range (inclusive)."""
    length = int(torch.randint(task.train_length_min, task.train_length_max + 1, (), generator=rng))
    tokens = sample_sequences(rng, batch_size, length, task.vocab_size)
    return tokens, retrieval_targets(tokens, task.offset)


def make_eval_set(seed: int, offset: int, length: int, n_samples: int, vocab_size: int):
    """The fixed evaluation set of one (offset, length), the same for every encoding.

    Seeded by (seed, offset, length) alone, so adding a length leaves the others unchanged.
    """
    tokens = sample_sequences(generator("eval", seed, offset, length), n_samples, length, vocab_size)
    return tokens, retrieval_targets(tokens, offset)
