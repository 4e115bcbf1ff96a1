"""Statistics of per-seed sums (lengthgen/checks/seed_sums.py): each equals the statistic of the resampled rows themselves,
whatever the weights, and the t-interval's low end equals mean_interval's."""

import numpy as np
import pandas as pd
import pytest

from lengthgen.checks import seed_sums
from lengthgen.checks.stats import mean_interval, mean_interval_low


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


@pytest.mark.parametrize("draw", DRAWS + [[1, 1, 0]])
def test_the_smallest_and_largest_over_drawn_seeds_are_those_of_the_resampled_rows(draw):
    """Seed 1's one row is NaN, skipped as pandas skips it (seed 1 alone has no value); a seed drawn twice is the same
    rows twice, and a seed not drawn leaves out its rows however extreme."""
    frame = runs().assign(value=[0.1, 0.7, 0.4, np.nan, 0.2, 0.3])
    rows = resampled(frame, draw)["value"]
    for statistic, expected in ((seed_sums.minimum, rows.min()), (seed_sums.maximum, rows.max())):
        np.testing.assert_equal(statistic(frame, "value").at(weights(draw), [0, 1, 2])[0], expected)  # NaN: NaN
    assert seed_sums.minimum(frame, "value").value() == 0.1 and seed_sums.maximum(frame, "value").value() == 0.7
    assert np.isnan(seed_sums.minimum(frame, "value").at(weights([1, 1, 1]), [0, 1, 2])[0])
    assert np.isnan(seed_sums.maximum(frame.iloc[:0], "value").value())  # as pandas' max of nothing
    # beside another statistic, with a seed it has no rows of: that seed's draws add nothing to it
    difference = seed_sums.minimum(frame[frame["seed"] == 2], "value") - seed_sums.maximum(frame, "value")
    assert difference.at(weights(draw), [0, 1, 2])[0] == pytest.approx(
        resampled(frame[frame["seed"] == 2], draw)["value"].min() - rows.max(), nan_ok=True)


def test_the_smallest_over_drawn_seeds_at_many_draws_at_once_and_in_arithmetic():
    frame = runs()
    counts = np.array([[1, 1, 1], [0, 2, 1], [0, 3, 0], [3, 0, 0]])
    smallest, largest = seed_sums.minimum(frame, "value"), seed_sums.maximum(frame, "value")
    np.testing.assert_array_equal(smallest.at(counts, [0, 1, 2]), [0.1, 0.2, 0.9, 0.1])
    np.testing.assert_array_equal((largest - smallest).at(counts, [0, 1, 2]), [0.9 - 0.1, 0.9 - 0.2, 0.0, 0.7 - 0.1])
