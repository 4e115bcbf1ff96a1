import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lengthgen.checks.check import with_keys
from lengthgen.experiments.generalization.analysis import generalization_checks, summarize_accuracy
from lengthgen.checks.stats import mean_interval


def test_mean_interval_is_the_student_t_interval():
    values = [0.2, 0.4, 0.6]
    mean, low, high = mean_interval(values)
    half = stats.t.ppf(0.975, 2) * np.std(values, ddof=1) / np.sqrt(3)
    assert mean == pytest.approx(0.4) and low == pytest.approx(0.4 - half) and high == pytest.approx(0.4 + half)
    assert mean_interval([0.7]) == (0.7, 0.7, 0.7)


def accuracy_table(rope_far: float, learned_far: float) -> pd.DataFrame:
    """Two seeds, lengths 8 (in range) and 32 (4x); the far accuracies are set by the caller."""
    rows = []
    for seed in (0, 1):
        for pe, far in (("rope", rope_far), ("learned", learned_far)):
            rows.append(dict(experiment="generalization", pe=pe, offset=1, seed=seed, length=8, in_training_range=True,
                             accuracy=1.0))
            rows.append(dict(experiment="generalization", pe=pe, offset=1, seed=seed, length=32, in_training_range=False,
                             accuracy=far))
    return pd.DataFrame(rows)


def checks_of(accuracy: pd.DataFrame) -> pd.DataFrame:
    checks = generalization_checks(accuracy, vocab_size=8, train_length_max=8)
    return with_keys(checks, "generalization", "generalization")


def test_generalization_claim_confirmed_when_rope_extrapolates_and_learned_is_at_chance():
    checks = checks_of(accuracy_table(0.9, 0.13))
    assert checks["holds"].all()


def test_generalization_claim_fails_when_rope_is_at_chance_far_out():
    checks = checks_of(accuracy_table(0.125, 0.125))
    failing = checks.loc[~checks["holds"], ["statistic", "offset", "rule"]].values.tolist()
    assert failing == [["rope: mean accuracy at the longest length <= 4x the training maximum", 1,
                        ">= 5 x chance = 0.625 (n=32)"]]


def test_summary_interval_stays_inside_zero_one():
    summary = summarize_accuracy(accuracy_table(0.0, 1.0).assign(
        accuracy=lambda f: np.where(f["seed"] == 0, 0.0, 1.0)))
    assert summary["ci_low"].min() >= 0 and summary["ci_high"].max() <= 1


def test_generalization_figure_draws_each_encodings_means_and_keeps_its_legend_off_the_panels():
    from lengthgen.experiments.generalization.figures import draw

    summary = summarize_accuracy(accuracy_table(0.9, 0.13))
    settings = {"task": {"vocab_size": 8, "train_length_min": 8, "train_length_max": 8}}
    fig = draw({"accuracy_summary": summary}, settings)["generalization"]
    (ax,) = fig.axes
    curves = {line.get_label(): list(line.get_ydata()) for line in ax.get_lines()}
    assert curves["rope"] == pytest.approx([1.0, 0.9]) and curves["learned"] == pytest.approx([1.0, 0.13])
    assert ax.get_legend() is None and len(fig.legends) == 1  # below the panels, not on the data


# --- Mutation testing (docs/mutation.md): the generalization checks by hand, at their boundaries -----------

from lengthgen.experiments.generalization import analysis as generalization  # noqa: E402

# Means per (pe, offset, length), V = 8 (chance 0.125), training lengths up to 8, evaluated up to 40 > 4 x 8.
MEANS = {
    ("rope", 1): {4: 1.0, 8: 0.995, 16: 0.8, 32: 0.625, 40: 0.1},  # 0.625 = 5 x chance exactly, at n = 32
    ("learned", 1): {4: 0.99, 8: 1.0, 16: 0.15, 32: 0.08, 40: 0.16},  # past 8: |0.15 - .125|, |0.08 - .125|, |0.16 - .125|
    ("rope", 2): {4: 1.0, 8: 0.98, 16: 0.7, 32: 0.6, 40: 0.5},
    ("learned", 2): {4: 1.0, 8: 1.0, 16: 0.125, 32: 0.2, 40: 0.125},
}


def accuracy_by_length(seeds=(0, 1)) -> pd.DataFrame:
    """Each mean above measured on every seed; a row of another experiment that the sweep's checks must not read."""
    rows = [dict(experiment="generalization", pe=pe, offset=offset, seed=seed, length=length,
                 in_training_range=length <= 8, accuracy=mean)
            for (pe, offset), means in MEANS.items() for length, mean in means.items() for seed in seeds]
    rows += [dict(experiment="cures", pe="rope", offset=1, seed=seed, length=32, in_training_range=False, accuracy=0.0)
             for seed in seeds]
    return pd.DataFrame(rows)


def test_generalization_checks_by_hand_at_their_boundaries():
    """Per offset: each encoding's worst in-range mean (>= 0.99, met at 0.99), rope at the longest length <= 4 x 8
    (32, not 40; >= 5 x chance, met at 0.625), learned's largest distance from chance past the range (length 8 is
    in it; 0.045 below chance counts as far as above)."""
    checks = generalization.checks({"accuracy_by_length": accuracy_by_length()},
                                   {"task": {"vocab_size": 8, "train_length_max": 8}})
    found = [(c["offset"], c["claim"], c["statistic"], c["comparison"], c["threshold"], c["rule"], c["holds"])
             for c in checks]
    fit, far, at_chance = ("both encodings fit the training range", "rope stays well above chance at 4x the training "
                           "length", "learned is at chance past the training range")
    far_statistic = "rope: mean accuracy at the longest length <= 4x the training maximum"
    chance_statistic = "learned: largest distance of mean accuracy from chance past training range"
    assert found == [
        (1, fit, "rope: lowest mean accuracy in training range", ">=", 0.99, ">= 0.99", True),
        (1, fit, "learned: lowest mean accuracy in training range", ">=", 0.99, ">= 0.99", True),
        (1, far, far_statistic, ">=", 0.625, ">= 5 x chance = 0.625 (n=32)", True),
        (1, at_chance, chance_statistic, "<=", 0.05, "<= 0.05 (chance = 0.1250)", True),
        (2, fit, "rope: lowest mean accuracy in training range", ">=", 0.99, ">= 0.99", False),
        (2, fit, "learned: lowest mean accuracy in training range", ">=", 0.99, ">= 0.99", True),
        (2, far, far_statistic, ">=", 0.625, ">= 5 x chance = 0.625 (n=32)", False),
        (2, at_chance, chance_statistic, "<=", 0.05, "<= 0.05 (chance = 0.1250)", False),
    ]
    assert [c["value"] for c in checks] == pytest.approx([0.995, 0.99, 0.625, 0.045, 0.98, 1.0, 0.6, 0.075])


def test_the_accuracy_summary_by_hand():
    """Only the sweep's rows; per (pe, offset, length) the mean over seeds with its Student-t interval, clipped to
    [0, 1]: seeds at 0 and 1 give mean 0.5 and an interval clipped both ways; 0.5 and 0.52 give 0.51 +- 12.706 x 0.01."""
    accuracy = accuracy_by_length()
    spread = (accuracy["pe"] == "rope") & (accuracy["offset"] == 2) & (accuracy["experiment"] == "generalization")
    accuracy.loc[spread & (accuracy["length"] == 16), "accuracy"] = [0.0, 1.0]
    accuracy.loc[spread & (accuracy["length"] == 40), "accuracy"] = [0.5, 0.52]
    summary = generalization.analyze({"accuracy_by_length": accuracy}, {})["accuracy_summary"]
    assert list(summary.columns) == ["experiment", "pe", "offset", "length", "in_training_range", "n_seeds", "mean",
                                     "ci_low", "ci_high"]
    assert len(summary) == 20 and set(summary["experiment"]) == {"generalization"}
    rope = summary[(summary["pe"] == "rope") & (summary["offset"] == 2)].set_index("length")
    assert rope.loc[16, ["mean", "ci_low", "ci_high"]].tolist() == [0.5, 0.0, 1.0]
    assert rope.loc[40, ["mean", "ci_low", "ci_high"]].tolist() == pytest.approx([0.51, 0.51 - 0.12706, 0.51 + 0.12706],
                                                                                 abs=1e-4)
    assert rope.loc[32, ["n_seeds", "mean", "ci_low", "ci_high"]].tolist() == [2, 0.6, 0.6, 0.6]
    assert rope["in_training_range"].tolist() == [True, True, False, False, False]


def test_generalization_checks_come_in_ascending_offset_whatever_the_rows_order():
    """The report lists a claim's checks by offset; rows that start with K=2 still give K=1's first."""
    sweep = generalization.sweep_accuracy(accuracy_by_length())
    reordered = sweep.sort_values("offset", ascending=False, kind="stable")
    checks = generalization.generalization_checks(reordered, vocab_size=8, train_length_max=8)
    assert [c["offset"] for c in checks] == [1, 1, 1, 1, 2, 2, 2, 2]


@pytest.mark.parametrize("draw", [[0, 1, 2], [0, 0, 2], [1, 1, 0], [2, 2, 2], [1, 2, 2]])
def test_the_generalization_checks_seed_sums_are_the_checks_of_the_resampled_rows(draw):
    """Each check's seed sums under a draw (seed counts) give the value the checks recomputed on the drawn rows give
    (a seed drawn twice counts twice). Only seed 1 is evaluated at 32 (4x): rope's far mean is then at 16 in draws
    without seed 1; seed 2 has no learned row past the range, seed 0 none of learned at K=2."""
    rows = accuracy_by_length(seeds=(0, 1, 2))
    rows["accuracy"] = rows["accuracy"] * (1 - 0.01 * rows["seed"])  # seeds differ: a mean depends on the draw
    drop = ((rows["length"] == 32) & (rows["seed"] != 1)) | ((rows["pe"] == "learned") & (
        ((rows["seed"] == 2) & (rows["length"] > 8)) | ((rows["seed"] == 0) & (rows["offset"] == 2))))
    rows = rows[~drop]
    settings = {"task": {"vocab_size": 8, "train_length_max": 8}}
    checks = generalization.checks({"accuracy_by_length": rows}, settings)
    drawn = pd.concat([rows[rows["seed"] == seed].assign(seed=label) for label, seed in enumerate(draw)])
    recomputed = [c["value"] for c in generalization.checks({"accuracy_by_length": drawn}, settings)]
    counts = np.bincount(draw, minlength=3)[None, :]
    summed = [c["seed_sums"][0].at(counts, [0, 1, 2])[0] for c in checks]
    assert summed == pytest.approx(recomputed, abs=1e-12, nan_ok=True)


def test_generalization_check_values_are_the_summary_means_bit_for_bit_not_their_seed_sums():
    """The slow tier compares the values with the committed run's exactly: each stays the summary's mean (numpy's
    pairwise sum over 10 seeds), which the seed sums' total (another order of adding) misses in the last bit here."""
    rows = accuracy_by_length(seeds=range(10))
    far = rows["experiment"].eq("generalization") & rows["pe"].eq("rope") & rows["offset"].eq(1) & rows["length"].eq(32)
    rows.loc[far, "accuracy"] = np.round(np.linspace(0.302, 0.902, 10), 6)
    checks = generalization.checks({"accuracy_by_length": rows}, {"task": {"vocab_size": 8, "train_length_max": 8}})
    rope_far = checks[2]
    summary = generalization.summarize_accuracy(generalization.sweep_accuracy(rows))
    assert rope_far["value"] == summary.loc[summary["length"].eq(32) & summary["pe"].eq("rope")
                                            & summary["offset"].eq(1), "mean"].item() == 0.6020000000000001
    assert rope_far["seed_sums"][0].value() == 0.602  # the same statistic, added in another order


def test_generalization_checks_read_chance_from_the_vocabulary_and_4x_from_the_training_range():
    """V = 16 (chance 0.0625) and training lengths up to 8: rope's far length is 32 (<= 4 x 8), its bar 5 x 0.0625."""
    checks = generalization.checks({"accuracy_by_length": accuracy_by_length()},
                                   {"task": {"vocab_size": 16, "train_length_max": 8}})
    assert [(c["threshold"], c["rule"]) for c in checks[2:4]] == [
        (0.3125, ">= 5 x chance = 0.312 (n=32)"), (0.05, "<= 0.05 (chance = 0.0625)")]


def test_rope_not_evaluated_at_the_far_length_fails_its_check_rather_than_reading_another_length():
    """The far length is the longest <= 4x any run was evaluated at; rope at K=1 lacks it: a mean of no rows (NaN)."""
    rows = accuracy_by_length()
    rows = rows[~(rows["pe"].eq("rope") & rows["offset"].eq(1) & rows["length"].eq(32))]
    checks = generalization.checks({"accuracy_by_length": rows}, {"task": {"vocab_size": 8, "train_length_max": 8}})
    assert np.isnan(checks[2]["value"]) and not checks[2]["holds"]
    assert np.isnan(checks[2]["seed_sums"][0].value())
