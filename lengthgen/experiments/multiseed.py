"""The multiseed experiment: every headline number per (offset, seed), summarized over seeds.

Each headline is one number per trained run, read from an experiment's table, with the
threshold its experiment's rule uses. The multiseed claim is that each headline meets
its threshold in every single run (every seed at every offset), not only on average.
"""

import operator
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from lengthgen import claims, rules
from lengthgen.schemas.core import ACCURACY_BY_LENGTH
from lengthgen.schemas.frequency import FREQUENCY_SUMMARY
from lengthgen.schemas.linear import ARMS as LINEAR_ARMS
from lengthgen.schemas.linear import LINEAR_BY_LENGTH
from lengthgen.schemas.mechanics import MECHANICS_BY_LENGTH
from lengthgen.schemas.prop1 import PROP1_PREDICTION
from lengthgen.schemas.shift import SHIFT_CHANGES
from lengthgen.stats import summarize_over_seeds
from lengthgen.tables import TableSchema

EXPERIMENT = "multiseed"
COMPARISONS = {">=": operator.ge, "<=": operator.le}
UNIT = (0.0, 1.0)


@dataclass(frozen=True)
class Headline:
    experiment: str  # the experiment (catalog name) whose claim it repeats; it runs only when that one does
    name: str
    source: TableSchema  # the table it is read from
    comparison: str  # ">=" or "<="
    threshold: Callable[[dict], float]  # from the task settings, e.g. chance = 1/V
    per_run: Callable[[pd.DataFrame, dict], pd.Series]  # table, settings -> value indexed by (offset, seed)
    log_scale: bool = False  # for values spanning orders of magnitude
    bounds: tuple[float, float] | None = None  # the range of the value, e.g. (0, 1) for an accuracy


def _past(frame: pd.DataFrame, settings: dict) -> pd.DataFrame:
    return frame[frame["length"] > settings["train_length_max"]]


def _at_four_x(frame: pd.DataFrame, settings: dict) -> pd.DataFrame:
    return frame[frame["length"] == 4 * settings["train_length_max"]]


def _by_run(frame: pd.DataFrame, column: str, how: str) -> pd.Series:
    return frame.groupby(["offset", "seed"])[column].agg(how)


HEADLINES = [
    Headline("base", "base: rope accuracy at 4x the training length", ACCURACY_BY_LENGTH, ">=",
             lambda s: rules.ABOVE_CHANCE_FACTOR / s["vocab_size"],
             lambda f, s: _by_run(_at_four_x(f[f["pe"] == "rope"], s), "accuracy", "mean"), bounds=UNIT),
    Headline("base", "base: learned distance from chance past the range (max over lengths)", ACCURACY_BY_LENGTH, "<=",
             lambda s: rules.CHANCE_TOLERANCE,
             lambda f, s: _by_run(_past(f[f["pe"] == "learned"], s).assign(
                 distance=lambda g: (g["accuracy"] - 1 / s["vocab_size"]).abs()), "distance", "max")),
    Headline("mechanics", "mechanics: learned fraction of sequences at the modal position (min over lengths)",
             MECHANICS_BY_LENGTH, ">=", lambda s: rules.MIN_MODAL_FRACTION,
             lambda f, s: _by_run(f[(f["pe"] == "learned") & f["past_training_range"]], "modal_fraction", "min"),
             bounds=UNIT),
    Headline("shift", "shift: rope float64 attention-logit change (max over shifts)", SHIFT_CHANGES, "<=",
             lambda s: rules.ROPE_MAX_CHANGE,
             lambda f, s: _by_run(f[(f["pe"] == "rope") & (f["dtype"] == "float64")], "attention_logit_change", "max"),
             log_scale=True),
    Headline("prop1", "prop1: mean-field target-attention error past the range", PROP1_PREDICTION, "<=",
             lambda s: rules.MAX_ATTENTION_MAE,
             lambda f, s: _by_run(_past(f[f["predictor"] == rules.PROP1_CLAIM_PREDICTOR], s).assign(
                 error=lambda g: (g["predicted_attention"] - g["measured_attention"]).abs()), "error", "mean")),
    Headline("frequency", "frequency: energy share of the top 4 rotary blocks", FREQUENCY_SUMMARY, ">=",
             lambda s: rules.MIN_TOP4_SHARE, lambda f, s: _by_run(f, "top4_share", "mean"), bounds=UNIT),
    Headline("frequency", "frequency: alignment of the top 4 blocks with K", FREQUENCY_SUMMARY, ">=",
             lambda s: rules.MIN_TOP4_ALIGNMENT, lambda f, s: _by_run(f, "top4_alignment", "mean"), bounds=(-1, 1)),
    *(Headline("linear", f"linear, {arm_name}: accuracy at 4x the training length", LINEAR_BY_LENGTH, "<=",
               lambda s: rules.CHANCE_MULTIPLE / s["vocab_size"],
               lambda f, s, arm=arm: _by_run(_at_four_x(f[f["arm"] == arm], s), "accuracy", "mean"), bounds=UNIT)
      for arm, arm_name in LINEAR_ARMS.items()),
]


def headlines_of(experiments: list[str]) -> list[Headline]:
    """The headlines of the experiments that run (``catalog.plan``), in order."""
    return [headline for headline in HEADLINES if headline.experiment in experiments]


def headline_by_seed(sources: dict[str, pd.DataFrame], settings: dict, headlines: list[Headline] = HEADLINES
                     ) -> pd.DataFrame:
    """One row per (headline, offset, seed). ``sources``: each table by its schema name;
    ``settings``: vocab_size, train_length_max."""
    frames = [headline.per_run(sources[headline.source.name], settings).rename("value").reset_index()
              .assign(headline=headline.name) for headline in headlines]
    return pd.concat(frames, ignore_index=True)


def summarize_headlines(by_seed: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """Mean and 95% interval over seeds per offset and over every run ("all"), with the threshold."""
    per_offset = summarize_over_seeds(by_seed.assign(offset=by_seed["offset"].map(lambda k: f"K={k}")),
                                      ["headline", "offset"], "value")
    pooled = summarize_over_seeds(by_seed.assign(offset="all"), ["headline", "offset"], "value")
    summary = pd.concat([per_offset, pooled], ignore_index=True)
    rows = []
    for headline in (headline for headline in HEADLINES if headline.name in set(by_seed["headline"])):
        threshold = headline.threshold(settings)
        runs = by_seed[by_seed["headline"] == headline.name]
        meets = COMPARISONS[headline.comparison](runs["value"], threshold)
        fractions = meets.groupby(runs["offset"].map(lambda k: f"K={k}")).mean().to_dict() | {"all": meets.mean()}
        part = summary[summary["headline"] == headline.name]
        if headline.bounds is not None:  # a 95% interval past the value's own range means nothing there
            part = part.assign(ci_low=part["ci_low"].clip(*headline.bounds), ci_high=part["ci_high"].clip(*headline.bounds))
        rows.append(part.assign(threshold=threshold, comparison=headline.comparison,
                                fraction_of_runs_meeting=part["offset"].map(fractions)))
    return pd.concat(rows, ignore_index=True)


def claims_multiseed(summary: pd.DataFrame) -> pd.DataFrame:
    """One check per headline: every run (all seeds, all offsets) meets the threshold."""
    pooled = summary[summary["offset"] == "all"]
    return pd.DataFrame([
        claims.check(EXPERIMENT, row.headline, f"fraction of {row.n_seeds} runs with value {row.comparison} "
                          f"{row.threshold:.3g}", row.fraction_of_runs_meeting, "== 1 (every seed at every offset)",
                          row.fraction_of_runs_meeting == 1.0)
        for row in pooled.itertuples()
    ])


def section_markdown(summary: pd.DataFrame, figure: str = "multiseed_results.png") -> str:
    lines = ["| headline | K | runs | mean [95% CI] | threshold | runs meeting it |", "|---|---|---|---|---|---|"]
    for row in summary.itertuples():
        lines.append(f"| {row.headline} | {row.offset} | {row.n_seeds} | {row.mean:.3g} [{row.ci_low:.3g}, "
                     f"{row.ci_high:.3g}] | {row.comparison} {row.threshold:.3g} | {row.fraction_of_runs_meeting:.0%} |")
    return "\n\n".join([
        "## multiseed: every headline across seeds and offsets",
        "Each headline is one number per trained run (seed, offset), read from its experiment's table; "
        "mean and 95% Student-t interval over seeds per offset and over all runs (clipped to the value's range, "
        "e.g. [0, 1] for accuracies and shares). The check: every single "
        "run meets the threshold of its experiment's rule. All claims of every experiment, with their "
        "statistics and rules, are in `results/tables/claims.parquet`.",
        "\n".join(lines),
        f"![headlines across seeds and offsets](figures/{figure})",
    ])
