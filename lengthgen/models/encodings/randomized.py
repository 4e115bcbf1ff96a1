"""Randomized positions: rope or a learned table read at position ids drawn per sequence."""

from dataclasses import replace

import torch

from lengthgen.models.encodings.base import EncodingConfig, PositionalEncoding
from lengthgen.models.encodings.learned import LearnedAbsolute
from lengthgen.models.encodings.rope import Rotary

# What each encoding's mechanism is (defined in docs/adding-an-encoding.md): read as text by the workflow,
# without importing this module (lengthgen/models/encodings_table.py), so every value is a literal.
DECLARATIONS = {
    "randomized_rope": {
        "class": "RandomizedRotary",
        "parameters": ("noise_max_length",),
        "offset_only": False,  # the logit is a function of the id gap, which for a fixed token offset is random
        "trained_past_range": True,
        "monotone_in_offset": False,
        "random_positions": True,
    },
    "randomized_learned": {
        "class": "RandomizedLearned",
        "parameters": ("noise_max_length",),
        "offset_only": False,
        "trained_past_range": True,  # every row is drawn during training, so every row is trained
        "monotone_in_offset": False,
        "random_positions": True,
    },
}


class RandomizedPositions(PositionalEncoding):
    """Randomized positions (Ruoss et al., ACL 2023, google-deepmind/randomized_positional_encodings):
    each sequence of length n gets as position ids a sorted uniform random subset of
    [0, noise_max_length), by default [0, 4096): four times the longest default evaluation length
    (1024), as Ruoss et al. take a range well above the longest test length, so that even the
    longest evaluation sequence draws a sparse subset rather than every id (``@noise_max_length=N``
    sets another; the config checks that it covers every evaluation length). It is a setting of
    the encoding, not of the evaluation: changing the evaluation lengths retrains nothing.

    Drawn afresh for every sequence, in training and at evaluation alike: the reference code has
    no train/eval switch and samples at evaluation too (it draws one subset per batch; here each
    sequence gets its own, so an evaluation averages over as many draws as sequences).
    """

    def sample_positions(self, batch_size: int, length: int, rng: torch.Generator) -> torch.Tensor:
        return sorted_random_subsets(batch_size, length, self.noise_max_length, rng)


def sorted_random_subsets(batch_size: int, size: int, population: int, rng: torch.Generator) -> torch.Tensor:
    """(batch_size, size) int64: each row a uniform random subset of [0, population), sorted.

    Two exact ways, by cost. Short rows (duplicates rare): draw with replacement and redraw every
    row that repeats a value, which leaves the uniform distribution over sets of distinct values.
    Long rows: the indices of the ``size`` largest of ``population`` uniform draws, in float64 so
    that ties (which would bias the choice) are vanishingly rare.
    """
    if size > population:
        raise ValueError(f"sequence length {size} exceeds noise_max_length {population}")
    if size * (size - 1) > population:  # a row would repeat a value more often than not
        draws = torch.rand(batch_size, population, generator=rng, dtype=torch.float64)
        return draws.topk(size, dim=-1).indices.sort(dim=-1).values
    rows = torch.randint(population, (batch_size, size), generator=rng).sort(dim=-1).values
    repeats = (rows[:, 1:] == rows[:, :-1]).any(dim=-1)
    while repeats.any():
        rows[repeats] = torch.randint(population, (int(repeats.sum()), size), generator=rng).sort(dim=-1).values
        repeats = (rows[:, 1:] == rows[:, :-1]).any(dim=-1)
    return rows


# The randomized encodings' range of position ids unless the name sets one (``@noise_max_length=``):
# four times the longest default evaluation length (1024). At a range equal to it, a sequence of that
# length draws every id, 0..1023, the ids of no training sequence; at twice it, half of them.
DEFAULT_NOISE_MAX_LENGTH = 4096


def noise_max_length_of(noise_max_length: float | None) -> int:
    """The randomized encodings' range of position ids: ``DEFAULT_NOISE_MAX_LENGTH`` unless the name sets it."""
    if noise_max_length is None:
        return DEFAULT_NOISE_MAX_LENGTH
    if noise_max_length != int(noise_max_length) or noise_max_length < 1:
        raise ValueError(f"noise_max_length must be a positive integer, got {noise_max_length}")
    return int(noise_max_length)


class RandomizedRotary(RandomizedPositions, Rotary):
    """Randomized rotary positions (Ruoss et al. 2023): ``rope`` applied at position ids drawn per
    sequence as a sorted random subset of [0, noise_max_length), noise_max_length = 4096 (four times
    the longest default evaluation length, 1024) unless the name sets it. The logit is a function of
    the id gap, which for a fixed token offset is random."""


    def __init__(self, config: EncodingConfig, *, noise_max_length: float | None = None):
        Rotary.__init__(self, config)
        self.noise_max_length = noise_max_length_of(noise_max_length)
        # Every id a sequence can draw, rotated once (the same numbers as Rotary.phasors): a batch of
        # per-sequence ids looks them up instead of taking B x T sines and cosines per step. Kept in
        # each complex dtype, so that a float32 head reads (B, T, D/2) complex64 values, not twice as many
        # bytes of complex128 converted after (the same numbers: the conversion is per element). Plain
        # attributes, not buffers: constants of the encoding, like noise_max_length.
        table = Rotary.phasors(self, torch.arange(self.noise_max_length))
        self.phasor_tables = {dtype: table.to(dtype) for dtype in (torch.complex128, torch.complex64)}

    def phasors(self, positions: torch.Tensor, dtype: torch.dtype = torch.complex128) -> torch.Tensor:
        if positions.is_floating_point():
            return Rotary.phasors(self, positions, dtype)
        return self.phasor_tables[dtype].to(positions.device)[positions]


class RandomizedLearned(RandomizedPositions, LearnedAbsolute):
    """Randomized learned positions (Ruoss et al. 2023): a ``learned`` table of noise_max_length rows,
    read at position ids drawn per sequence as a sorted random subset of [0, noise_max_length),
    noise_max_length = 4096 (four times the longest default evaluation length, 1024) unless the name
    sets it.
    Every row is drawn during training, so every row is trained."""


    def __init__(self, config: EncodingConfig, *, noise_max_length: float | None = None):
        noise_max_length = noise_max_length_of(noise_max_length)
        LearnedAbsolute.__init__(self, replace(config, trained_positions=noise_max_length))
        self.noise_max_length = noise_max_length

    def position_embedding(self, positions: torch.Tensor) -> torch.Tensor:
        # Every id is below noise_max_length, a stored row: a plain gather, also under vmap.
        return self.table[positions]
