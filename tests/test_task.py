import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lengthgen.data import eval_set_frame, eval_sets_from_frame
from lengthgen.runtime.seeding import generator
from lengthgen.task import (TaskConfig, full_sequence_targets, make_eval_set, retrieval_targets, sample_seed_batches,
                            sample_training_batch)

import pytest


@given(st.integers(1, 6), st.integers(8, 40), st.integers(0, 2**31))
@settings(max_examples=50, deadline=None)
def test_target_is_the_token_offset_places_before_the_query(offset, length, seed):
    tokens = torch.randint(50, (4, length), generator=generator(seed))
    targets = retrieval_targets(tokens, offset)
    for row in range(4):
        query = length - 1
        assert targets[row] == tokens[row, query - offset]


def test_training_batches_cover_the_training_range_and_nothing_else():
    task = TaskConfig(vocab_size=16, offset=2, train_length_min=8, train_length_max=12)
    rng = generator("test")
    lengths = set()
    for _ in range(200):
        tokens, targets = sample_training_batch(rng, task, 4)
        lengths.add(tokens.shape[1])
        assert torch.equal(targets, tokens[:, -3])
        assert tokens.min() >= 0 and tokens.max() < 16
    assert lengths == set(range(8, 13))


def test_eval_sets_are_fixed_and_a_new_length_leaves_the_others_unchanged():
    short = eval_set_frame(seed=0, offset=1, lengths=[8, 16], n_samples=5, vocab_size=16)
    longer = eval_set_frame(seed=0, offset=1, lengths=[8, 16, 32], n_samples=5, vocab_size=16)
    sets, more_sets = eval_sets_from_frame(short), eval_sets_from_frame(longer)
    for length in (8, 16):
        assert torch.equal(sets[length][0], more_sets[length][0])
    tokens, targets = make_eval_set(0, 1, 32, 5, 16)
    assert torch.equal(more_sets[32][0], tokens) and torch.equal(more_sets[32][1], targets)
    assert not torch.equal(make_eval_set(1, 1, 32, 5, 16)[0], tokens)


def test_offset_must_be_shorter_than_the_shortest_training_sequence():
    with pytest.raises(ValueError, match="offset"):
        TaskConfig(vocab_size=16, offset=8, train_length_min=8, train_length_max=32)


@pytest.mark.parametrize("vocab_size", [2, 8, 10, 16, 32, 64])
def test_seed_batches_are_uniform_and_independent_at_every_position(vocab_size):
    # 40 positions span three random words at 16 tokens (15 to a word): a field read twice or a bit shared by two
    # fields would skew a position's counts or tie neighbouring tokens together.
    tokens = sample_seed_batches([generator("test", seed) for seed in range(2)], 4096, 40, vocab_size)
    assert tokens.shape == (2, 4096, 40) and tokens.dtype == torch.int64
    counts = torch.nn.functional.one_hot(tokens, vocab_size).sum(1)  # (seeds, positions, V)
    expected = 4096 / vocab_size
    assert (counts - expected).abs().max() < 6 * expected ** 0.5  # six binomial sigmas, at every position
    centred = tokens.double() - (vocab_size - 1) / 2
    neighbours = (centred[..., 1:] * centred[..., :-1]).mean(1) / centred.var(1)[..., 1:]
    assert neighbours.abs().max() < 6 / 4096 ** 0.5


def test_a_seeds_batch_is_the_same_alone_and_beside_other_seeds():
    for vocab_size in (16, 10):
        alone = sample_seed_batches([generator("test", 1)], 8, 20, vocab_size)[0]
        beside = sample_seed_batches([generator("test", 0), generator("test", 1)], 8, 20, vocab_size)
        assert torch.equal(alone, beside[1]) and not torch.equal(beside[0], beside[1])


def test_targets_of_seeds_side_by_side_are_each_seeds_own():
    tokens = sample_seed_batches([generator("test", seed) for seed in range(3)], 5, 12, 16)
    for seed in range(3):
        assert torch.equal(retrieval_targets(tokens, 2)[seed], retrieval_targets(tokens[seed], 2))
        assert torch.equal(full_sequence_targets(tokens, 2)[seed], full_sequence_targets(tokens[seed], 2))
