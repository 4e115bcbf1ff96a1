"""The fixed-offset retrieval task: answer the token ``offset`` places before the query.

Tokens are i.i.d. uniform over the vocabulary. The single head answers at the last position
only, so the target of a sequence of length n is ``tokens[n - 1 - offset]``; the transformer
answers at every position t >= offset (the full-sequence task), with target ``tokens[t - offset]``.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass

import torch

from lengthgen.runtime.seeding import generator


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
    """The token ``offset`` places before the last one, per sequence. (..., T) -> (...)."""
    return tokens[..., -1 - offset]


# Target of a position that has none (t < offset): skipped by the loss and by accuracy.
IGNORE_INDEX = -1


def full_sequence_targets(tokens: torch.Tensor, offset: int) -> torch.Tensor:
    """The token ``offset`` places before each position; ``IGNORE_INDEX`` where there is none. (..., T) -> (..., T)."""
    targets = torch.full_like(tokens, IGNORE_INDEX)
    targets[..., offset:] = tokens[..., :tokens.shape[-1] - offset]
    return targets


def sample_sequences(rng: torch.Generator, n_sequences: int, length: int, vocab_size: int) -> torch.Tensor:
    """(n_sequences, length) int64 tokens, i.i.d. uniform."""
    return torch.randint(vocab_size, (n_sequences, length), generator=rng)


# A training draw's random words: 62 uniform bits each (``torch.randint`` below 2^62 draws each from one 64-bit
# output of the generator), the most below 64 whose range is a power of two.
WORD_BITS = 62


def sample_seed_batches(rngs: list[torch.Generator], n_sequences: int, length: int, vocab_size: int) -> torch.Tensor:
    """(len(rngs), n_sequences, length) int64 tokens, i.i.d. uniform, each seed's from its own generator: the training
    batches of seeds side by side.

    Where the vocabulary is a power of two, each random word holds as many tokens as it has whole fields of
    log2(V) bits (15 of 16 tokens), read with one shift and one mask for every seed: a few times cheaper than a
    generator draw per token (a tenth of a training step otherwise). The tokens are laid out (seed, position,
    sequence) in memory, as the fast steps read them (``fast_heads.int32_keys_first``)."""
    bits = vocab_size.bit_length() - 1
    if vocab_size != 1 << bits:
        tokens = torch.stack([sample_sequences(rng, n_sequences, length, vocab_size) for rng in rngs])
        return tokens.transpose(1, 2).contiguous().transpose(1, 2)
    words = torch.empty(len(rngs), -(-length // (WORD_BITS // bits)), 1, n_sequences, dtype=torch.int64)
    for seed, rng in enumerate(rngs):
        words[seed].random_(1 << WORD_BITS, generator=rng)
    fields = torch.bitwise_right_shift(words, field_shifts(bits)).bitwise_and_(vocab_size - 1)  # (S, words, fields, B)
    return fields.flatten(1, 2)[:, :length].transpose(1, 2)


@functools.cache
def field_shifts(bits: int) -> torch.Tensor:
    """(fields, 1): where each field of ``bits`` bits starts in a random word."""
    return torch.arange(0, WORD_BITS // bits * bits, bits)[:, None]


def training_length(rng: torch.Generator, shortest: int, longest: int) -> int:
    """One batch's sequence length, uniform over [shortest, longest] (inclusive)."""
    return int(torch.randint(shortest, longest + 1, (), generator=rng))


def sample_training_batch(rng: torch.Generator, task: TaskConfig, batch_size: int,
                          targets: Callable[[torch.Tensor, int], torch.Tensor] = retrieval_targets):
    """One batch at a length drawn uniformly from the training range (inclusive), with its
    ``targets(tokens, offset)``: the last position's (the single head) or every position's."""
    length = training_length(rng, task.train_length_min, task.train_length_max)
    tokens = sample_sequences(rng, batch_size, length, task.vocab_size)
    return tokens, targets(tokens, task.offset)


def make_eval_set(seed: int, offset: int, length: int, n_samples: int, vocab_size: int):
    """The fixed evaluation set of one (offset, length), the same for every encoding.

    Seeded by (seed, offset, length) alone, so adding a length leaves the others unchanged.
    """
    tokens = sample_sequences(generator("eval", seed, offset, length), n_samples, length, vocab_size)
    return tokens, retrieval_targets(tokens, offset)
