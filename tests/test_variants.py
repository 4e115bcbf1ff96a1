"""The variants experiment: classes by the fixed rules, the account's checks, the generated section, the figure."""

import pandas as pd
import pytest
import torch

from lengthgen.checks import seed_sums
from lengthgen.checks.check import with_keys
from lengthgen.models.encodings import ENCODINGS, EncodingConfig, build_encoding
from lengthgen.experiments.variants import analysis as variants
from lengthgen.experiments.variants.analysis import classify
from lengthgen.models.head import HeadConfig
from lengthgen.experiments.variants.figures import draw
from lengthgen.experiments.variants.summaries import mechanisms, predictions
from lengthgen.experiments.variants.section import FIRE_DEFAULT_THRESHOLD, FIRE_THRESHOLDS, fire_markdown, left_out_markdown, section
from lengthgen.runtime.seeding import generator
from lengthgen.experiments.variants.tables import VARIANTS_CLASSES, VARIANTS_FIRE_THRESHOLDS, VARIANTS_SUMMARY
from lengthgen.tables.io import to_arrow
from lengthgen.experiments.variants.thresholds import EXTRAPOLATES_ACCURACY, VARIANT_LENGTH_FACTOR
from lengthgen.checks.shared_rules import ABOVE_CHANCE_FACTOR, CHANCE_TOLERANCE, NEAR_PERFECT
from lengthgen.training.range_fit import FIT_ACCURACY
from lengthgen.training.loop import init_head
from lengthgen.checks.fitted_runs import fit_counts, runs_that_fit
from lengthgen.science.variant_predictions import (COLLAPSES, DECAYS, EXTRAPOLATES, FAILS, NO_COLLAPSE, NO_PREDICTION, at_length, mechanism,
                                           predicted_class)

VOCAB, TRAIN_MAX = 8, 8
CHANCE = 1 / VOCAB


@pytest.mark.parametrize("fit_share, in_range, far, expected", [
    (1.0, NEAR_PERFECT - 0.01, 1.0, FAILS),  # not fitting the range decides first
    (0.5, 1.0, 1.0, FAILS),  # half the seeds fitting is not most of them
    (0.0, 1.0, 1.0, FAILS),  # no seed fits: never classed past the range, whatever its mean accuracy
    (0.6, 1.0, EXTRAPOLATES_ACCURACY, EXTRAPOLATES),
    (1.0, 1.0, EXTRAPOLATES_ACCURACY - 0.01, DECAYS),
    (1.0, 1.0, CHANCE + CHANCE_TOLERANCE + 0.01, DECAYS),
    (1.0, 1.0, CHANCE + CHANCE_TOLERANCE, COLLAPSES),
    (1.0, 1.0, 0.0, COLLAPSES),  # below chance is no better
])
def test_classes_follow_the_rules_at_their_boundaries(fit_share, in_range, far, expected):
    assert classify(fit_share, in_range, far, CHANCE) == expected


def test_fitting_the_range_has_one_bar_the_training_tables():
    assert NEAR_PERFECT == FIT_ACCURACY == 0.99


@pytest.mark.parametrize("in_range", [0.95, 0.999])
def test_a_variants_cell_with_no_fitted_seed_is_not_classed_past_the_range(in_range):
    """alibi@slope=0.5 at K=1 had held-out accuracy 0.97-0.98 on all its seeds and 0.999 past the range: it fails in
    range, whatever its evaluation accuracy, and the account's prediction for it does not match."""
    runs = {("rope", 1): (in_range, 0.999)}
    inputs = {"evaluations": evaluations(runs), "fire_models": []}
    inputs["fits"] = all_fitted(inputs["evaluations"]).assign(fitted=False)
    classes = variants.analyze(inputs, SETTINGS)["variants_classes"]
    assert classes[["category", "n_seeds", "n_fitted"]].values.tolist() == [[FAILS, 2, 0]]
    prediction = checks_of(inputs).query("kind == 'evidence'").iloc[0]
    assert (prediction["value"], prediction["holds"]) == (0.0, False)
    assert "seeds fitting the range 0%" in prediction["rule"]


def evaluations(far_by_run: dict) -> pd.DataFrame:
    """Two seeds per (pe, offset); lengths 8 (in range, accuracy from the tuple) and 32 (4x)."""
    rows = []
    for (pe, offset), (in_range, far) in far_by_run.items():
        for seed in (0, 1):
            rows.append(dict(experiment="generalization", pe=pe, offset=offset, seed=seed, length=8, in_training_range=True,
                             accuracy=in_range, target_attention=0.0, loss=0.0))
            rows.append(dict(experiment="generalization", pe=pe, offset=offset, seed=seed, length=32, in_training_range=False,
                             accuracy=far, target_attention=0.0, loss=0.0))
    return pd.DataFrame(rows)


RUNS = {("rope", 1): (1.0, 0.95), ("rope", 2): (1.0, 0.5), ("learned", 1): (1.0, 0.12), ("learned", 2): (1.0, 0.13),
        ("alibi_learned", 1): (1.0, 1.0), ("alibi_learned", 2): (0.4, 0.3)}
ORDER = ["rope", "learned", "alibi_learned"]
DESCRIPTIONS = {pe: mechanism(pe) for pe in ORDER}


SETTINGS = {"task": {"vocab_size": VOCAB, "train_length_min": 4, "train_length_max": TRAIN_MAX,
                     "eval_lengths": [8, 32]}, "variants": {"pe": ORDER}}


def all_fitted(runs: pd.DataFrame) -> pd.DataFrame:
    """The range fit of every run of ``runs``: each fits its range."""
    return runs[["pe", "offset", "seed"]].drop_duplicates().assign(fitted=True)


def checks_of(inputs: dict, settings=SETTINGS) -> pd.DataFrame:
    return with_keys(variants.checks({name: inputs[name] for name in variants.CHECKED}, settings), "variants",
                     "variants")


def analysis(runs=RUNS, settings=SETTINGS):
    """(inputs, tables, checks) of the experiment on ``runs``, every run fitting its range."""
    inputs = {"evaluations": evaluations(runs), "fire_models": []}
    inputs["fits"] = all_fitted(inputs["evaluations"])
    return inputs, variants.analyze(inputs, settings), checks_of(inputs, settings)


def checked_cells(checks: pd.DataFrame) -> list[tuple[str, int]]:
    return list(zip(checks["statistic"].str.split(":").str[0], checks["offset"]))


def test_each_encoding_and_offset_gets_its_class():
    _, tables, _ = analysis()
    classes = tables["variants_classes"]
    to_arrow(classes, VARIANTS_CLASSES)
    to_arrow(tables["variants_summary"], VARIANTS_SUMMARY)
    got = dict(zip(zip(classes["pe"], classes["offset"]), classes["category"]))
    assert got == {("rope", 1): EXTRAPOLATES, ("rope", 2): DECAYS, ("learned", 1): COLLAPSES,
                   ("learned", 2): COLLAPSES, ("alibi_learned", 1): EXTRAPOLATES, ("alibi_learned", 2): FAILS}


def test_checks_cover_exactly_the_cells_the_account_predicts():
    _, _, checks = analysis()
    # No check for alibi_learned K=1: a monotone term at K=1 gets no prediction (its slope decides).
    assert checked_cells(checks) == [("alibi_learned", 2), ("learned", 1), ("learned", 2), ("rope", 1), ("rope", 2)]
    # A monotone term that fits K >= 2 would be impossible: that check tests the code, not the account.
    assert checks.set_index("offset").loc[2, "kind"].tolist() == ["sanity", "evidence", "evidence"]
    evidence = checks[checks["kind"] == "evidence"]
    assert set(evidence["claim"]) == {"prediction matches"}
    assert evidence["statistic"].tolist() == [f"{pe}: measured class matches the predicted one ({predicted})"
                                              for pe, predicted in [("learned", COLLAPSES)] * 2 + [("rope", NO_COLLAPSE)] * 2]
    assert checks["holds"].all()


def test_check_names_carry_no_setting():
    """Under another vocabulary and training range only values and rule texts change, not the keys."""
    other = {"task": {**SETTINGS["task"], "vocab_size": 16, "train_length_max": 4}, "variants": SETTINGS["variants"]}
    runs = {**RUNS, ("alibi_learned", 2): (0.4, 0.3)}
    base = analysis(runs)[2]
    moved = evaluations(runs).assign(length=lambda frame: frame["length"].map({8: 4, 32: 16}))
    changed = checks_of({"evaluations": moved, "fits": all_fitted(moved)}, other)
    keys = ["claim", "statistic", "offset"]
    assert base[keys].equals(changed[keys])
    assert not base["rule"].equals(changed["rule"])


def test_a_class_other_than_the_predicted_one_or_a_monotone_term_that_fits_fails_its_check():
    _, _, checks = analysis({**RUNS, ("rope", 2): (1.0, 0.13), ("learned", 1): (1.0, 0.95),
                             ("alibi_learned", 2): (0.995, 0.9)})
    assert checked_cells(checks[~checks["holds"]]) == [("alibi_learned", 2), ("learned", 1), ("rope", 2)]
    evidence = checks[checks["kind"] == "evidence"]
    assert checked_cells(evidence[evidence["holds"]]) == [("learned", 2), ("rope", 1)]


def test_a_relative_encoding_that_fails_in_range_does_not_match_its_prediction():
    """The prediction for an offset-only, fully trained logit includes fitting the range."""
    _, _, checks = analysis({**RUNS, ("rope", 1): (0.5, 0.5)})
    assert checked_cells(checks[~checks["holds"]]) == [("rope", 1)]


def test_no_prediction_is_no_confirmation():
    _, _, checks = analysis({("alibi_learned", 1): (1.0, 1.0)})
    evidence = checks[checks["kind"] == "evidence"]
    assert len(evidence) and not evidence["holds"].any()


# The prediction per encoding at K = 1, 2, 3, as the rules of lengthgen/science/variant_predictions.py give it for its properties.
PREDICTED = {
    "rope": [NO_COLLAPSE] * 3, "rope@base=100": [NO_COLLAPSE] * 3,
    "learned": [COLLAPSES] * 3, "fire": [COLLAPSES] * 3, "fire_fixed": [COLLAPSES] * 3,
    "nope": [FAILS] * 3, "alibi": [NO_PREDICTION, FAILS, FAILS],
    "alibi@slope=0.5": [NO_PREDICTION, FAILS, FAILS], "alibi_learned": [NO_PREDICTION, FAILS, FAILS],
    "randomized_rope": [NO_PREDICTION, FAILS, FAILS], "randomized_learned": [NO_PREDICTION, FAILS, FAILS],
    "sinusoidal": [NO_PREDICTION] * 3, "t5": [NO_PREDICTION] * 3,
}


@pytest.mark.parametrize("pe", sorted(PREDICTED))
def test_the_prediction_is_the_rules_of_the_registry_s_properties(pe):
    assert [predicted_class(mechanism(pe), offset) for offset in (1, 2, 3)] == PREDICTED[pe]


def test_the_prediction_reads_fire_fixed_as_offset_only_up_to_its_threshold():
    """FIRE with L fixed at 512 is a function of the offset alone on sequences of at most 512 tokens: its parameters
    untrained past the range, no rule predicts its class there; past 512 it is read as absolute positions."""
    fixed = mechanism("fire_fixed")
    assert [predicted_class(at_length(fixed, length), 2) for length in (128, 512, 1024)] == [
        NO_PREDICTION, NO_PREDICTION, COLLAPSES]
    assert predicted_class(at_length(mechanism("fire_fixed@threshold=64"), 128), 2) == COLLAPSES
    assert predicted_class(at_length(mechanism("fire"), 128), 2) == COLLAPSES  # L learned: no length it holds to
    assert at_length(mechanism("rope"), 10 ** 6)["offset_only"]


def test_the_impossibilities_are_sanity_checks_and_every_other_prediction_evidence():
    """No position term (NoPE, at K = 1 too) and random ids at K >= 2 can no more fit the range than a monotone
    term at K >= 2: those checks test the code. A randomized encoding at K = 1 gets no check."""
    runs = {("nope", 1): (0.16, 0.1), ("nope", 2): (0.16, 0.1), ("randomized_rope", 1): (0.92, 0.8),
            ("randomized_rope", 2): (0.35, 0.12), ("randomized_learned", 3): (0.28, 0.09), ("rope", 1): (1.0, 0.7)}
    settings = {**SETTINGS, "variants": {"pe": ["nope", "randomized_rope", "randomized_learned", "rope"]}}
    _, _, checks = analysis(runs, settings)
    kinds = dict(zip(checked_cells(checks), checks["kind"]))
    assert kinds == {("nope", 1): "sanity", ("nope", 2): "sanity", ("randomized_rope", 2): "sanity",
                     ("randomized_learned", 3): "sanity", ("rope", 1): "evidence"}
    claims = dict(zip(checked_cells(checks), checks["claim"]))
    assert claims[("nope", 1)] == "no position term: cannot select any offset"
    assert claims[("randomized_rope", 2)] == "position ids drawn at random: cannot select K >= 2"
    assert checks["holds"].all()
    fitting = analysis({**runs, ("nope", 1): (0.995, 0.9)}, settings)[2]
    assert checked_cells(fitting[~fitting["holds"]]) == [("nope", 1)]  # a NoPE head that fits the range is a bug
    assert (fitting.loc[~fitting["holds"], "kind"] == "sanity").all()  # ... a sanity check, in no claim


@pytest.mark.parametrize("pe", sorted(ENCODINGS))
def test_a_position_term_is_whether_one_repeated_token_gets_different_logits_at_different_keys(pe):
    """The catalog's position_term (read from the hooks a class defines) against the code: with every token the
    same, the logits over the keys vary, for some parameters, exactly when the encoding has a position term."""
    tokens = torch.full((1, 24), 3)
    varies = []
    for seed in range(3):
        model = init_head(HeadConfig(vocab_size=VOCAB, d_model=16, pe=pe, trained_positions=64), seed).double()
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.copy_(torch.randn(parameter.shape, generator=generator("parameters", seed)))
        positions = model.encoding.sample_positions(*tokens.shape, generator("positions", seed))
        logits = model.attention(tokens, 0, positions)[0][0]
        varies.append(bool((logits - logits[0]).abs().max() > 1e-9))
    assert any(varies) == mechanism(pe)["position_term"]


def test_the_fire_sentence_states_each_fire_s_threshold_as_the_registry_has_it():
    fires = {name: build_encoding(name, EncodingConfig(d_model=8, trained_positions=16)) for name in FIRE_THRESHOLDS}
    assert {name: encoding.learned_threshold for name, encoding in fires.items()} == {"fire": True, "fire_fixed": False}
    assert all(encoding.initial_threshold.item() == FIRE_DEFAULT_THRESHOLD for encoding in fires.values())
    text = fire_markdown(["rope", "fire", "fire_fixed@threshold=64"])[0]
    assert "`fire` learns its threshold L from 512" in text and "`fire_fixed@threshold=64` keeps its threshold L at 64" in text
    assert "names no FIRE setting" in text
    assert fire_markdown(["rope", "learned"]) == []


def test_the_prediction_reads_the_properties_alone():
    """Every combination of the five properties gets a prediction, the same whatever else the description holds."""
    names = ("offset_only", "trained_past_range", "monotone_in_offset", "random_positions", "position_term")
    for flags in range(32):
        mechanism = {name: bool(flags >> bit & 1) for bit, name in enumerate(names)}
        for offset in (1, 2, 5):
            prediction = predicted_class(mechanism, offset)
            assert prediction in (NO_COLLAPSE, COLLAPSES, FAILS, NO_PREDICTION)
            assert predicted_class({**mechanism, "summary": "anything"}, offset) == prediction


def test_the_section_flags_seeds_that_disagree_about_the_class():
    settings = {**SETTINGS, "variants": {"pe": ["rope"]}}

    def predictions_text(runs):
        inputs = {"evaluations": runs, "fits": all_fitted(runs), "fire_models": []}
        text = section({**inputs, **variants.analyze(inputs, settings)}, checks_of(inputs, settings), settings)
        return text.split("**Predictions**")[1]

    agreeing = evaluations({("rope", 2): (1.0, 0.5)})
    disagreeing = agreeing.copy()
    disagreeing.loc[(disagreeing["seed"] == 0) & (disagreeing["length"] == 32), "accuracy"] = 0.1
    assert "the seeds disagree" not in predictions_text(agreeing)
    assert "the seeds disagree" in predictions_text(disagreeing)


def test_section_reports_the_measured_numbers_classes_and_properties():
    inputs, tables, checks = analysis()
    text = section({**inputs, **tables}, checks, SETTINGS)
    assert "0.500 [0.500, 0.500]" in text  # rope K=2 at n=32
    assert DESCRIPTIONS["learned"]["summary"] in text and "figures/pe_variants.png" in text
    predictions_table = text.split("**Predictions**")[1].split("**Disagreements**")[0]
    lines = [[cell.strip() for cell in line.strip("|").split("|")]
             for line in predictions_table.splitlines() if line.startswith("| ")]
    assert lines[0] == ["encoding", "K", "accuracy at n=32", "measured class", "predicted class", "match"]
    rows = {tuple(line[:2]): line for line in lines[1:]}
    assert rows[("rope", "1")][2:4] == ["0.950 [0.950, 0.950]", EXTRAPOLATES]
    assert rows[("rope", "2")][2:] == ["0.500 [0.500, 0.500]", DECAYS, NO_COLLAPSE, "yes"]
    assert rows[("learned", "1")][3:] == [COLLAPSES, COLLAPSES, "yes"]
    assert rows[("alibi_learned", "1")][3:] == [EXTRAPOLATES, NO_PREDICTION, "-"]
    assert "0 of 5 predicted cells measure a class their prediction does not allow." in text
    assert "Sanity checks" in text.split("**Disagreements**")[1]  # the impossibility, shown apart from the evidence
    # the classes' "extrapolates" is not the first claim's: that one's bar (5x chance at 4x) is said beside them
    chance = 1 / SETTINGS["task"]["vocab_size"]
    assert (f'"extrapolate" (a mean of at least {ABOVE_CHANCE_FACTOR:g}x chance, {ABOVE_CHANCE_FACTOR * chance:.3f}, '
            f'at {VARIANT_LENGTH_FACTOR}x)') in text


def test_the_section_names_each_cell_whose_class_disagrees_with_its_prediction_and_why():
    settings = {**SETTINGS, "variants": {"pe": ["rope", "alibi_learned"]}}
    runs = {("rope", 1): (1.0, 0.95), ("rope", 2): (1.0, 0.1), ("alibi_learned", 2): (0.99, 0.9)}
    inputs, tables, checks = analysis(runs, settings)
    text = section({**inputs, **tables}, checks, settings).split("**Disagreements**")[1].split("\n\n")[0]
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert lines == [
        f"- `rope` at K=2: measured *{COLLAPSES}*, predicted *{NO_COLLAPSE}* (offset only, every parameter trained: "
        "past the range only the number of keys changes).",
        f"- `alibi_learned` at K=2: measured *{EXTRAPOLATES}*, predicted *{FAILS}* (position term monotone in the "
        "offset: cannot select K >= 2). A head of this mechanism cannot fit its range there, so the declaration "
        "(`pytest tests/test_encodings.py -k alibi_learned`) or the encoding is wrong."]
    assert text.startswith(": 2 of 3 predicted cells measure a class their prediction does not allow:")
    agreeing = analysis({("rope", 2): (1.0, 0.5)}, {**SETTINGS, "variants": {"pe": ["rope"]}})
    assert "**Disagreements**: 0 of 1 predicted cells measure a class their prediction does not allow." in section(
        {**agreeing[0], **agreeing[1]}, agreeing[2], {**SETTINGS, "variants": {"pe": ["rope"]}})


def test_the_figure_shows_each_cells_mean_accuracy_and_class():
    _, tables, _ = analysis()
    figure = draw(tables, SETTINGS)["pe_variants"]
    panels = [ax for ax in figure.axes if ax.get_images()]
    assert [ax.get_title().split()[2] for ax in panels] == ["1", "2"]
    grid = panels[1].get_images()[0].get_array()  # K = 2: rows ORDER, columns lengths 8 and 32
    assert grid.tolist() == [[1.0, 0.5], [1.0, 0.13], [0.4, 0.3]]
    labels = [text.get_text() for text in panels[1].texts if not text.get_text()[0].isdigit()]
    assert labels == [DECAYS, COLLAPSES, FAILS]
    assert [tick.get_text() for tick in panels[0].get_xticklabels()] == ["8*", "32"]


def test_a_cell_is_classified_on_the_seeds_that_fit_the_range_when_most_do():
    """One seed of three that does not fit the range is left out (a training failure must not make the
    class); where most seeds do not fit, every seed counts and the cell fails in range."""
    rows = []
    for pe, in_range_by_seed in (("fire", (1.0, 1.0, 0.25)), ("alibi", (0.3, 0.3, 1.0))):
        for seed, in_range in enumerate(in_range_by_seed):
            for length, accuracy, inside in ((8, in_range, True), (32, in_range * 0.9, False)):
                rows.append(dict(experiment="generalization", pe=pe, offset=2, seed=seed, length=length,
                                 in_training_range=inside, accuracy=accuracy, target_attention=0.0, loss=0.0))
    runs = pd.DataFrame(rows)
    fits = pd.DataFrame([dict(pe=pe, offset=2, seed=seed, fitted=fitted)
                         for pe, flags in (("fire", (True, True, False)), ("alibi", (False, False, True)))
                         for seed, fitted in enumerate(flags)])
    used = runs_that_fit(runs, fits)
    assert sorted(used.loc[used["pe"] == "fire", "seed"].unique()) == [0, 1]
    assert sorted(used.loc[used["pe"] == "alibi", "seed"].unique()) == [0, 1, 2]
    classes = variants.analyze({"evaluations": runs, "fits": fits, "fire_models": []}, SETTINGS)["variants_classes"]
    assert classes[["n_seeds", "n_fitted"]].values.tolist() == [[3, 1], [3, 2]]  # alibi, fire
    got = dict(zip(classes["pe"], classes["category"]))
    assert got == {"fire": EXTRAPOLATES, "alibi": FAILS}
    text = left_out_markdown(classes)
    assert "fire K=2: 1 of 3" in text and "alibi" not in text.split("Left out")[1]



# Per cell, each seed's (accuracy at 4, 8 (both in range) and 32 (4x)) and whether it fits its range. rope K=1: half
# its seeds fit, so all count and it fails in range, while most of a resample's seeds may fit and it extrapolates or
# decays; learned K=2: every seed fits, its far mean crosses chance + tolerance (0.175, a mean of four no sum of
# these far values meets exactly, which would leave the side to rounding) from one resample to another; nope
# K=1: one seed of four fits (and fits the range: the impossibility's check fails on it alone).
MIXED_RUNS = {("rope", 1): [((0.997, 0.999, 0.95), True), ((0.998, 1.0, 0.7), True), ((0.4, 0.6, 0.1), False),
                            ((0.5, 0.3, 0.12), False)],
              ("learned", 2): [((1.0, 1.0, far), True) for far in (0.11, 0.16, 0.21, 0.31)],
              ("nope", 1): [((0.995, 0.995, 0.9), True)] + [((0.2, 0.3, 0.1), False)] * 3}
MIXED_SETTINGS = {**SETTINGS, "variants": {"pe": ["rope", "learned", "nope"]}}


def mixed_inputs() -> dict[str, pd.DataFrame]:
    rows, fits = [], []
    for (pe, offset), seeds in MIXED_RUNS.items():
        for seed, (accuracies, fitted) in enumerate(seeds):
            fits.append(dict(pe=pe, offset=offset, seed=seed, fitted=fitted))
            # Seed 0 is also evaluated at 16: a seed counts once in the share of seeds that fit, whatever its rows.
            lengths = (4, 8, 32, 16) if seed == 0 else (4, 8, 32)
            rows += [dict(experiment="variants", pe=pe, offset=offset, seed=seed, length=length,
                          in_training_range=length <= TRAIN_MAX, accuracy=accuracy, target_attention=0.0, loss=0.0)
                     for length, accuracy in zip(lengths, (*accuracies, accuracies[-1]))]
    return {"evaluations": pd.DataFrame(rows), "fits": pd.DataFrame(fits)}


def test_the_checked_statistics_are_those_the_classes_are_decided_on():
    inputs = mixed_inputs()
    classes = variants.classify_variants(variants.fitted_summary(inputs["evaluations"], inputs["fits"]),
                                         fit_counts(inputs["fits"]), VOCAB, TRAIN_MAX)
    statistics = variants.class_statistics(inputs["evaluations"], inputs["fits"], TRAIN_MAX)
    assert statistics[["pe", "offset"]].values.tolist() == classes[["pe", "offset"]].values.tolist()
    assert (statistics["far_length"] == classes["far_length"]).all()
    for column in ("lowest_in_range", "far_mean"):
        assert [value.value() for value in statistics[column]] == pytest.approx(classes[column].tolist(), abs=1e-15)
    assert [share.value() for share in statistics["fit_share"]] == (classes["n_fitted"] / classes["n_seeds"]).tolist()
    # Half of rope's seeds fit: not most, so all count (lowest in range 0.72375, at length 4), and it fails in range.
    assert classes.set_index("pe").loc["rope", ["lowest_in_range", "category"]].tolist() == [pytest.approx(0.72375),
                                                                                              FAILS]
    # The checks' values are the classes' matches (both False here: rope fails in range, learned decays).
    matches = predictions(classes, mechanisms(MIXED_SETTINGS["variants"]["pe"])).set_index("pe")["matches"]
    evidence = checks_of(inputs, MIXED_SETTINGS).query("kind == 'evidence'")
    assert evidence["value"].tolist() == [float(matches["learned"]), float(matches["rope"])] == [0.0, 0.0]


def test_the_bootstrap_by_seed_sums_redoes_the_fit_filter_and_the_class_on_every_resample():
    """Seed sums against recomputing the checks on each resample, with the same draws: the same shares and
    per-seed counts, and intervals within rounding, where the fit filter and the class change between resamples."""
    from lengthgen.checks.bootstrap import seed_bootstrap

    def summed(**tables):
        return checks_of(tables, MIXED_SETTINGS)

    def recomputed(**tables):
        return summed(**tables).assign(seed_sums=None)

    inputs = mixed_inputs()
    assert summed(**inputs)["seed_sums"].notna().all()
    by_sums, redone = (seed_bootstrap(claims_of, inputs, resamples=200, seed=0) for claims_of in (summed, recomputed))
    exact = [column for column in by_sums.columns if column not in ("spread_low", "spread_high")]
    pd.testing.assert_frame_equal(by_sums[exact], redone[exact])
    for column in ("spread_low", "spread_high"):
        assert by_sums[column].tolist() == pytest.approx(redone[column].tolist(), abs=1e-12)
    assert by_sums["holds_fraction"].between(0, 1, inclusive="neither").all()  # each outcome varies: both compared
    # learned: its seeds far above chance; nope: the seed that fits; rope: the seeds that do not fit.
    assert by_sums["seeds_failing"].tolist() == [2, 1, 2]


def test_a_head_at_exactly_the_fit_bar_fits_its_range():
    assert classify(1.0, NEAR_PERFECT, 1.0, CHANCE) == EXTRAPOLATES


def summary_rows(pe: str, offset: int, means: dict[int, float], train_max: int = TRAIN_MAX) -> list[dict]:
    """A hand-written ``variants_summary`` cell: mean per length, interval mean -+ 0.1 (0.05 at 4x)."""
    return [{"pe": pe, "offset": offset, "length": length, "in_training_range": length <= train_max, "mean": mean,
             "ci_low": mean - (0.05 if length == 4 * train_max else 0.1),
             "ci_high": mean + (0.05 if length == 4 * train_max else 0.1)} for length, mean in means.items()]


def every_seed_fits(summary: pd.DataFrame) -> pd.DataFrame:
    """``fit_counts`` of one fitted seed per cell of ``summary``."""
    return summary[["pe", "offset"]].drop_duplicates().assign(n_seeds=1, n_fitted=1)


def test_a_class_is_decided_on_the_lowest_in_range_mean_and_the_mean_at_four_times_the_range():
    # Lengths out of order: the longest is 64 whatever the row order. Chance is 1/8; chance + tolerance 0.175.
    summary = pd.DataFrame(summary_rows("rope", 1, {64: 0.3, 4: 0.995, 32: 0.5, 8: 0.992, 16: 0.6})
                           + summary_rows("alibi", 2, {8: 0.999, 4: 0.991, 32: 0.2, 16: 0.4})
                           + summary_rows("alibi", 1, {4: 0.98, 8: 1.0, 32: 0.95}))
    classes = variants.classify_variants(summary, every_seed_fits(summary), VOCAB, TRAIN_MAX)
    assert classes.columns.tolist() == ["pe", "offset", "lowest_in_range", "far_length", "far_mean", "far_ci_low",
                                        "far_ci_high", "longest_length", "longest_mean", "category", "n_seeds",
                                        "n_fitted"]
    rows = classes.set_index(["pe", "offset"])
    assert rows.index.tolist() == [("alibi", 1), ("alibi", 2), ("rope", 1)]
    rope = rows.loc[("rope", 1)]
    assert (rope["lowest_in_range"], rope["far_length"], rope["far_mean"], rope["longest_length"],
            rope["longest_mean"], rope["category"]) == (0.992, 32, 0.5, 64, 0.3, DECAYS)
    assert (rope["far_ci_low"], rope["far_ci_high"]) == pytest.approx((0.45, 0.55))
    # 0.2 at 4x is above chance + tolerance (0.175) at V = 8: decays, not collapses.
    assert rows.loc[("alibi", 2), "category"] == DECAYS and rows.loc[("alibi", 2), "lowest_in_range"] == 0.991
    assert rows.loc[("alibi", 2), "longest_length"] == 32 and rows.loc[("alibi", 2), "longest_mean"] == 0.2
    assert rows.loc[("alibi", 1), "category"] == FAILS  # 0.98 at length 4, whatever the 0.95 past the range
    # At V = 4 chance is 0.25: the same 0.2 collapses.
    assert variants.classify_variants(summary, every_seed_fits(summary), 4, TRAIN_MAX).set_index(["pe", "offset"]).loc[
        ("alibi", 2), "category"] == COLLAPSES


def test_the_far_length_is_four_times_the_training_range():
    summary = pd.DataFrame(summary_rows("rope", 1, {4: 1.0, 16: 0.95, 32: 0.2}, train_max=4))
    rope = variants.classify_variants(summary, every_seed_fits(summary), VOCAB, 4).iloc[0]
    assert (rope["far_length"], rope["far_mean"], rope["category"]) == (16, 0.95, EXTRAPOLATES)


def classes_table(rows: list[tuple]) -> pd.DataFrame:
    """Rows (pe, offset, lowest_in_range, far_mean, category) of ``variants_classes``, far length 32."""
    return pd.DataFrame([{"pe": pe, "offset": offset, "lowest_in_range": lowest, "far_length": 32, "far_mean": far,
                          "category": category} for pe, offset, lowest, far, category in rows])


def constant(value: float) -> seed_sums.SeedSums:
    """``value`` as seed sums: the mean of one seed's one row."""
    return seed_sums.mean(pd.DataFrame({"seed": [0], "accuracy": [value]}), "accuracy")


def statistics_table(rows: list[tuple]) -> pd.DataFrame:
    """Rows (pe, offset, lowest_in_range, far_mean) of ``class_statistics``, constants, far length 32, every seed
    fitting its range."""
    return pd.DataFrame([{"pe": pe, "offset": offset, "far_length": 32, "fit_share": constant(1.0),
                          "lowest_in_range": constant(lowest), "far_mean": constant(far)}
                         for pe, offset, lowest, far in rows])


def plain(row: dict) -> dict:
    """A check without its seed sums (the bootstrap's), as the claims table holds it."""
    return {name: value for name, value in row.items() if name != "seed_sums"}


def test_an_evidence_check_states_the_measured_class_and_the_numbers_it_was_decided_on():
    statistics = statistics_table([("rope", 1, 0.99123, 0.5), ("learned", 2, 0.99, 0.3)])
    rope, learned = variants.variants_checks(statistics, DESCRIPTIONS, VOCAB)
    assert plain(rope) == {
        "claim": "prediction matches", "offset": 1, "value": 1.0, "comparison": "==", "threshold": 1.0,
        "statistic": f"rope: measured class matches the predicted one ({NO_COLLAPSE})",
        "rule": "measured: decays gracefully (seeds fitting the range 100%; lowest in range 0.991; n=32: 0.500, "
                "chance + 0.05 = 0.175)",
        "holds": True, "kind": "evidence", "per_seed": True}
    assert learned["statistic"] == f"learned: measured class matches the predicted one ({COLLAPSES})"
    assert (learned["value"], learned["holds"], learned["offset"]) == (0.0, False, 2)
    assert learned["rule"] == ("measured: decays gracefully (seeds fitting the range 100%; lowest in range 0.990; "
                               "n=32: 0.300, chance + 0.05 = 0.175)")
    at_sixteen = variants.variants_checks(statistics, DESCRIPTIONS, 16)[0]
    assert at_sixteen["rule"].endswith("chance + 0.05 = 0.113)")


def test_an_impossibility_is_a_sanity_check_of_the_lowest_in_range_accuracy_against_the_fit_bar():
    descriptions = {**DESCRIPTIONS, "nope": mechanism("nope")}
    statistics = statistics_table([("nope", 3, 0.16, 0.1), ("alibi_learned", 2, NEAR_PERFECT, 0.9),
                                   ("rope", 1, 1.0, 0.95)])
    nope, alibi, rope = variants.variants_checks(statistics, descriptions, VOCAB)
    assert plain(nope) == {
        "claim": "no position term: cannot select any offset", "offset": 3,
        "statistic": "nope: lowest mean accuracy in training range", "value": 0.16, "comparison": "<",
        "threshold": NEAR_PERFECT, "rule": "< 0.99 (fails in range)", "holds": True, "kind": "sanity",
        "per_seed": True}
    # A monotone term that reaches the fit bar exactly fits its range: the impossibility fails.
    assert alibi["claim"] == "position term monotone in the offset: cannot select K >= 2" and not alibi["holds"]
    assert rope["kind"] == "evidence" and rope["holds"]


def test_with_only_impossibilities_or_no_prediction_the_account_is_untested():
    descriptions = {**DESCRIPTIONS, "nope": mechanism("nope")}
    only_sanity = variants.variants_checks(statistics_table([("nope", 1, 0.2, 0.1), ("alibi_learned", 1, 1.0, 1.0)]),
                                           descriptions, VOCAB)
    assert [row["kind"] for row in only_sanity] == ["sanity", "evidence"]
    assert only_sanity[1] == {"claim": "the account makes a prediction", "offset": None,
                              "statistic": "number of encodings and offsets it applies to", "value": 0.0,
                              "comparison": ">=", "threshold": 1.0, "rule": ">= 1", "holds": False,
                              "kind": "evidence", "per_seed": True}
    with_evidence = variants.variants_checks(statistics_table([("rope", 1, 1.0, 1.0)]), DESCRIPTIONS, VOCAB)
    assert [row["claim"] for row in with_evidence] == ["prediction matches"]


def test_predictions_set_the_predicted_class_beside_the_measured_one():
    classes = classes_table([("rope", 1, 1.0, 0.5, DECAYS), ("learned", 1, 1.0, 0.5, DECAYS),
                             ("alibi_learned", 1, 1.0, 1.0, EXTRAPOLATES), ("alibi_learned", 2, 0.3, 0.2, FAILS)])
    table = predictions(classes, DESCRIPTIONS)
    assert table["predicted"].tolist() == [NO_COLLAPSE, COLLAPSES, NO_PREDICTION, FAILS]
    assert table["matches"].tolist() == [True, False, None, True]
    assert table["category"].tolist() == classes["category"].tolist()
    assert mechanisms(["rope", "nope"]) == {"rope": mechanism("rope"), "nope": mechanism("nope")}


def fire_head(seed: int, threshold_scale: float):
    """A ``fire`` head at its seeded init with its threshold multiplier s set by hand: L = |s| x 512."""
    model = init_head(HeadConfig(vocab_size=VOCAB, d_model=16, pe="fire", trained_positions=64), seed).double()
    with torch.no_grad():
        model.encoding.threshold_scale.fill_(threshold_scale)
    return model


def test_each_fire_model_s_learned_threshold_is_read_from_the_model_and_set_beside_its_prediction():
    # L = 0.01 x 512 = 5.12, below the training range; L = |-0.125| x 512 = 64, past the far length 32.
    heads = [({"pe": "fire", "offset": 2, "seed": seed}, fire_head(seed, scale)) for seed, scale in ((0, 0.01),
                                                                                                      (1, -0.125))]
    settings = {**SETTINGS, "variants": {"pe": [*ORDER, "fire"]}}
    inputs = {"evaluations": evaluations({**RUNS, ("fire", 2): (1.0, 0.1)}), "fire_models": heads}
    inputs["fits"] = all_fitted(inputs["evaluations"])
    tables = variants.analyze(inputs, settings)
    thresholds = tables["variants_fire_thresholds"]
    to_arrow(thresholds, VARIANTS_FIRE_THRESHOLDS)  # the declared schema holds it
    assert thresholds[["seed", "initial_threshold"]].values.tolist() == [[0, 512.0], [1, 512.0]]
    assert thresholds["learned_threshold"].tolist() == pytest.approx([5.12, 64.0])
    # The table's L is where the model's bias stops being a function of the offset alone.
    encoding = heads[0][1].encoding
    with torch.no_grad():
        bias = encoding.logit_bias(torch.arange(8.0, dtype=torch.float64), torch.arange(8.0, dtype=torch.float64))
    assert bias[4, 2] == pytest.approx(bias[5, 3].item()) and bias[7, 5] != pytest.approx(bias[4, 2].item())
    text = section({**inputs, **tables}, checks_of(inputs, settings), settings).split("**FIRE's learned threshold.**")[1]
    assert "L at 5.1 to 64.0 over its 2 models (from 512)" in text
    assert "offset only at n=32, where the class is read, in 1 of 2 models" in text
    assert "training range (n <= 8) in 1" in text and "the prediction of 1 of 2 models is the one above" in text
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| fire ")]
    assert rows == [["fire", "2", "0", "5.1", COLLAPSES, COLLAPSES], ["fire", "2", "1", "64.0", NO_PREDICTION, COLLAPSES]]
    one = {**inputs, "fire_models": heads[1:]}
    assert "L at 64.0 over its 1 model (from 512)" in section({**one, **variants.analyze(one, settings)},
                                                             checks_of(one, settings), settings)
    assert "FIRE's learned threshold" not in section({**inputs, **variants.analyze({**inputs, "fire_models": []},
                                                                                     settings)},
                                                      checks_of(inputs, settings), settings)
