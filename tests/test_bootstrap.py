"""The seed bootstrap (lengthgen/checks/bootstrap.py): known spreads, open and decided checks, pairing and relabelling, and
the per-seed counts of the checks declared per seed."""

import importlib.util

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO, SMOKE_CONFIG
from lengthgen.pipeline.config import prepare_config
from lengthgen.checks import seed_sums
from lengthgen.checks.bootstrap import failing_seeds, resample_seeds, run_seeds, seed_bootstrap
from lengthgen.checks.check import KEY, check, with_keys
from lengthgen.checks.shared_rules import SPREAD_INTERVAL

SPREAD_COLUMNS = ["experiment", "section", "claim", "statistic", "offset", "n_seeds", "resamples", "spread_low",
                  "spread_high", "holds_fraction", "seeds_checked", "seeds_failing"]


def per_seed(values) -> pd.DataFrame:
    return pd.DataFrame({"seed": range(len(values)), "value": values})


def mean_check(threshold: float):
    """A claim whose statistic is the mean over seeds of ``value``, checked against ``threshold``."""

    def claims_of(runs):
        return with_keys([check("mean is high", "mean over seeds", runs["value"].mean(), ">=", threshold, offset=1)],
                         "toy", "toy")

    return claims_of


def resampled_means(values, resamples: int, seed: int) -> np.ndarray:
    """The means of ``values`` over the seed resamples ``seed_bootstrap`` draws with generator seed ``seed``."""
    generator = np.random.default_rng(seed)
    values = np.asarray(values, dtype=float)
    return np.array([values[generator.choice(len(values), size=len(values), replace=True)].mean()
                     for _ in range(resamples)])


def test_the_interval_of_a_mean_is_its_sampling_spread():
    values = np.arange(10.0)  # mean 4.5, population sd 2.87: the mean's spread over resamples is 2.87 / sqrt(10)
    spread = seed_bootstrap(mean_check(0.0), {"runs": per_seed(values)}, resamples=200, seed=1).iloc[0]
    half_width = 1.96 * values.std() / np.sqrt(len(values))
    assert spread["spread_low"] == pytest.approx(4.5 - half_width, abs=0.25)
    assert spread["spread_high"] == pytest.approx(4.5 + half_width, abs=0.25)
    # Exactly the central SPREAD_INTERVAL of the resampled means (linear interpolation between order statistics).
    means = resampled_means(values, 200, seed=1)
    tail = (1 - SPREAD_INTERVAL) / 2
    assert spread["spread_low"] == pytest.approx(np.quantile(means, tail), abs=1e-12)
    assert spread["spread_high"] == pytest.approx(np.quantile(means, 1 - tail), abs=1e-12)
    assert spread["n_seeds"] == 10 and spread["resamples"] == 200 and spread["holds_fraction"] == 1.0


def test_a_threshold_inside_the_spread_leaves_the_check_open_and_one_far_outside_decides_it():
    values = per_seed(np.arange(10.0))
    at_the_mean = seed_bootstrap(mean_check(4.5), {"runs": values}, resamples=100, seed=2).iloc[0]
    assert 0.3 < at_the_mean["holds_fraction"] < 0.7  # noise decides it
    assert at_the_mean["holds_fraction"] == pytest.approx(np.mean(resampled_means(np.arange(10.0), 100, 2) >= 4.5))
    far_below = seed_bootstrap(mean_check(-100.0), {"runs": values}, resamples=20, seed=2).iloc[0]
    far_above = seed_bootstrap(mean_check(100.0), {"runs": values}, resamples=20, seed=2).iloc[0]
    assert far_below["holds_fraction"] == 1.0 and far_above["holds_fraction"] == 0.0


def test_identical_seeds_have_no_spread():
    spread = seed_bootstrap(mean_check(0.5), {"runs": per_seed([0.7] * 5)}, resamples=20, seed=0).iloc[0]
    assert spread["spread_low"] == spread["spread_high"] == pytest.approx(0.7)


def test_a_seed_drawn_twice_counts_as_two_seeds():
    def distinct_seeds(runs):
        return with_keys([check("seeds", "distinct seeds", runs["seed"].nunique(), ">=", 1)], "toy", "toy")

    spread = seed_bootstrap(distinct_seeds, {"runs": per_seed(range(6))}, resamples=30, seed=3).iloc[0]
    assert spread["spread_low"] == spread["spread_high"] == 6


def test_tables_are_resampled_together_so_pairs_stay_paired():
    heads = per_seed(np.linspace(0.2, 0.9, 5))
    controls = heads.assign(value=heads["value"] - 0.1)  # every seed's control is 0.1 below its head

    def paired(heads, controls):
        gap = heads.merge(controls, on="seed", suffixes=("", "_control")).eval("value - value_control")
        return with_keys([check("paired", "largest gap", gap.max(), "<=", 0.1 + 1e-12)], "toy", "toy")

    spread = seed_bootstrap(paired, {"heads": heads, "controls": controls}, resamples=30, seed=4).iloc[0]
    assert spread["spread_low"] == pytest.approx(0.1) and spread["spread_high"] == pytest.approx(0.1)
    assert spread["holds_fraction"] == 1.0


def test_run_seeds_are_every_seed_of_every_seeded_table_sorted():
    tables = {"a": pd.DataFrame({"seed": [2, 0, 2]}), "b": pd.DataFrame({"seed": [1, 2]}),
              "settings": pd.DataFrame({"threshold": [7]})}
    assert run_seeds(tables) == [0, 1, 2]
    assert run_seeds({"settings": pd.DataFrame({"threshold": [7]})}) == []


def test_a_table_without_seeds_is_taken_whole():
    settings = pd.DataFrame({"threshold": [0.5]})
    tables = resample_seeds({"runs": dict(iter(per_seed([1, 2, 3]).groupby("seed"))), "settings": settings},
                            draw=[2, 2, 0])
    assert tables["settings"] is settings
    assert list(tables["runs"]["seed"]) == [0, 1, 2] and list(tables["runs"]["value"]) == [3, 3, 1]
    assert list(tables["runs"].index) == [0, 1, 2]  # a fresh index, as a table read from a file has


def test_a_drawn_seed_a_table_has_no_rows_of_is_left_out_of_it_and_keeps_its_label_elsewhere():
    # Seed 1 has no control row: drawn second, it is seed 1 among the heads and absent from the controls.
    heads = dict(iter(pd.DataFrame({"seed": [0, 1], "value": [0.5, 0.6]}).groupby("seed")))
    controls = dict(iter(pd.DataFrame({"seed": [0, 0], "value": [0.1, 0.2]}).groupby("seed")))
    tables = resample_seeds({"heads": heads, "controls": controls}, draw=[0, 1, 0])
    assert tables["heads"].to_dict("list") == {"seed": [0, 1, 2], "value": [0.5, 0.6, 0.5]}
    assert tables["controls"].to_dict("list") == {"seed": [0, 0, 2, 2], "value": [0.1, 0.2, 0.1, 0.2]}
    # A draw with none of a table's seeds leaves that table empty, with its columns.
    alone = resample_seeds({"controls": controls}, draw=[1])["controls"]
    assert alone.empty and list(alone.columns) == ["seed", "value"]


def test_same_seed_same_spread_and_a_check_made_only_sometimes_counts_its_resamples():
    def sometimes(runs):  # a check made only where the mean is high, like variants' "where it fits the range"
        mean = runs["value"].mean()
        rows = [check("high mean", "mean", mean, ">=", 0, offset=1)]
        if mean > 4.5:
            rows.append(check("high mean", "conditional mean", mean, "<=", 10, offset=1))
        return with_keys(rows, "toy", "toy")

    values = np.arange(10.0) + np.eye(10)[0]  # mean 4.6: the second check is made
    tables = {"runs": per_seed(values)}
    first = seed_bootstrap(sometimes, tables, resamples=40, seed=5)
    assert first.equals(seed_bootstrap(sometimes, tables, resamples=40, seed=5))
    assert not first.equals(seed_bootstrap(sometimes, tables, resamples=40, seed=6))
    made = int((resampled_means(values, 40, 5) > 4.5).sum())
    assert 0 < made < 40 and list(first["resamples"]) == [40, made]
    assert list(first["statistic"]) == ["mean", "conditional mean"]  # the checks of the full data, in order


@pytest.mark.heavy
def test_the_interval_covers_the_true_mean_about_as_often_as_it_says():
    # 40 experiments of 20 seeds each, drawn from N(0.7, 0.1): the 95% percentile interval of the mean should
    # cover 0.7 in about 93% of them (it runs a little narrow at small n), neither never nor always.
    generator = np.random.default_rng(7)
    covered = []
    for experiment in range(40):
        values = per_seed(generator.normal(0.7, 0.1, size=20))
        spread = seed_bootstrap(mean_check(0.5), {"runs": values}, resamples=100, seed=experiment).iloc[0]
        covered.append(spread["spread_low"] <= 0.7 <= spread["spread_high"])
    assert 0.8 <= np.mean(covered) < 1.0


def test_checks_are_matched_across_resamples_on_their_key_the_pooled_and_each_offset_apart():
    def pooled_and_at_two(runs):  # the same claim and statistic pooled and at one offset: two checks
        mean = runs["value"].mean()
        return with_keys([check("high mean", "mean", mean, ">=", 4.5),
                          check("high mean", "mean", mean + 10, ">=", 4.5, offset=2)], "toy", "toy_K2")

    spread = seed_bootstrap(pooled_and_at_two, {"runs": per_seed(np.arange(10.0))}, resamples=50, seed=8)
    assert list(spread.columns) == SPREAD_COLUMNS
    assert spread["offset"].isna().tolist() == [True, False] and spread["offset"].iloc[1] == 2
    assert spread["section"].eq("toy_K2").all() and (spread["resamples"] == 50).all()
    assert spread["spread_low"].iloc[1] == pytest.approx(spread["spread_low"].iloc[0] + 10)
    assert 0.3 < spread["holds_fraction"].iloc[0] < 0.7 and spread["holds_fraction"].iloc[1] == 1.0
    # Each seed alone: the pooled check fails on seeds 0..4 (values below 4.5), the other on none.
    assert spread["seeds_checked"].tolist() == [10, 10] and spread["seeds_failing"].tolist() == [5, 0]


def test_each_seed_alone_counts_how_many_seeds_fail_a_check():
    # A minimum over seeds (>= 0.5) that one seed of five misses: on that seed alone it fails, on the others it holds.
    def lowest(runs):
        return with_keys([check("every seed is high", "min over seeds", runs["value"].min(), ">=", 0.5, offset=1)],
                         "toy", "toy")

    spread = seed_bootstrap(lowest, {"runs": per_seed([0.9, 0.248, 0.7, 0.8, 0.6])}, resamples=40, seed=9).iloc[0]
    assert spread["seeds_checked"] == 5 and spread["seeds_failing"] == 1
    assert 0.2 < spread["holds_fraction"] < 0.5  # (4/5)^5 = 0.33: the bootstrap leaves it open, the count does not


def test_a_check_counts_the_seeds_it_has_a_value_on_and_one_declared_pooled_only_has_no_count():
    def spread_and_conditional(runs):
        sd = runs["value"].std()  # NaN on one seed
        rows = [check("seeds agree", "sd over seeds", sd, "<=", 1.5, offset=1, per_seed=False),
                check("seeds agree", "sd over seeds, counted", sd, "<=", 1.5, offset=1)]
        if runs["value"].mean() > 2:
            rows.append(check("high mean", "mean where high", runs["value"].mean(), "<=", 3.5, offset=1))
        return with_keys(rows, "toy", "toy")

    spread = seed_bootstrap(spread_and_conditional, {"runs": per_seed([1.0, 3.0, 4.0])}, resamples=10, seed=10)
    assert spread["seeds_checked"].isna().iloc[0] and spread["seeds_failing"].isna().iloc[0]
    # Declared per seed, it is counted in every run: on no seed alone does it have a value, 0 of 0.
    assert spread["seeds_checked"].iloc[1] == 0 and spread["seeds_failing"].iloc[1] == 0
    assert spread["seeds_checked"].iloc[2] == 2 and spread["seeds_failing"].iloc[2] == 1  # seeds 3 and 4 make it
    assert str(spread["seeds_checked"].dtype) == "Int64" and str(spread["seeds_failing"].dtype) == "Int64"


def test_the_per_seed_counts_cost_one_call_per_seed_and_leave_the_spread_as_it_was():
    calls = []

    def counted(runs):
        calls.append(len(runs))
        return mean_check(4.5)(runs)

    tables = {"runs": per_seed(np.arange(10.0))}
    spread = seed_bootstrap(counted, tables, resamples=40, seed=11)
    assert len(calls) == 1 + 40 + 10 and calls[-10:] == [1] * 10  # the checks, the resamples, each seed alone
    assert list(spread.columns) == SPREAD_COLUMNS
    # The resamples are drawn as before: the same draws, so the same interval and share as without the counts.
    means = resampled_means(np.arange(10.0), 40, 11)
    assert spread["spread_low"].iloc[0] == pytest.approx(np.quantile(means, 0.025))
    assert spread["spread_high"].iloc[0] == pytest.approx(np.quantile(means, 0.975))
    assert spread["holds_fraction"].iloc[0] == pytest.approx(np.mean(means >= 4.5))


def test_whether_a_check_is_counted_is_its_declaration_not_its_outcome():
    # A t-interval's lower end over runs (two offsets per seed): on all seeds the interval is narrow and above 0, on
    # one seed's two runs it is wide and reaches below 0. Holding on all seeds yet failing on each alone, it is not
    # the same check on one seed, so it is declared pooled only: no count. The same statistic declared per seed is
    # counted whatever its outcome (5 of 5 seeds fail it alone), in every run alike.
    def lower_end(runs, per_seed=True):
        values = runs["value"].to_numpy()
        low = values.mean() - 12.7 * values.std(ddof=1) / np.sqrt(len(values))  # a wide interval: t(0.975, 1)
        return with_keys([check("log-length beats rope", "lower end of the interval", low, ">", 0,
                                per_seed=per_seed)], "toy", "toy")

    runs = pd.DataFrame({"seed": np.repeat(range(5), 2),
                         "value": [0.10, 0.14, 0.11, 0.13, 0.11, 0.13, 0.09, 0.15, 0.10, 0.14]})
    assert lower_end(runs)["holds"].iloc[0]  # 0.12 - 12.7 x 0.021 / sqrt(10) = 0.037
    pooled_only = seed_bootstrap(lambda runs: lower_end(runs, per_seed=False), {"runs": runs}, resamples=5,
                                 seed=12).iloc[0]
    assert pd.isna(pooled_only["seeds_checked"]) and pd.isna(pooled_only["seeds_failing"])
    counted = seed_bootstrap(lower_end, {"runs": runs}, resamples=5, seed=12).iloc[0]
    assert counted["seeds_checked"] == 5 and counted["seeds_failing"] == 5


def test_failing_seeds_lists_the_declared_checks_with_their_counts():
    def claims_of(runs):
        value = runs["value"].min()
        return with_keys([check("c", "min", value, ">=", 0.5), check("c", "min", value, ">=", 0.5, offset=2),
                          check("c", "margin", value, ">=", 0.5, per_seed=False)], "toy", "toy")

    checks = claims_of(per_seed([0.4, 0.9, 0.3]))
    alone = pd.concat([claims_of(per_seed([value])) for value in (0.4, 0.9, 0.3)])
    counts = failing_seeds(alone, checks)
    assert list(counts.columns) == [*KEY, "seeds_checked", "seeds_failing"]
    assert counts[["statistic", "seeds_checked", "seeds_failing"]].values.tolist() == [["min", 3, 2], ["min", 3, 2]]
    assert counts["offset"].isna().tolist() == [True, False]


def test_a_table_without_seeds_or_without_rows_is_passed_whole_to_every_resample():
    settings = pd.DataFrame({"threshold": [0.5]})  # no seed column
    empty = per_seed([]).astype({"seed": int, "value": float})  # a seeded table with no rows

    def claims_of(runs, settings, empty):
        assert list(settings["threshold"]) == [0.5] and empty.empty
        return with_keys([check("mean is high", "mean over seeds", runs["value"].mean(), ">=",
                                settings["threshold"].iloc[0])], "toy", "toy")

    spread = seed_bootstrap(claims_of, {"runs": per_seed([0.6, 0.7, 0.8]), "settings": settings, "empty": empty},
                            resamples=20, seed=0).iloc[0]
    assert spread["n_seeds"] == 3 and spread["resamples"] == 20 and spread["holds_fraction"] == 1.0
    assert spread["seeds_checked"] == 3 and spread["seeds_failing"] == 0


def test_no_resamples_gives_each_check_no_spread_but_still_its_per_seed_count():
    spread = seed_bootstrap(mean_check(0.65), {"runs": per_seed([0.6, 0.7, 0.8])}, resamples=0, seed=0).iloc[0]
    assert spread["resamples"] == 0 and pd.isna(spread["holds_fraction"])
    assert seed_bootstrap(mean_check(0.65), {"runs": per_seed([0.6])}, resamples=0, seed=0)["resamples"].dtype == int
    assert pd.isna(spread["spread_low"]) and pd.isna(spread["spread_high"])
    assert spread["seeds_checked"] == 3 and spread["seeds_failing"] == 1  # 0.6 alone fails >= 0.65


def test_a_run_without_seeds_draws_nothing_and_counts_every_declared_check_on_no_seed():
    def from_settings(settings):
        return with_keys([check("fixed", "threshold", settings["threshold"].iloc[0], ">=", 0.5)], "toy", "toy")

    spread = seed_bootstrap(from_settings, {"settings": pd.DataFrame({"threshold": [0.7]})}, resamples=3, seed=0)
    assert spread[["n_seeds", "resamples", "holds_fraction", "seeds_checked", "seeds_failing"]].values.tolist() == [
        [0, 3, 1.0, 0, 0]]


# --- Checks of per-seed sums (lengthgen.checks.seed_sums): resampled as numbers, the same draws as the recomputation ---

def uneven_runs() -> pd.DataFrame:
    """Seeds with 1 to 4 rows each (a mean over rows is not the mean of the seeds' means), and a baseline per row."""
    generator = np.random.default_rng(13)
    seeds = np.repeat(range(6), [1, 4, 2, 3, 1, 2])
    return pd.DataFrame({"seed": seeds, "value": generator.normal(0.5, 0.2, size=len(seeds)),
                         "baseline": generator.normal(0.45, 0.2, size=len(seeds))})


def mean_and_margin(summed: bool, calls: list | None = None):
    """Two checks of the mean over rows: against a fixed threshold, and against one the data set (1.1 x the
    baseline's mean, as cures' recovery is held to a share of its hard-attention limit); as plain floats or as
    seed sums."""

    def claims_of(runs):
        if calls is not None:
            calls.append(len(runs))
        value, limit = ((seed_sums.mean(runs, "value"), seed_sums.mean(runs, "baseline") * 1.1) if summed
                        else (runs["value"].mean(), runs["baseline"].mean() * 1.1))
        return with_keys([check("mean is high", "mean over rows", value, ">=", 0.5, offset=1),
                          check("mean beats its baseline", "mean over rows", value, ">=", limit)], "toy", "toy")

    return claims_of


def test_a_check_of_seed_sums_gets_the_interval_and_outcomes_of_its_recomputation_from_one_call():
    calls = []
    tables = {"runs": uneven_runs()}
    summed = seed_bootstrap(mean_and_margin(True, calls), tables, resamples=300, seed=14)
    recomputed = seed_bootstrap(mean_and_margin(False), tables, resamples=300, seed=14)
    assert calls == [len(tables["runs"])]  # the checks on all seeds, and no recomputation
    exact = ["experiment", "section", "claim", "statistic", "offset", "n_seeds", "resamples", "holds_fraction",
             "seeds_checked", "seeds_failing"]
    pd.testing.assert_frame_equal(summed[exact], recomputed[exact])
    # The same draws: equal up to the order of summation (rounding), far inside the resamples' own spread.
    for column in ("spread_low", "spread_high"):
        np.testing.assert_allclose(summed[column], recomputed[column], rtol=0, atol=1e-12)
    assert 0 < summed["holds_fraction"].iloc[0] < 1 and 0 < summed["holds_fraction"].iloc[1] < 1  # open: noise counts
    assert summed["seeds_failing"].tolist() == [int((uneven_runs().groupby("seed")["value"].mean() < 0.5).sum()),
                                                summed["seeds_failing"].iloc[1]]


def test_one_check_that_is_not_of_seed_sums_recomputes_every_check():
    calls = []

    def mixed(runs):
        calls.append(len(runs))
        return with_keys([check("mean is high", "mean", seed_sums.mean(runs, "value"), ">=", 0.5),
                          check("seeds agree", "sd", runs["value"].std(), "<=", 1, per_seed=False)], "toy", "toy")

    tables = {"runs": uneven_runs()}
    spread = seed_bootstrap(mixed, tables, resamples=20, seed=15)
    assert len(calls) == 1 + 20 + 6  # the checks, every resample, each seed alone
    plain = seed_bootstrap(mean_and_margin(False), tables, resamples=20, seed=15)
    assert spread["spread_low"].iloc[0] == pytest.approx(plain["spread_low"].iloc[0], abs=1e-12)


def worst_stepped_seed(summed: bool):
    """A worst-seed check made only where a seed with a step is drawn (the transformer's step prediction): the
    largest ``value`` over the seeds with ``stepped`` rows, and the smallest over every seed."""

    def claims_of(runs):
        stepped = runs[runs["stepped"]]
        rows = []
        if len(stepped):
            largest = (seed_sums.made_where(seed_sums.maximum(stepped, "value"),
                                            seed_sums.total(stepped.assign(rows=1.0), "rows"))
                       if summed else stepped["value"].max())
            rows.append(check("stepped seeds are low", "largest over stepped seeds", largest, "<=", 0.6))
        smallest = seed_sums.minimum(runs, "value") if summed else runs["value"].min()
        rows.append(check("every seed is high", "smallest over seeds", smallest, ">=", 0.3))
        return with_keys(rows, "toy", "toy")

    return claims_of


def test_a_check_made_only_where_a_drawn_seed_allows_it_is_left_out_of_the_other_resamples():
    runs = uneven_runs().assign(stepped=lambda frame: frame["seed"].isin([1, 4]))
    summed, recomputed = (seed_bootstrap(worst_stepped_seed(flag), {"runs": runs}, resamples=200, seed=16)
                          for flag in (True, False))
    pd.testing.assert_frame_equal(summed, recomputed)  # worst seeds: exact, no sum is taken
    made = summed.set_index("claim")["resamples"]
    assert 100 < made["stepped seeds are low"] < 200 and made["every seed is high"] == 200  # (4/6)^6: 9% left out
    assert summed.set_index("claim")["seeds_checked"].tolist() == [2, 6]  # alone, a seed without a step has none
    assert all(0 < fraction < 1 for fraction in summed["holds_fraction"])  # the outcomes change over the resamples


def test_a_seed_sums_threshold_needs_a_seed_sums_value():
    with pytest.raises(ValueError, match="threshold of seed sums"):
        check("c", "s", 0.5, ">=", seed_sums.mean(per_seed([0.1, 0.2]), "value"))


# The experiments whose checks are all statistics of seed sums (the costliest bootstraps of the tiny run).
SUMMED_EXPERIMENTS = ("cures", "prop1", "variants", "errors", "generalization", "frequency", "mechanics",
                      "shift", "transformer", "linear", "rope_bases")
# How far a summed interval end may sit from the recomputed one. Both come from the same draws; the seed sums add
# in another order (a few units in the 16th place), and the t-interval of cures' paired check takes its variance from
# sums of squares (seed_sums.mean_interval_low: up to about 1e-8 of the values' spread). The resamples' own spread,
# the noise the interval measures, is orders of magnitude wider (0.01 and more in the tiny run).
SUMMED_TOLERANCE = 1e-7


@pytest.fixture(scope="module")
def bootstrap_speed():
    """bench/bootstrap_speed.py as a module (bench/ is scripts, not a package): it reads an experiment's checked
    tables from a finished run as the analysis job loads them, and makes its checks both ways."""
    spec = importlib.util.spec_from_file_location("bench_bootstrap_speed", REPO / "bench" / "bootstrap_speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def spreads_summed_and_recomputed(bench, experiment: str, results, config: dict, offset: int | None = None,
                                  resamples: int = 100):
    """The seed bootstrap of ``experiment``'s checks (its job of ``offset``, per offset) on a run's tables
    (``results``: its folder), by seed sums and by recomputing the checks on every resample, as every bootstrap did
    before seed sums, with the same draws."""
    tables = bench.checked_tables(experiment, results, config, offset)
    summed, recomputed = bench.claims_functions(experiment, bench.experiment_settings(experiment, config, offset))
    assert summed(**tables)["seed_sums"].notna().all()  # every check is of seed sums: none is recomputed
    return [seed_bootstrap(claims_of, tables, resamples=resamples, seed=0) for claims_of in (summed, recomputed)]


@pytest.mark.parametrize("experiment", SUMMED_EXPERIMENTS)
def test_the_bootstrap_by_seed_sums_keeps_the_recomputed_intervals_and_outcomes_on_the_tiny_run(smoke_run, experiment,
                                                                                               bootstrap_speed):
    config = yaml.safe_load(SMOKE_CONFIG.read_text())
    prepare_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml")  # the defaults, as the run had them
    for offset in bootstrap_speed.job_offsets(experiment, config):  # shift: one job per offset (the tiny run: K=1)
        summed, recomputed = spreads_summed_and_recomputed(bootstrap_speed, experiment, smoke_run / "results", config,
                                                           offset)
        exact = [column for column in summed.columns if column not in ("spread_low", "spread_high")]
        pd.testing.assert_frame_equal(summed[exact], recomputed[exact])  # counts, shares, per-seed counts: identical
        for column in ("spread_low", "spread_high"):
            np.testing.assert_allclose(summed[column], recomputed[column], rtol=0, atol=SUMMED_TOLERANCE)
        # not vacuous: every resample made every check (rope_bases has two on the tiny run: one variants offset)
        assert (summed["resamples"] == 100).all() and len(summed) >= 2
