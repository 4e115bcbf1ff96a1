import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lengthgen.claims import verdict, with_keys
from lengthgen.experiments.generalization.analysis import generalization_checks, summarize_accuracy
from lengthgen.stats import mean_interval


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
    checks = generalization_checks(summarize_accuracy(accuracy), vocab_size=8, train_length_max=8)
    return with_keys(checks, "generalization", "generalization")


def test_generalization_claim_confirmed_when_rope_extrapolates_and_learned_is_at_chance():
    checks = checks_of(accuracy_table(0.9, 0.13))
    assert checks["holds"].all() and verdict(checks) == "holds"


def test_generalization_claim_fails_when_rope_is_at_chance_far_out():
    checks = checks_of(accuracy_table(0.125, 0.125))
    failing = checks.loc[~checks["holds"], ["statistic", "offset", "rule"]].values.tolist()
    assert failing == [["rope: mean accuracy at the longest length <= 4x the training maximum", 1,
                        ">= 5 x chance = 0.625 (n=32)"]] and verdict(checks) == "holds in part"


def test_verdict_of_no_holding_check_is_not_confirmed():
    assert verdict(pd.DataFrame({"holds": [False, False], "kind": "evidence"})) == "does not hold"


def test_verdict_counts_evidence_only():
    sanity_fails = pd.DataFrame({"holds": [True, False], "kind": ["evidence", "sanity"]})
    assert verdict(sanity_fails) == "holds"
    assert verdict(sanity_fails.assign(kind="sanity")) == "untestable"


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
