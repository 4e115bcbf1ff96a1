"""The training loop's position draws (``lengthgen/training/position_draws.py``) against each seed's encoding: the
same ids, drawn from the same generators, which are left in the same state."""
import pytest
import torch

from lengthgen.models.head import HeadConfig
from lengthgen.runtime.seeding import generator
from lengthgen.training.loop import init_head
from lengthgen.training.position_draws import draw_positions


@pytest.mark.parametrize("pe, length", [
    ("randomized_rope", 8), ("randomized_learned", 32),  # the default range: a few rows drawn again
    ("randomized_rope@noise_max_length=64", 8),  # most rows repeat a value: several rounds of redraws
    ("randomized_learned@noise_max_length=64", 9),  # rows past the short-row draw: the encoding's other way
    ("randomized_rope@noise_max_length=3", 3),  # every id, every row
])
def test_the_drawn_ids_are_each_seeds_encodings_own(pe, length):
    encoding = init_head(HeadConfig(vocab_size=6, d_model=8, pe=pe, trained_positions=9), 0).encoding
    seeds = [4, 0, 7]
    drawn = draw_positions(encoding, 64, length, [generator("draws", seed) for seed in seeds])
    references = [generator("draws", seed) for seed in seeds]
    expected = torch.stack([encoding.sample_positions(64, length, rng) for rng in references])
    assert drawn.dtype == expected.dtype and torch.equal(drawn, expected)
    rngs = [generator("draws", seed) for seed in seeds]
    draw_positions(encoding, 64, length, rngs)
    assert all(torch.equal(rng.get_state(), reference.get_state()) for rng, reference in zip(rngs, references))


def test_an_encoding_that_draws_no_ids_gives_none():
    encoding = init_head(HeadConfig(vocab_size=6, d_model=8, pe="rope", trained_positions=9), 0).encoding
    assert draw_positions(encoding, 4, 5, [generator("draws", 0)]) is None
