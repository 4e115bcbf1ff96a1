"""The rope_bases experiment: its order test on hand-made tables, its analysis on small rope heads, its
section and figure."""

import math

import pandas as pd
import pytest
import torch

from lengthgen.claims import with_keys
from lengthgen import dilution
from lengthgen.experiments.rope_bases import analysis as rope_bases
from lengthgen.model import HeadConfig
from lengthgen.experiments.rope_bases import figures as plots
from lengthgen.experiments.rope_bases import section as prose
from lengthgen.experiments.rope_bases.summaries import EVERY_BASE, accuracy_errors
from lengthgen.experiments.prop1.thresholds import PROP1_CLAIM_PREDICTOR
from lengthgen.experiments.rope_bases.thresholds import ORDER_MIN_ACCURACY_GAP
from lengthgen.training import init_head

SETTINGS = {"task": {"vocab_size": 5, "train_length_min": 4, "train_length_max": 8, "eval_lengths": [8, 16, 32]},
            "prop1": {"n_samples": 64}}
BASES = ("rope@base=100", "rope", "rope@base=1e6")


def prediction_table(measured: dict[str, float], predicted: dict[str, dict[str, float]], offset: int = 1) -> pd.DataFrame:
    """One seed and length per encoding: its measured accuracy, and each predictor's."""
    return pd.DataFrame([{"pe": pe, "offset": offset, "seed": 0, "length": 16, "predictor": predictor,
                          "predicted_accuracy": predicted[predictor][pe], "measured_accuracy": accuracy}
                         for pe, accuracy in measured.items() for predictor in rope_bases.ORDER_PREDICTORS])


def checks_by_predictor(table: pd.DataFrame) -> dict[str, dict]:
    checks = with_keys(rope_bases.checks({"rope_bases_prediction": table}, SETTINGS), "rope_bases", "rope_bases")
    return {row["statistic"].split(":")[0]: row for row in checks.to_dict("records")}


MEASURED = {"rope@base=100": 0.2, "rope": 0.5, "rope@base=1e6": 0.8}


def test_a_predictor_in_the_measured_order_holds_and_one_inverted_pair_fails():
    in_order = {"rope@base=100": 0.1, "rope": 0.3, "rope@base=1e6": 0.9}
    one_swapped = {"rope@base=100": 0.4, "rope": 0.3, "rope@base=1e6": 0.9}
    checks = checks_by_predictor(prediction_table(MEASURED, {PROP1_CLAIM_PREDICTOR: in_order, "ranking": one_swapped}))
    assert checks[PROP1_CLAIM_PREDICTOR]["holds"] and checks[PROP1_CLAIM_PREDICTOR]["value"] == 1.0
    assert not checks["ranking"]["holds"] and checks["ranking"]["value"] == pytest.approx(2 / 3)


def test_pairs_closer_than_the_gap_decide_nothing():
    close = {"rope@base=100": 0.5, "rope": 0.5 + ORDER_MIN_ACCURACY_GAP / 2, "rope@base=1e6": 0.9}
    # The predictor inverts the close pair only: it still orders every decided pair right.
    inverted_close = {"rope@base=100": 0.6, "rope": 0.55, "rope@base=1e6": 0.95}
    checks = checks_by_predictor(prediction_table(close, {name: inverted_close for name in rope_bases.ORDER_PREDICTORS}))
    assert checks["ranking"]["holds"]
    assert "2 of 3 pairs" in checks["ranking"]["rule"]


def test_with_no_measured_order_the_check_does_not_hold():
    flat = dict.fromkeys(BASES, 0.5)
    checks = checks_by_predictor(prediction_table(flat, {name: MEASURED for name in rope_bases.ORDER_PREDICTORS}))
    assert math.isnan(checks["ranking"]["value"]) and not checks["ranking"]["holds"]


def test_order_table_ranks_each_source():
    order = rope_bases.mean_accuracy_past_range(prediction_table(MEASURED, {
        PROP1_CLAIM_PREDICTOR: MEASURED, "ranking": {"rope@base=100": 0.9, "rope": 0.5, "rope@base=1e6": 0.1}}))
    ranks = order.set_index(["source", "pe"])["rank"]
    assert ranks[("measured", "rope@base=1e6")] == 1 and ranks[("measured", "rope@base=100")] == 3
    assert ranks[("ranking", "rope@base=100")] == 1


def test_only_plain_rope_at_a_base_counts():
    assert [pe for pe in ("rope", "rope@base=100", "randomized_rope", "learned", "ropey") if rope_bases.is_rope_base(pe)] \
        == ["rope", "rope@base=100"]


def small_rope_head(base: float, seed: int):
    model = init_head(HeadConfig(5, 8, "rope", trained_positions=256, rope_base=base), seed)
    with torch.no_grad():
        model.query.weight.mul_(4.0)
        model.key.weight.mul_(4.0)
    return model.eval()


@pytest.fixture(scope="module")
def analyzed():
    heads = [({"pe": pe, "offset": 1, "seed": seed}, small_rope_head(base, seed))
             for pe, base in zip(BASES, (100.0, 1e4, 1e6)) for seed in (0, 1)]
    evaluations = pd.DataFrame([{"experiment": "variants", "pe": run["pe"], "offset": 1, "seed": run["seed"],
                                 "length": length, "accuracy": 0.1 * index + length / 1000}
                                for index, (run, _) in enumerate(heads) for length in SETTINGS["task"]["eval_lengths"]])
    return heads, rope_bases.analyze({"models": heads, "evaluations": evaluations}, SETTINGS)


def test_analysis_predicts_each_head_past_the_range_as_prop1_does(analyzed):
    heads, tables = analyzed
    table = tables["rope_bases_prediction"]
    assert sorted(table["length"].unique()) == [16, 32]  # past train_length_max = 8 only
    run, model = heads[2]
    expected = dilution.predict_dilution(model, 1, run["seed"], [16, 32], 64, with_exact=False)
    expected = expected.set_index(["length", "predictor"])["predicted_accuracy"]
    rows = table[(table["pe"] == run["pe"]) & (table["seed"] == run["seed"])]
    for row in rows.itertuples():
        assert row.predicted_accuracy == expected[(row.length, row.predictor)]
        assert row.measured_accuracy == pytest.approx(0.1 * 2 + row.length / 1000)


def test_a_head_missing_from_the_evaluations_is_an_error(analyzed):
    heads, _ = analyzed
    evaluations = pd.DataFrame(columns=["experiment", "pe", "offset", "seed", "length", "accuracy"])
    with pytest.raises(ValueError, match="no measured accuracy"):
        rope_bases.analyze({"models": heads[:1], "evaluations": evaluations.astype({"offset": int, "seed": int,
                                                                                   "length": int})}, SETTINGS)


def test_section_and_figure_show_the_measured_and_predicted_means(analyzed):
    _, tables = analyzed
    checks = with_keys(rope_bases.checks(tables, SETTINGS), "rope_bases", "rope_bases")
    text = prose.section(tables, checks, SETTINGS)
    measured = tables["rope_bases_order"].query("source == 'measured' and pe == 'rope'")["mean_accuracy"].iloc[0]
    assert f"{measured:.3f}" in text and "figures/rope_bases.png" in text
    figure = plots.draw(tables, SETTINGS)["rope_bases"]
    lines = figure.axes[0].get_lines()
    solid = [line for line in lines if line.get_linestyle() == "-" and line.get_marker() == "o"]
    assert len(solid) == len(BASES)
    drawn = sorted(line.get_ydata()[0] for line in solid)
    table = tables["rope_bases_prediction"]
    expected = sorted(table[table["length"] == 16].groupby("pe")["measured_accuracy"].mean())
    assert drawn == pytest.approx(expected)


def test_accuracy_errors_per_offset_and_encoding_pooled_and_over_all():
    table = pd.concat([prediction_table(MEASURED, {PROP1_CLAIM_PREDICTOR: {"rope@base=100": 0.3, "rope": 0.5,
                                                                           "rope@base=1e6": 0.6},
                                                   "ranking": MEASURED}, offset=offset) for offset in (1, 2)])
    errors = accuracy_errors(table).set_index(["offset", "pe", "predictor"])
    assert errors.loc[(1, "rope@base=100", PROP1_CLAIM_PREDICTOR), "bias"] == pytest.approx(0.1)
    assert errors.loc[(2, EVERY_BASE, PROP1_CLAIM_PREDICTOR), "mae"] == pytest.approx(0.1)  # 0.1, 0, 0.2
    assert errors.loc[(2, EVERY_BASE, PROP1_CLAIM_PREDICTOR), "bias"] == pytest.approx(-0.1 / 3)
    pooled = errors.xs(EVERY_BASE, level="pe")
    pooled = pooled[pooled.index.get_level_values("offset").isna()]  # over every offset
    assert pooled.loc[(slice(None), PROP1_CLAIM_PREDICTOR), "n"].item() == 6
    assert pooled.loc[(slice(None), "ranking"), "mae"].item() == 0.0


def test_the_section_says_which_account_errs_less_and_where_one_orders_a_pair_wrong():
    swapped = {"rope@base=100": 0.4, "rope": 0.3, "rope@base=1e6": 0.9}  # 100 above rope, measured below
    table = prediction_table(MEASURED, {PROP1_CLAIM_PREDICTOR: MEASURED, "ranking": swapped})
    tables = {"rope_bases_prediction": table, "rope_bases_order": rope_bases.mean_accuracy_past_range(table)}
    checks = with_keys(rope_bases.checks(tables, SETTINGS), "rope_bases", "rope_bases")
    text = prose.section(tables, checks, SETTINGS)
    assert (f"`{PROP1_CLAIM_PREDICTOR}` predicts the accuracy with the lower MAE, 0.000 against `ranking`'s 0.167; "
            "it is the lower in 3 of the 3 (offset, encoding) cells.") in text
    assert (f"`{PROP1_CLAIM_PREDICTOR}` orders every decided pair as measured; `ranking` gets the order wrong at "
            "K=1 (rope@base=100 predicted at least as high as rope).") in text
    rows = [line.replace(" ", "").split("|")[1:-1] for line in text.splitlines() if line.startswith("| all")]
    assert rows == [["all", "everybase", "0.000(+0.000)", "0.167(+0.033)"]]


def test_the_section_says_where_no_pair_is_decided():
    flat = dict.fromkeys(BASES, 0.5)
    table = prediction_table(flat, {name: MEASURED for name in rope_bases.ORDER_PREDICTORS})
    assert prose.order_sentence(rope_bases.mean_accuracy_past_range(table)).endswith(
        "; at K=1 no pair is decided, so no account is tested there.")


def test_the_section_says_when_the_order_tells_no_account_apart():
    table = prediction_table(MEASURED, {name: MEASURED for name in rope_bases.ORDER_PREDICTORS})
    assert prose.order_sentence(rope_bases.mean_accuracy_past_range(table)) == (
        "Every account orders every decided pair as measured, at every offset: the order does not tell the accounts "
        "apart.")
