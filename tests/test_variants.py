"""The variants experiment: classes by the fixed rules, the account's checks, the generated section, the figure."""

import pandas as pd
import pytest

from lengthgen.claims import verdict
from lengthgen.encodings import encoding_description
from lengthgen.experiments.variants import (COLLAPSES, DECAYS, EXTRAPOLATES, FAILS, classify, classify_variants,
                                            explanation, left_out_markdown, section_markdown, summarize_variants,
                                            variants_checks)
from lengthgen.plots.variants import plot_variants
from lengthgen.rules import CHANCE_TOLERANCE, EXTRAPOLATES_ACCURACY, VARIANT_FIT_ACCURACY
from lengthgen.training_report import fit_counts, runs_that_fit

VOCAB, TRAIN_MAX = 8, 8
CHANCE = 1 / VOCAB


@pytest.mark.parametrize("in_range, far, expected", [
    (VARIANT_FIT_ACCURACY - 0.01, 1.0, FAILS),  # not fitting the range decides first
    (1.0, EXTRAPOLATES_ACCURACY, EXTRAPOLATES),
    (1.0, EXTRAPOLATES_ACCURACY - 0.01, DECAYS),
    (1.0, CHANCE + CHANCE_TOLERANCE + 0.01, DECAYS),
    (1.0, CHANCE + CHANCE_TOLERANCE, COLLAPSES),
    (1.0, 0.0, COLLAPSES),  # below chance is no better
])
def test_classes_follow_the_rules_at_their_boundaries(in_range, far, expected):
    assert classify(in_range, far, CHANCE) == expected


def evaluations(far_by_run: dict) -> pd.DataFrame:
    """Two seeds per (pe, offset); lengths 8 (in range, accuracy from the tuple) and 32 (4x)."""
    rows = []
    for (pe, offset), (in_range, far) in far_by_run.items():
        for seed in (0, 1):
            rows.append(dict(experiment="base", pe=pe, offset=offset, seed=seed, length=8, in_training_range=True,
                             accuracy=in_range, target_attention=0.0, loss=0.0))
            rows.append(dict(experiment="base", pe=pe, offset=offset, seed=seed, length=32, in_training_range=False,
                             accuracy=far, target_attention=0.0, loss=0.0))
    return pd.DataFrame(rows)


RUNS = {("rope", 1): (1.0, 0.95), ("rope", 2): (1.0, 0.5), ("learned", 1): (1.0, 0.12), ("learned", 2): (1.0, 0.13),
        ("alibi_learned", 1): (1.0, 1.0), ("alibi_learned", 2): (0.4, 0.3)}
ORDER = ["rope", "learned", "alibi_learned"]
DESCRIPTIONS = {pe: encoding_description(pe) for pe in ORDER}


def all_fitted(classes: pd.DataFrame) -> pd.DataFrame:
    return classes.assign(n_seeds=2, n_fitted=2)


def analysis(runs=RUNS):
    summary = summarize_variants(evaluations(runs))
    classes = all_fitted(classify_variants(summary, VOCAB, TRAIN_MAX))
    return summary, classes, variants_checks(classes, DESCRIPTIONS, VOCAB)


def test_each_encoding_and_offset_gets_its_class():
    _, classes, _ = analysis()
    got = dict(zip(zip(classes["pe"], classes["offset"]), classes["category"]))
    assert got == {("rope", 1): EXTRAPOLATES, ("rope", 2): DECAYS, ("learned", 1): COLLAPSES,
                   ("learned", 2): COLLAPSES, ("alibi_learned", 1): EXTRAPOLATES, ("alibi_learned", 2): FAILS}


def test_checks_cover_exactly_the_cells_the_account_predicts():
    _, _, checks = analysis()
    # offset-only and trained: rope at both offsets, alibi_learned where it fits (K=1); monotone: alibi_learned K=2.
    assert [statistic.split(":")[0] for statistic in checks["statistic"]] == [
        "alibi_learned, K=1", "alibi_learned, K=2", "rope, K=1", "rope, K=2"]
    assert checks["holds"].all() and verdict(checks) == "confirmed"


def test_a_relative_encoding_that_collapses_or_a_monotone_one_that_fits_fails_its_check():
    _, _, checks = analysis({**RUNS, ("rope", 2): (1.0, 0.13), ("alibi_learned", 2): (0.95, 0.9)})
    failing = checks.loc[~checks["holds"], "statistic"].str.split(":").str[0].tolist()
    assert failing == ["alibi_learned, K=2", "rope, K=2"] and verdict(checks) == "mixed"


def test_no_prediction_is_no_confirmation():
    summary = summarize_variants(evaluations({("learned", 1): (1.0, 0.12)}))
    checks = variants_checks(classify_variants(summary, VOCAB, TRAIN_MAX), DESCRIPTIONS, VOCAB)
    assert verdict(checks) == "not confirmed"


def test_the_explanation_follows_the_mechanism_and_the_class():
    rope, learned, alibi = (encoding_description(pe) for pe in ("rope", "learned", "alibi"))
    assert "dilution" in explanation(rope, DECAYS, 2)
    assert "does not explain" in explanation(rope, COLLAPSES, 2)  # the account cannot claim a collapse it predicts against
    assert "absolute positions" in explanation(learned, COLLAPSES, 1) and "initialization" in explanation(learned, COLLAPSES, 1)
    assert "initialization" not in explanation(encoding_description("sinusoidal"), COLLAPSES, 1)
    assert "cannot fit the task even in range" in explanation(alibi, FAILS, 2)
    assert "cannot fit the task even in range" not in explanation(alibi, FAILS, 1)


def test_the_section_flags_seeds_that_disagree_about_the_class():
    def mechanism_text(runs):
        summary = summarize_variants(runs)
        classes = all_fitted(classify_variants(summary, VOCAB, TRAIN_MAX))
        text = section_markdown(summary, classes, variants_checks(classes, DESCRIPTIONS, VOCAB), DESCRIPTIONS,
                                ["rope"], VOCAB, TRAIN_MAX)
        return text.split("**Mechanism.**")[1]

    agreeing = evaluations({("rope", 2): (1.0, 0.5)})
    disagreeing = agreeing.copy()
    disagreeing.loc[(disagreeing["seed"] == 0) & (disagreeing["length"] == 32), "accuracy"] = 0.1
    assert "the seeds disagree" not in mechanism_text(agreeing)
    assert "the seeds disagree" in mechanism_text(disagreeing)


def test_section_reports_the_measured_numbers_classes_and_properties(tmp_path):
    summary, classes, checks = analysis()
    text = section_markdown(summary, classes, checks, DESCRIPTIONS, ORDER, VOCAB, TRAIN_MAX)
    assert "0.500 [0.500, 0.500]" in text  # rope K=2 at n=32
    assert "| rope | extrapolates (0.950 [0.950, 0.950]) | decays gracefully (0.500 [0.500, 0.500]) |" in text
    assert DESCRIPTIONS["learned"]["summary"] in text and "figures/pe_variants.png" in text
    plot_variants(summary, classes, ORDER, [4, 8], tmp_path / "variants.png", dpi=40)
    assert (tmp_path / "variants.png").read_bytes().startswith(b"\x89PNG")


def test_a_cell_is_classified_on_the_seeds_that_fit_the_range_when_most_do():
    """One seed of three that does not fit the range is left out (a training failure must not make the
    class); where most seeds do not fit, every seed counts and the cell fails in range."""
    rows = []
    for pe, in_range_by_seed in (("fire", (1.0, 1.0, 0.25)), ("alibi", (0.3, 0.3, 1.0))):
        for seed, in_range in enumerate(in_range_by_seed):
            for length, accuracy, inside in ((8, in_range, True), (32, in_range * 0.9, False)):
                rows.append(dict(experiment="base", pe=pe, offset=2, seed=seed, length=length,
                                 in_training_range=inside, accuracy=accuracy, target_attention=0.0, loss=0.0))
    runs = pd.DataFrame(rows)
    fits = pd.DataFrame([dict(pe=pe, offset=2, seed=seed, fitted=fitted)
                         for pe, flags in (("fire", (True, True, False)), ("alibi", (False, False, True)))
                         for seed, fitted in enumerate(flags)])
    used = runs_that_fit(runs, fits)
    assert sorted(used.loc[used["pe"] == "fire", "seed"].unique()) == [0, 1]
    assert sorted(used.loc[used["pe"] == "alibi", "seed"].unique()) == [0, 1, 2]
    classes = classify_variants(summarize_variants(used), VOCAB, TRAIN_MAX).merge(fit_counts(fits))
    got = dict(zip(classes["pe"], classes["category"]))
    assert got == {"fire": EXTRAPOLATES, "alibi": FAILS}
    text = left_out_markdown(classes)
    assert "fire K=2: 1 of 3" in text and "alibi" not in text.split("Left out")[1]
