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


@pytest.mark.parametrize("draw", [*DRAWS, [1, 0, 0], [2, 1, 2]])
def test_the_smallest_and_largest_row_are_those_of_the_resampled_rows_nan_skipped(draw):
    frame = runs().assign(value=[0.1, np.nan, 0.4, np.nan, 0.2, 0.3])  # seed 1's only row is NaN
    smallest, largest = seed_sums.smallest_row(frame, "value"), seed_sums.largest_row(frame, "value")
    drawn = resampled(frame, draw)["value"]
    assert smallest.at(weights(draw), [0, 1, 2])[0] == pytest.approx(drawn.min(), nan_ok=True)
    assert largest.at(weights(draw), [0, 1, 2])[0] == pytest.approx(drawn.max(), nan_ok=True)
    assert (smallest.value(), largest.value()) == (0.1, 0.4)
    # each seed alone (the identity): seed 1 has no value, and neither does a frame with no rows
    np.testing.assert_array_equal(smallest.at(np.eye(3), [0, 1, 2]), [0.1, np.nan, 0.2])
    assert np.isnan(seed_sums.largest_row(frame.iloc[:0], "value").value())
    # in a statistic of several, a seed the sums have no row of adds nothing
    assert (largest - smallest).at(np.array([[0, 0, 1, 5]]), [0, 1, 2, 7])[0] == pytest.approx(0.1)
