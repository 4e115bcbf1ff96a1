"""Statistics of per-seed sums (lengthgen/seed_sums.py): each equals the statistic of the resampled rows themselves,
whatever the weights, and the t-interval's low end equals mean_interval's."""

import numpy as np
import pandas as pd
import pytest

from lengthgen import seed_sums
from lengthgen.stats import mean_interval, mean_interval_low


def runs() -> pd.DataFrame:
    """Three seeds with 3, 1 and 2 rows, in two groups."""
    return pd.DataFrame({"seed": [0, 0, 0, 1, 2, 2], "group": ["a", "b", "a", "a", "b", "b"],
                         "value": [0.1, 0.7, 0.4, 0.9, 0.2, 0.3]})


def resampled(frame: pd.DataFrame, draw: list[int]) -> pd.DataFrame:
    """The rows of the drawn seeds, a seed drawn twice twice (as the recomputing bootstrap takes them)."""
    return pd.concat([frame[frame["seed"] == seed] for seed in draw], ignore_index=True)


DRAWS = [[0, 1, 2], [2, 2, 0], [1, 1, 1], [0, 2, 2]]


def weights(draw: list[int]) -> np.ndarray:
    return np.bincount(draw, minlength=3)[None, :]


@pytest.mark.parametrize("draw", DRAWS)
def test_a_mean_of_seed_sums_is_the_mean_of_the_resampled_rows(draw):
    mean = seed_sums.mean(runs(), "value")
    assert mean.at(weights(draw), [0, 1, 2])[0] == pytest.approx(resampled(runs(), draw)["value"].mean(), abs=1e-15)
    assert mean.value() == pytest.approx(runs()["value"].mean(), abs=1e-15)


@pytest.mark.parametrize("draw", DRAWS)
def test_a_total_of_seed_sums_is_the_sum_of_the_resampled_rows(draw):
    total = seed_sums.total(runs(), "value")
    assert total.at(weights(draw), [0, 1, 2])[0] == pytest.approx(resampled(runs(), draw)["value"].sum(), abs=1e-15)
    assert total.value() == pytest.approx(runs()["value"].sum(), abs=1e-15)


@pytest.mark.parametrize("draw", DRAWS)
def test_the_largest_of_group_means_skips_a_group_the_draw_has_no_rows_of(draw):
    means = seed_sums.means_by(runs(), ["group"], "value")
    largest, smallest = seed_sums.largest(list(means.values())), seed_sums.smallest(list(means.values()))
    expected = resampled(runs(), draw).groupby("group")["value"].mean()  # seed 1 alone has no group "b"
    assert largest.at(weights(draw), [0, 1, 2])[0] == pytest.approx(expected.max(), abs=1e-15)
    assert smallest.at(weights(draw), [0, 1, 2])[0] == pytest.approx(expected.min(), abs=1e-15)
    assert np.isnan(seed_sums.largest([]).value())  # as pandas' max of nothing


def test_arithmetic_of_seed_sums_is_the_arithmetic_of_their_values():
    frame = runs()
    a, b = seed_sums.mean(frame[frame["group"] == "a"], "value"), seed_sums.mean(frame[frame["group"] == "b"], "value")
    mean_a, mean_b = (frame.loc[frame["group"] == group, "value"].mean() for group in ("a", "b"))
    assert (a - b).value() == pytest.approx(mean_a - mean_b)
    assert abs(b - a).value() == pytest.approx(abs(mean_b - mean_a))
    assert (a * 2).value() == pytest.approx(2 * mean_a) and (a - 0.25).value() == pytest.approx(mean_a - 0.25)
    assert seed_sums.combine(np.divide, a, b).value() == pytest.approx(mean_a / mean_b)
    # seed 1 has rows of "a" only: alone, b is a mean over nothing, and so is a - b
    assert np.isnan((a - b).at(np.array([[0, 1, 0]]), [0, 1, 2])[0])


@pytest.mark.parametrize("draw", [[0, 1, 2], [2, 2, 0], [0, 2, 2], [1, 0, 0], [0, 0, 0]])
def test_the_low_end_of_the_t_interval_from_seed_sums_is_mean_intervals(draw):
    low = mean_interval_low(runs(), "value").at(weights(draw), [0, 1, 2])[0]
    assert low == pytest.approx(mean_interval(resampled(runs(), draw)["value"])[1], abs=1e-12)


def test_the_t_interval_of_one_value_or_of_equal_values_is_the_mean_up_to_the_rounding_of_a_sum_of_squares():
    # One seed of one row drawn three times: mean_interval's width is exactly 0; from seed sums the variance is the
    # rounding of a difference of sums of squares, here 2e-8 of the distance from the mean of all rows.
    one = pd.DataFrame({"seed": [0, 1], "value": [0.3, 0.5]})
    assert mean_interval_low(one, "value").at(np.array([[1, 0], [3, 0]]), [0, 1]) == pytest.approx([0.3, 0.3], abs=1e-7)
    assert mean_interval_low(runs(), "value").at(weights([1, 1, 1]), [0, 1, 2])[0] == pytest.approx(0.9, abs=1e-7)
    assert np.isnan(mean_interval_low(one.iloc[:0], "value").value())


def with_a_seed_of_no_value() -> pd.DataFrame:
    """``runs()`` and a seed 3 whose one value is NaN: it has rows but no value to be the worst."""
    return pd.concat([runs(), pd.DataFrame({"seed": [3], "group": ["a"], "value": [np.nan]})], ignore_index=True)


@pytest.mark.parametrize("draw", [*DRAWS, [3, 3, 3, 3], [1, 3, 1, 3], [2, 3, 0, 0]])
def test_the_worst_seed_is_the_smallest_or_largest_of_the_resampled_rows(draw):
    frame = with_a_seed_of_no_value()
    rows = resampled(frame, draw)["value"]
    counts = np.bincount(draw, minlength=4)[None, :]
    smallest, largest = (function(frame, "value") for function in (seed_sums.worst_seed_smallest,
                                                                  seed_sums.worst_seed_largest))
    for statistic, expected in ((smallest, rows.min()), (largest, rows.max())):
        np.testing.assert_array_equal(statistic.at(counts, [0, 1, 2, 3]), [expected])  # exact: no sum is taken
    assert (smallest.value(), largest.value()) == (frame["value"].min(), frame["value"].max())
    assert np.isnan(seed_sums.worst_seed_smallest(frame.iloc[:0], "value").value())  # as pandas' min of nothing


def test_the_worst_seed_over_draws_at_once_and_in_arithmetic():
    frame = runs()
    counts = np.array([[1, 1, 1], [0, 2, 1], [0, 3, 0], [3, 0, 0]])
    smallest, largest = seed_sums.worst_seed_smallest(frame, "value"), seed_sums.worst_seed_largest(frame, "value")
    np.testing.assert_array_equal(smallest.at(counts, [0, 1, 2]), [0.1, 0.2, 0.9, 0.1])
    np.testing.assert_array_equal((largest - smallest).at(counts, [0, 1, 2]), [0.9 - 0.1, 0.9 - 0.2, 0.0, 0.7 - 0.1])
