"""The robustness study: its points (lengthgen/studies/robustness/points.py), the catalog's experiments restriction, and its
tables, section and figure on synthetic data (lengthgen/studies/robustness/)."""

import copy

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO, SCHEMA, SMOKE_CONFIG
from lengthgen.checks.check import check, with_keys, with_verdicts
from lengthgen.pipeline.config import ConfigError, prepare_config
from lengthgen.experiments.catalog import plan
from lengthgen.studies.robustness.analysis import claim_robustness, point_mechanism, robustness_checks
from lengthgen.studies.robustness.figures import check_grid
from lengthgen.studies.robustness.points import DEFAULT_POINT, robustness_points
from lengthgen.studies.robustness.section import section
from lengthgen.studies.robustness.tables import ROBUSTNESS_CHECKS, ROBUSTNESS_MECHANISM
from lengthgen.tables.io import read_table, write_table
from lengthgen.science.prediction_errors import DILUTION_LAW_PREDICTOR

DEFAULT = yaml.safe_load((REPO / "config.yaml").read_text())
STUDY = ["generalization", "mechanics", "frequency", "prop1", "errors"]


def points_of(as_given):
    prepared = copy.deepcopy(as_given)
    prepare_config(prepared, SCHEMA)
    return prepared, robustness_points(as_given, prepared, SCHEMA)


def with_points(*points):
    config = copy.deepcopy(DEFAULT)
    config["robustness"] = {"points": [{"name": name, "set": changes} for name, changes in points]}
    return config


def test_the_default_study_varies_one_choice_at_a_time_and_runs_only_its_experiments():
    prepared, points = points_of(DEFAULT)
    assert prepared["robustness"]["experiments"] == STUDY
    assert points  # the default target runs the study
    inits = {point.prepared["model"]["init"] for point in points.values()}
    assert {prepared["model"]["init"], "normal@std=0.1", "normal@std=0.02"} <= inits | {prepared["model"]["init"]}
    for name, point in points.items():
        assert point.results_dir == f"results/robustness/{name}"
        assert sorted(plan(point.prepared).experiments) == sorted(STUDY)
        assert point.prepared["confirmation"]["runs"] == [] and point.prepared["robustness"]["points"] == []
        assert point.prepared["sweep"] == prepared["sweep"]  # rope and learned, every seed and offset
        varied = {entry.split(":")[0] for entry in point.differences}
        # one choice: a key, the training range with its evaluation lengths, or the init x width interaction
        assert len(varied) == 1 or varied in ({"task.train_length_max", "task.eval_lengths"},
                                              {"model.init", "model.d_model"}), name
        task = point.prepared["task"]
        assert max(task["eval_lengths"]) == 32 * task["train_length_max"]


def test_a_point_is_layered_over_the_config_as_given():
    _, points = points_of(with_points(("wide", {"model": {"d_model": 128}})))
    point = points["wide"]
    assert point.config["model"]["d_model"] == 128 and point.config["train"] == DEFAULT["train"]
    assert point.differences == ["model.d_model: 64 -> 128"]
    assert point.config["experiments"] == STUDY


@pytest.mark.parametrize("points, message", [
    ([("same", {"model": {"d_model": 64}})], "same changes nothing"),
    ([("elsewhere", {"results_dir": "x"})], "elsewhere sets results_dir"),
    ([("few", {"experiments": ["errors"]})], "few sets experiments"),
    ([("a", {"train": {"lr": 0.1}}), ("a", {"train": {"lr": 0.2}})], "a names two points"),
    ([(DEFAULT_POINT, {"train": {"lr": 0.1}})], "default names the run itself"),
    ([("odd", {"model": {"d_model": 33}})], "robustness point odd"),
    ([("typo", {"model": {"d_modle": 32}})], "typo"),
    ([("short", {"task": {"train_length_max": 48}})], "eval_lengths must include 4 x task.train_length_max"),
])
def test_a_bad_point_is_an_error_naming_it(points, message):
    with pytest.raises(ConfigError, match=message):
        points_of(with_points(*points))


def test_an_experiment_of_the_study_must_run_at_every_point_and_be_in_the_catalog():
    config = with_points(("rope_only", {"sweep": {"pe": ["rope"]}}))
    with pytest.raises(ConfigError, match="robustness point rope_only: .*generalization does not run there"):
        points_of(config)
    config["robustness"]["experiments"] = ["prop1", "errorz"]
    with pytest.raises(ConfigError, match="robustness.experiments: errorz not in the catalog"):
        points_of(config)


def test_the_experiments_key_restricts_the_catalog_and_says_why():
    config = copy.deepcopy(DEFAULT)
    config["experiments"] = ["prop1", "generalization"]
    prepare_config(config, SCHEMA)
    planned = plan(config)
    assert planned.experiments == ["generalization", "prop1"]  # catalog order
    assert "not among the config's experiments" in planned.left_out["shift"]
    unrestricted = copy.deepcopy(DEFAULT)
    prepare_config(unrestricted, SCHEMA)
    assert "multiseed" in plan(unrestricted).experiments


# ---- the tables, section and figure on synthetic data


def claims_table(values: dict) -> pd.DataFrame:
    """An all_claims table of two experiments: {(claim, offset): value}, each check holding when value >= 0.5, and
    a sanity check."""
    checks = {"generalization": [check(claim, "stat", value, ">=", 0.5, offset=offset)
                                 for (claim, offset), value in values.items()],
              "errors": [check("unseen winners", "share", 1.0, ">=", 0.99, offset=1, kind="sanity")],
              "shift": [check("not in the study", "x", 1.0, ">=", 0.5)]}
    return with_verdicts(pd.concat([with_keys(rows, name, name) for name, rows in checks.items()], ignore_index=True))


CLAIMS = {
    DEFAULT_POINT: claims_table({("fits", 1): 1.0, ("fits", 2): 0.9, ("extrapolates", 1): 0.8, ("extrapolates", 2): 0.6}),
    "small": claims_table({("fits", 1): 1.0, ("fits", 2): 0.9, ("extrapolates", 1): 0.7, ("extrapolates", 2): 0.2}),
    "wide": claims_table({("fits", 1): 0.1, ("fits", 2): 0.2, ("extrapolates", 1): 0.9, ("extrapolates", 2): 0.9}),
}
CHANGES = {DEFAULT_POINT: [], "small": ["model.init: torch_default -> normal@std=0.1"], "wide": ["model.d_model: 64 -> 128"]}
POINTS = list(CLAIMS)


def test_the_checks_table_has_a_row_per_study_check_and_point_with_its_claims_verdict(tmp_path):
    checks = robustness_checks(CLAIMS, CHANGES, STUDY)
    assert len(checks) == 3 * 5  # 4 generalization checks and 1 errors check, at each of 3 points
    assert set(checks["experiment"]) == {"generalization", "errors"}  # shift is not in the study
    verdicts = checks.drop_duplicates(["point", "claim"]).set_index(["point", "claim"])["claim_verdict"]
    assert verdicts[(DEFAULT_POINT, "extrapolates")] == "holds"
    assert verdicts[("small", "extrapolates")] == "holds in part"  # 0.2 < 0.5 at K=2
    assert verdicts[("wide", "fits")] == "does not hold"
    assert verdicts[("wide", "unseen winners")] == "untestable"
    assert checks.loc[checks["point"] == "wide", "changes"].iloc[0] == "model.d_model: 64 -> 128"
    write_table(checks, tmp_path / "robustness_checks.parquet", ROBUSTNESS_CHECKS)
    back = read_table(tmp_path / "robustness_checks.parquet", ROBUSTNESS_CHECKS)
    assert len(back) == len(checks) and back["holds"].sum() == checks["holds"].sum()
    robustness = claim_robustness(checks, POINTS)
    assert robustness.loc[("generalization", "fits"), "holds_at"] == 2
    assert robustness.loc[("generalization", "extrapolates"), "holds_at"] == 2
    assert ("errors", "unseen winners") not in robustness.index  # sanity: in no verdict


def errors_by_length(ranking: int, dilution: int) -> pd.DataFrame:
    """rope's errors at two lengths past the range (split in halves) and one inside it (not counted), and the learned
    head's (not counted)."""
    rows = [{"pe": "rope", "length": 64, "past_training_range": True, "n_wrong": ranking + dilution,
             "n_ranking_error": ranking},
            {"pe": "rope", "length": 128, "past_training_range": True, "n_wrong": ranking + dilution,
             "n_ranking_error": ranking},
            {"pe": "rope", "length": 16, "past_training_range": False, "n_wrong": 50, "n_ranking_error": 0},
            {"pe": "learned", "length": 64, "past_training_range": True, "n_wrong": 900, "n_ranking_error": 900}]
    return pd.DataFrame(rows)


def kernel(peaks: dict) -> pd.DataFrame:
    """prop1_kernel rows of heads {(offset, seed): (value at K, largest value at an unseen offset)}; the seen range
    is deltas 1..7, with a larger value at a seen delta that must not count."""
    rows = []
    for (offset, seed), (at_target, unseen) in peaks.items():
        for delta in range(1, 12):
            value = at_target if delta == offset else (unseen if delta == 10 else (99.0 if delta == 5 else -1.0))
            rows.append({"offset": offset, "seed": seed, "delta": delta, "seen": delta < 8, "mean_logit": value})
    return pd.DataFrame(rows)


def prop1_error(dilution: float, ranking: float) -> pd.DataFrame:
    rows = [{"heads": heads, "scope": scope, "lengths": lengths, "quantity": quantity, "predictor": predictor,
             "mae": mae + (heads == "untrained") + (scope != "all") + (lengths != "beyond_training")
             + (quantity != "accuracy")}
            for heads in ("trained", "untrained") for scope in ("all", "K=1") for lengths in ("beyond_training", "all")
            for quantity in ("accuracy", "target_attention")
            for predictor, mae in ((DILUTION_LAW_PREDICTOR, dilution), ("ranking", ranking), ("chance", 0.5))]
    return pd.DataFrame(rows)


def test_the_mechanism_is_read_from_the_points_tables():
    row = point_mechanism("small", errors_by_length(ranking=10, dilution=30),
                          kernel({(1, 0): (4.0, 1.0), (2, 0): (2.0, 1.0), (1, 1): (8.0, 1.0)}), prop1_error(0.05, 0.2))
    assert row["n_wrong"] == 80 and row["ranking_share_of_wrong"] == pytest.approx(0.25)
    assert row["unseen_peak_ratio"] == pytest.approx(0.25)  # median of 1/4, 1/2, 1/8
    assert row["unseen_peak_gap"] == pytest.approx(-3.0)  # median of -3, -1, -7
    assert (row["dilution_mae"], row["ranking_mae"], row["better_predictor"]) == (0.05, 0.2, DILUTION_LAW_PREDICTOR)
    assert point_mechanism("p", errors_by_length(5, 0), kernel({(1, 0): (1.0, 2.0)}),
                           prop1_error(0.3, 0.1))["better_predictor"] == "ranking"
    assert np.isnan(point_mechanism("p", errors_by_length(0, 0), kernel({(1, 0): (1.0, 2.0)}),
                                    prop1_error(0.3, 0.1))["ranking_share_of_wrong"])


def synthetic_mechanism(tmp_path) -> pd.DataFrame:
    rows = [point_mechanism(DEFAULT_POINT, errors_by_length(30, 10), kernel({(1, 0): (2.0, 1.0)}), prop1_error(0.1, 0.05)),
            point_mechanism("small", errors_by_length(10, 30), kernel({(1, 0): (4.0, 1.0)}), prop1_error(0.05, 0.2)),
            point_mechanism("wide", errors_by_length(20, 20), kernel({(1, 0): (3.0, 1.0)}), prop1_error(0.2, 0.1))]
    mechanism = pd.DataFrame(rows)
    write_table(mechanism, tmp_path / "robustness_mechanism.parquet", ROBUSTNESS_MECHANISM)
    return read_table(tmp_path / "robustness_mechanism.parquet", ROBUSTNESS_MECHANISM)


def test_the_section_says_where_each_claim_holds_and_what_the_mechanism_does(tmp_path):
    text = section(robustness_checks(CLAIMS, CHANGES, STUDY), synthetic_mechanism(tmp_path), POINTS, CHANGES)
    assert "*fits*: holds at 2 of 3 points; differs from the default's (holds) at wide (does not hold)" in text
    assert "*extrapolates*: holds at 2 of 3 points; differs from the default's (holds) at small (holds in part)" in text
    assert "Of 2 experiment claims (each experiment's own, finer than the results page's), 0 hold at every one of " \
           "the 3 points and 0 at none; 2 have a verdict that differs" in text
    assert "from 0.25 (small) to 0.75 (default)" in text
    assert "rank correlation with the carrier kernel's largest value at unseen offsets relative to its value at K is " \
           "+1.00" in text  # ratios 0.5, 0.25, 0.333 go with shares 0.75, 0.25, 0.5
    assert "better (lower MAE) at 2 of 3 points (default, wide); the dilution law at 1 (small)" in text
    assert "model.init: torch_default -> normal@std=0.1" in text
    # The finding is the ranking errors' majority: it flips where the share crosses one half (0.5 is no majority).
    assert "- model.init: 0.25 at small (default 0.75); the majority flips at small." in text
    assert "- model.d_model: 0.50 at wide (default 0.75); the majority flips at wide." in text


def test_the_figure_grid_colours_each_evidence_check_by_its_verdict_over_offsets():
    rows, levels, values = check_grid(robustness_checks(CLAIMS, CHANGES, STUDY), POINTS)
    assert rows == [("generalization", "fits", "stat"), ("generalization", "extrapolates", "stat")]
    assert levels.tolist() == [[1.0, 1.0, 0.0], [1.0, 0.5, 1.0]]
    assert values[1] == ["0.7", "0.45", "0.9"]  # mean over offsets


# ---- the tiny run


@pytest.mark.workflow
def test_the_tiny_run_sets_every_check_beside_itself_at_every_point(smoke_run):
    results = smoke_run / "results"
    smoke = yaml.safe_load(SMOKE_CONFIG.read_text())
    names = [point["name"] for point in smoke["robustness"]["points"]]
    table = pd.read_parquet(results / "tables/robustness_checks.parquet")
    assert sorted(set(table["point"])) == sorted([DEFAULT_POINT, *names])
    key = ["experiment", "claim", "statistic", "offset"]
    for point in [DEFAULT_POINT, *names]:
        folder = results if point == DEFAULT_POINT else results / "robustness" / point
        claims = pd.read_parquet(folder / "tables/claims.parquet")
        claims = claims[claims["experiment"].isin(STUDY)].astype({"offset": "Int64"}).sort_values(key)
        rows = table[table["point"] == point].astype({"offset": "Int64"}).sort_values(key)
        claims, rows = claims.reset_index(drop=True), rows.reset_index(drop=True)
        # a row per (check, point), with the point's own value and outcome
        assert rows[key].equals(claims[key]), point
        assert rows["value"].equals(claims["value"]) and rows["holds"].equals(claims["holds"]), point
        assert set(claims["experiment"]) == set(STUDY)
    for name in names:  # a point trains the sweep's heads only, and runs only the study's experiments
        folder = results / "robustness" / name
        assert sorted(path.name for path in (folder / "models").iterdir()) == ["pe~learned", "pe~rope"]
        assert not (folder / "RESULTS.md").exists() and not (folder / "claims" / "shift.parquet").exists()
    mechanism = pd.read_parquet(results / "tables/robustness_mechanism.parquet")
    assert sorted(mechanism["point"]) == sorted([DEFAULT_POINT, *names])
    assert (results / "figures/robustness.png").read_bytes().startswith(b"\x89PNG")
    text = (results / "sections/robustness.md").read_text()
    assert all(f"| {name} " in text for name in names)


def test_claims_table_robustness_counts_the_points_a_claim_holds_at_and_skips_claims_the_study_cuts():
    from lengthgen.report.claims_table import robustness_of_findings
    from lengthgen.report.findings import Finding, Headline, Part

    def rows(point, holds):
        return [{"point": point, "experiment": experiment, "claim": "c", "statistic": "s", "offset": offset,
                 "kind": "evidence", "holds": held, "value": 1.0 if held else 0.0, "comparison": ">=", "threshold": 0.5,
                 "rule": ">= 0.5"}
                for experiment, offset, held in (("generalization", 1, holds[0]), ("generalization", 2, holds[1]))]

    study = pd.DataFrame(rows(DEFAULT_POINT, (True, True)) + rows("small", (True, False)) + rows("wide", (True, True)))
    run = study[study["point"] == DEFAULT_POINT].drop(columns="point")
    shift_check = {"experiment": "shift", "claim": "c", "statistic": "s", "offset": 1, "kind": "evidence", "holds": True,
                   "value": 1.0, "comparison": ">=", "threshold": 0.5, "rule": ">= 0.5"}
    headline = Headline("generalization", "c", "s", "accuracy")
    within = Finding("within", "", (Part("generalization"),), headline, "within", "generalization")
    beyond = Finding("beyond", "", (Part("generalization"), Part("shift")), headline, "beyond", "generalization")
    repeated = Finding("repeated", "", (Part("generalization"), Part("multiseed")), headline, "repeated",
                       "generalization")
    repeat_check = {**shift_check, "experiment": "multiseed"}
    robustness = robustness_of_findings(
        study, pd.concat([run, pd.DataFrame([shift_check, repeat_check])], ignore_index=True), (within, beyond, repeated))
    # Not at small (its headline fails at K=2); beyond rests on shift, not in the study; a multiseed repeat, which no
    # point runs, leaves a claim in the study, judged on its other checks.
    assert robustness == {"within": (2, 3, 0), "repeated": (2, 3, 0)}
    # A point where the claim's precondition fails counts as untestable there, not as one where it fails.
    fits = pd.DataFrame([{**row, "claim": "fits", "holds": point != "wide"}
                         for row, point in zip(rows(DEFAULT_POINT, (True, True))[:1] * 3, (DEFAULT_POINT, "small", "wide"))])
    fits["point"] = [DEFAULT_POINT, "small", "wide"]
    gated = Finding("gated", "", (Part("generalization", "fits", "precondition"), Part("generalization", "c")), headline,
                    "gated", "generalization")
    with_gate = pd.concat([study, fits], ignore_index=True)
    assert robustness_of_findings(with_gate, with_gate[with_gate["point"] == DEFAULT_POINT].drop(columns="point"),
                                  (gated,)) == {"gated": (1, 3, 1)}
