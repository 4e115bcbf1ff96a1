"""Every claim judged by ``checks/judgment.py`` in every condition (this run, confirmation runs, robustness points),
each from its own ``headline_by_seed`` table, with its own task's threshold (chance is 1 / V of its vocabulary)."""

from typing import NamedTuple

import pandas as pd

from lengthgen.checks.judgment import gated, judge, seed_means
from lengthgen.experiments.claims import CHANCE, CLAIMS, Claim
from lengthgen.experiments.claims import HEADLINES_BY_NAME as HEADLINES

THIS_RUN = "this run"
# How far rope extrapolates, in every condition: what moves the answers (the report's line and figure)
LONGEST = "generalization: rope accuracy at 32x the training length"


class Condition(NamedTuple):
    name: str
    kind: str  # "run", "confirmation" or "robustness"
    seen: bool  # its data had been looked at when the rules were fixed
    changes: str  # what it changes from this run, in words ("" for this run): its file's note, else its differences
    settings: str  # the values it sets ("" for this run): "model.init normal@std=0.1 and model.d_model 32"
    task: dict  # its vocab_size and train_length_max: the thresholds' settings


def values_of(by_seed: pd.DataFrame, statistic: str) -> pd.DataFrame:
    return by_seed.loc[by_seed["headline"] == statistic, ["offset", "seed", "value"]]


def baseline_means(claim: Claim, by_seed: pd.DataFrame, task: dict, offsets) -> list[float]:
    if claim.baseline.statistic:
        means = values_of(by_seed, claim.baseline.statistic).groupby("offset")["value"].mean()
        return [float(means.get(offset, float("nan"))) for offset in offsets]
    return [1 / task["vocab_size"] if claim.baseline.label == CHANCE else claim.baseline.value] * len(offsets)


def judged_statistic(statistic: str, by_seed: pd.DataFrame, task: dict) -> pd.DataFrame:
    headline = HEADLINES[statistic]
    return judge(values_of(by_seed, statistic), headline.comparison, headline.threshold(task))


def judge_claim(claim: Claim, by_seed: pd.DataFrame, task: dict) -> pd.DataFrame:
    """The claim's rows in one condition: per K its primary statistic judged, gated by its preconditions."""
    judgments = judged_statistic(claim.primary, by_seed, task)
    for precondition in claim.preconditions:
        judgments = gated(judgments, judged_statistic(precondition, by_seed, task))
    return judgments.assign(claim=claim.name, comparison=claim.rule.comparison, threshold=claim.rule.threshold(task),
                            baseline=baseline_means(claim, by_seed, task, judgments["offset"]))


def claim_judgments(conditions: list[Condition], tables: list[pd.DataFrame]) -> pd.DataFrame:
    """The ``claim_judgments`` table: every claim measured in a condition, judged there."""
    frames = [judge_claim(claim, by_seed, condition.task).assign(
        condition=condition.name, kind=condition.kind, seen=condition.seen, changes=condition.changes,
        settings=condition.settings)
        for condition, by_seed in zip(conditions, tables) for claim in CLAIMS
        if not values_of(by_seed, claim.primary).empty]
    return pd.concat(frames, ignore_index=True)


def secondary_statistics(conditions: list[Condition], tables: list[pd.DataFrame]) -> pd.DataFrame:
    """The ``claim_secondary`` table: every other statistic a claim reads, its mean and interval per K."""
    names = sorted({name for claim in CLAIMS for name in claim.statistics()} - {claim.primary for claim in CLAIMS})
    rows = [{"statistic": name, "condition": condition.name, "offset": offset, "n_seeds": len(values),
             "mean": float(values.mean()), "ci_low": low, "ci_high": high}
            for condition, by_seed in zip(conditions, tables) for name in names
            for offset, values, low, high in seed_means(values_of(by_seed, name))]
    return pd.DataFrame(rows, columns=["statistic", "condition", "offset", "n_seeds", "mean", "ci_low", "ci_high"])


def task_of(config: dict) -> dict:
    return {key: config["task"][key] for key in ("vocab_size", "train_length_max")}


def conditions_of(config: dict, confirmation: dict, robustness: dict) -> list[dict]:
    """Every condition of a run as plain data (rule params): this run, its confirmation runs (those named in
    ``confirmation.out_of_sample`` unseen; a name there that is none of them is an error) and robustness points."""
    unseen = config["confirmation"]["out_of_sample"]
    unknown = sorted(set(unseen) - set(confirmation))
    if unknown and confirmation:
        raise ValueError(f"confirmation.out_of_sample names {', '.join(unknown)}, which "
                         f"{'is' if len(unknown) == 1 else 'are'} not in confirmation.runs "
                         f"({', '.join(confirmation) or 'none'})")
    return [Condition(THIS_RUN, "run", True, "", "", task_of(config))._asdict(),
            *(Condition(name, "confirmation", name not in unseen,
                        run.prepared["confirmation"]["note"] or "; ".join(run.differences), run.settings,
                        task_of(run.prepared))._asdict() for name, run in confirmation.items()),
            *(Condition(name, "robustness", True, "; ".join(point.differences), point.settings,
                        task_of(point.prepared))._asdict() for name, point in robustness.items())]


def rope_far_accuracy(secondary: pd.DataFrame, judgments: pd.DataFrame) -> pd.DataFrame:
    """Rope's accuracy at 32x (``LONGEST``) per condition and K, with the gap claim's verdict there: "untestable"
    where rope does not fit its training range, so that its accuracy far past it means nothing either."""
    verdicts = judgments.loc[judgments["claim"] == "gap", ["condition", "offset", "verdict"]]
    return secondary[secondary["statistic"] == LONGEST].merge(verdicts, on=["condition", "offset"], how="left")
