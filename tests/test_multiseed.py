import pandas as pd
import pytest

from lengthgen.experiments import multiseed

SETTINGS = {"vocab_size": 16, "train_length_max": 32}


def sources(rope_far: dict) -> dict[str, pd.DataFrame]:
    """Synthetic tables for two offsets x two seeds; rope accuracy at 4x set per (offset, seed)."""
    runs = [(offset, seed) for offset in (1, 2) for seed in (0, 1)]
    accuracy = pd.DataFrame(
        [dict(pe="rope", offset=k, seed=s, length=128, accuracy=rope_far[k, s]) for k, s in runs]
        + [dict(pe="learned", offset=k, seed=s, length=n, accuracy=0.0625 + 0.01 * s) for k, s in runs for n in (64, 128)])
    mechanics = pd.DataFrame([dict(pe="learned", offset=k, seed=s, length=64, past_training_range=True,
                                   modal_fraction=0.9) for k, s in runs])
    shift = pd.DataFrame([dict(pe="rope", dtype="float64", offset=k, seed=s, attention_logit_change=1e-12)
                          for k, s in runs])
    prop1 = pd.DataFrame([dict(predictor="mean_field", offset=k, seed=s, length=n, predicted_attention=0.5,
                               measured_attention=0.45) for k, s in runs for n in (32, 64)])
    frequency = pd.DataFrame([dict(offset=k, seed=s, top4_share=0.95, top4_alignment=0.97) for k, s in runs])
    linear = pd.DataFrame([dict(arm=arm, offset=k, seed=s, length=128, accuracy=0.1) for k, s in runs
                           for arm in ("min_norm_control", "attention_head")])
    return {"accuracy_by_length": accuracy, "mechanics_by_length": mechanics, "shift_changes": shift,
            "prop1_prediction": prop1, "frequency_summary": frequency, "linear_by_length": linear}


def test_headlines_are_read_per_run_and_checked_in_every_run():
    rope_far = {(1, 0): 0.9, (1, 1): 0.8, (2, 0): 0.7, (2, 1): 0.2}  # one run below 5/16
    by_seed = multiseed.headline_by_seed(sources(rope_far), SETTINGS)
    assert len(by_seed) == 4 * len(multiseed.HEADLINES)
    rope = by_seed[by_seed["headline"].str.startswith("base: rope")].set_index(["offset", "seed"])["value"]
    assert rope.to_dict() == rope_far
    learned = by_seed[by_seed["headline"].str.startswith("base: learned")].set_index(["offset", "seed"])["value"]
    assert learned[(1, 1)] == pytest.approx(0.01)
    prop1 = by_seed[by_seed["headline"].str.startswith("prop1")]["value"]
    assert prop1.tolist() == pytest.approx([0.05] * 4)  # only the length past the range counts

    summary = multiseed.summarize_headlines(by_seed, SETTINGS)
    rope_summary = summary[summary["headline"].str.startswith("base: rope")].set_index("offset")
    assert rope_summary.loc["K=1", "mean"] == pytest.approx(0.85)
    assert rope_summary.loc["K=2", "fraction_of_runs_meeting"] == 0.5
    assert rope_summary.loc["all", "fraction_of_runs_meeting"] == 0.75
    checks = multiseed.claims_multiseed(summary)
    assert checks.set_index("claim")["holds"].to_dict() == {
        headline.name: not headline.name.startswith("base: rope") for headline in multiseed.HEADLINES}


def test_intervals_stay_inside_the_range_of_their_value():
    # Accuracies of 1, 1, 0.6 and 1 at K=1: the Student-t interval of their mean passes 1.
    rope_far = {(1, 0): 1.0, (1, 1): 0.6, (2, 0): 1.0, (2, 1): 1.0}
    summary = multiseed.summarize_headlines(multiseed.headline_by_seed(sources(rope_far), SETTINGS), SETTINGS)
    rope = summary[summary["headline"].str.startswith("base: rope")].set_index("offset")
    assert rope.loc["K=1", "ci_high"] == 1.0 and rope.loc["K=1", "ci_low"] == 0.0  # 0.8 +- 2.54: clipped both ways
    assert rope.loc["K=2", "ci_low"] == rope.loc["K=2", "ci_high"] == 1.0
    unbounded = summary[summary["headline"].str.startswith("prop1")]
    assert (unbounded["ci_low"] <= unbounded["mean"]).all()
