"""The one judgment of a claim (``DEFINITION``, printed on the methods page): per K, its statistic's mean over seeds
and seed-bootstrap interval against the threshold. Every condition is judged here alone; ``replication`` and
``robustness`` only count the verdicts. pandas and numpy only."""

import numpy as np
import pandas as pd

from lengthgen.checks.check import COMPARISONS

HOLDS, IN_PART, DOES_NOT_HOLD, INCONCLUSIVE, UNTESTABLE = VERDICTS = (
    "holds", "holds in part", "does not hold", "inconclusive", "untestable")
N_RESAMPLES = 10_000
CONFIDENCE = 0.95
RESAMPLING_SEED = 0
JUDGMENT_COLUMNS = ["offset", "n_seeds", "mean", "ci_low", "ci_high", "seeds_clearing", "verdict"]
MIN_SEEDS = 2  # one seed has no spread: its interval would be a point, and its verdict certain by construction

DEFINITION = (
    "**Verdicts.** Each claim has one primary statistic, one number per trained run. At each K: its mean over seeds "
    f"with a 95% seed-bootstrap interval ({N_RESAMPLES:,} resamples of the seeds; with 2 seeds it spans their two "
    "values). *Holds*: the whole interval clears the claim's threshold; *does not hold*: the whole interval lies on "
    "the other side; *inconclusive*: the interval straddles the threshold, or there is one seed, so the seeds cannot "
    "tell; *untestable*: the claim's precondition (the heads it reads fit their training range) does not hold there. "
    "Across K: *holds* where every K holds; *holds in part* where some K hold (the others named); *does not hold* "
    "where every K does not; *inconclusive* where none holds and some K cannot tell (each K named). The count of seeds "
    "that clear the threshold alone is shown beside it and decides nothing.")


def seed_interval(values: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of the mean of ``values`` over resamples of them with replacement."""
    draws = np.random.default_rng(RESAMPLING_SEED).integers(0, len(values), size=(N_RESAMPLES, len(values)))
    means = values[draws].mean(axis=1)
    tail = (1 - CONFIDENCE) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))


def verdict_at(low: float, high: float, comparison: str, threshold: float) -> str:
    """Where the interval [low, high] lies against ``comparison threshold``."""
    clears = [COMPARISONS[comparison](end, threshold) for end in (low, high)]
    return HOLDS if all(clears) else DOES_NOT_HOLD if not any(clears) else INCONCLUSIVE


def seed_means(by_seed: pd.DataFrame):
    """Per K of ``by_seed`` (offset, value; NaN left out): the offset, its values over seeds, their mean's interval."""
    for offset, runs in by_seed.dropna(subset=["value"]).groupby("offset", sort=True):
        values = runs["value"].to_numpy(dtype=float)
        yield int(offset), values, *seed_interval(values)


def judge(by_seed: pd.DataFrame, comparison: str, threshold: float) -> pd.DataFrame:
    """Per K of ``by_seed`` (``seed_means``): n_seeds, mean, interval, the seeds clearing the threshold, verdict."""
    if comparison not in COMPARISONS:
        raise ValueError(f"unknown comparison {comparison!r}; one of {', '.join(COMPARISONS)}")
    return pd.DataFrame([
        {"offset": offset, "n_seeds": len(values), "mean": float(values.mean()), "ci_low": low, "ci_high": high,
         "seeds_clearing": int(COMPARISONS[comparison](values, threshold).sum()),
         "verdict": verdict_at(low, high, comparison, threshold) if len(values) >= MIN_SEEDS else INCONCLUSIVE}
        for offset, values, low, high in seed_means(by_seed)], columns=JUDGMENT_COLUMNS)


def gated(judgments: pd.DataFrame, preconditions: pd.DataFrame) -> pd.DataFrame:
    """``judgments`` with each K where a precondition (``judge``'s rows) does not hold marked untestable."""
    failing = set(preconditions.loc[preconditions["verdict"] != HOLDS, "offset"])
    return judgments.assign(verdict=[UNTESTABLE if offset in failing else verdict
                                     for offset, verdict in zip(judgments["offset"], judgments["verdict"])])


def offsets_text(offsets) -> str:
    return "K=" + ", ".join(str(int(offset)) for offset in sorted(offsets))


def where_not(judgments: pd.DataFrame) -> str:
    """``does not hold at K=1; inconclusive at K=2, 3``: each verdict other than *holds*, with its K."""
    offsets = {verdict: judgments.loc[judgments["verdict"] == verdict, "offset"]
               for verdict in (DOES_NOT_HOLD, INCONCLUSIVE, UNTESTABLE)}
    return "; ".join(f"{verdict} at {offsets_text(at)}" for verdict, at in offsets.items() if len(at))


def across_offsets(judgments: pd.DataFrame) -> str:
    """The claim's verdict over its K (rows of offset and verdict), naming the K where it does not hold."""
    at = {verdict: list(judgments.loc[judgments["verdict"] == verdict, "offset"]) for verdict in VERDICTS}
    testable = len(judgments) - len(at[UNTESTABLE])
    if not testable:
        return UNTESTABLE + (f" (a precondition fails at {offsets_text(at[UNTESTABLE])})" if at[UNTESTABLE]
                             else " (nothing measured)")
    if len(at[HOLDS]) == len(judgments):
        return HOLDS
    if at[HOLDS]:
        return f"{IN_PART} ({where_not(judgments)})"
    if len(at[DOES_NOT_HOLD]) == testable and not at[UNTESTABLE]:
        return DOES_NOT_HOLD
    return f"{INCONCLUSIVE if at[INCONCLUSIVE] else DOES_NOT_HOLD} ({where_not(judgments)})"


def plain(verdict: str) -> str:
    """The verdict's word alone, without the K it names."""
    return verdict.split(" (")[0]


def replication(verdicts: list[str], runs: str = "runs") -> str:
    """How the claim fares over the confirmation runs, from each run's verdict: "holds in 3 of 3 runs"; a claim
    that holds in none reads "does not hold in 3 of 3" where every run's verdict is *does not hold*."""
    judged = [plain(verdict) for verdict in verdicts if plain(verdict) != UNTESTABLE]
    if not judged:
        return f"untestable in all {len(verdicts)} {runs}" if verdicts else "no confirmation runs"
    untestable = f", untestable in {len(verdicts) - len(judged)}" if len(judged) < len(verdicts) else ""
    if all(verdict == DOES_NOT_HOLD for verdict in judged):
        return f"does not hold in {len(judged)} of {len(judged)} {runs}{untestable}"
    return f"holds in {judged.count(HOLDS)} of {len(judged)} {runs}{untestable}"


# A robustness setting with no judgments of the claim at all
NOTHING_MEASURED = "nothing measured"


def robustness(verdicts: dict[str, pd.DataFrame]) -> str:
    """How the claim fares over the robustness settings, from each setting's per-K judgments: "holds at 9 of 11
    settings, not fully at d_model_32 (inconclusive at K=1)". A setting holds where every K holds; each other one is
    named with where it does not, and one where no K could be judged (a precondition failed at every K) apart."""
    failing, fared, untestable = {}, [], []
    for setting, judgments in verdicts.items():
        verdict = across_offsets(judgments)
        if len(judgments) and (judgments["verdict"] == UNTESTABLE).all():
            untestable.append(setting)
        elif judgments.empty:
            failing[setting] = NOTHING_MEASURED
            fared.append(NOTHING_MEASURED)
        elif verdict != HOLDS:
            failing[setting] = DOES_NOT_HOLD if verdict == DOES_NOT_HOLD else where_not(judgments)
            fared.append(plain(verdict))
    held = len(verdicts) - len(failing) - len(untestable)
    text = (f"holds at {held} of {len(verdicts)} settings" if held
            else f"holds at none of the {len(verdicts)} settings")
    if failing and held:
        text += ", not fully at " + ", ".join(f"{setting} ({where})" for setting, where in failing.items())
    elif failing:  # none holds: how many settings each other verdict has, in the verdicts' order
        text += " (" + "; ".join(f"{verdict} at {fared.count(verdict)}" for verdict in (*VERDICTS, NOTHING_MEASURED)
                                 if verdict in fared) + ")"
    return text + ("; untestable at " + ", ".join(untestable) if untestable else "")
