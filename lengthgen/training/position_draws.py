"""Every seed's position ids of a training step, drawn side by side: the numbers each seed's
``encoding.sample_positions`` draws from its own generator, in fewer and cheaper ops.

The randomized encodings (``lengthgen/models/encodings/randomized.py``, ``sorted_random_subsets``) draw a sorted
random subset of [0, noise_max_length) per sequence: short rows are drawn with replacement, sorted, and every row
that repeats a value drawn again until none does. Drawn seed by seed, that costs about as much as the minimal head's
whole training step: torch's sort of short rows, and a sort and two full checks per redraw round. Here the first
draws of every seed land in one buffer, sorted by numpy (about ten times faster) and checked in one call, and a
redraw round checks only the rows it redrew (a row without repeats keeps none), every seed's at once, drawing from
each seed's generator exactly what the encoding draws (``tests/test_position_draws.py`` holds the two equal).
"""

import torch


def draw_positions(encoding, batch_size: int, length: int, rngs: list[torch.Generator]) -> torch.Tensor | None:
    """(S, B, T) int64 position ids, seed i's from ``rngs[i]``, as ``encoding.sample_positions`` draws them; None
    where the encoding draws none."""
    population = getattr(encoding, "noise_max_length", None)
    if population is None or length * (length - 1) > population:  # not a short-row subset draw: the encoding's own
        drawn = [encoding.sample_positions(batch_size, length, rng) for rng in rngs]
        return None if drawn[0] is None else torch.stack(drawn)
    rows = torch.empty(len(rngs), batch_size, length, dtype=torch.int64)
    for seed_rows, rng in zip(rows, rngs):
        torch.randint(population, (batch_size, length), generator=rng, out=seed_rows)
    flat_rows = sort_rows(rows.view(-1, length))
    redraw = has_repeats(flat_rows).nonzero()[:, 0]  # rows of every seed, seed by seed
    while len(redraw):  # a round: every seed's generator draws its rows that repeat a value, checked in one call
        drawn = torch.empty(len(redraw), length, dtype=torch.int64)
        start = 0
        for rng, count in zip(rngs, torch.bincount(redraw // batch_size, minlength=len(rngs)).tolist()):
            torch.randint(population, (count, length), generator=rng, out=drawn[start:start + count])
            start += count
        flat_rows[redraw] = sort_rows(drawn)
        redraw = redraw[has_repeats(drawn)]
    return rows


def sort_rows(rows: torch.Tensor) -> torch.Tensor:
    """``rows`` (CPU integers) sorted along the last dimension, in place, and returned: by numpy, whose vectorized
    sort of short rows is about ten times faster than torch's (integers: any sort gives the same values)."""
    rows.numpy().sort(axis=-1)
    return rows


def has_repeats(sorted_rows: torch.Tensor) -> torch.Tensor:
    """(N,) bool: whether each sorted row (N, T) holds a value twice."""
    return (sorted_rows[:, 1:] == sorted_rows[:, :-1]).any(dim=-1)
