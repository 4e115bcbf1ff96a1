"""The multiseed experiment: every headline number per (offset, seed), summarized over seeds.

Each headline is one number per trained run, read from an experiment's tables, with the
threshold its experiment's rule uses. The multiseed claim is that each headline meets
its threshold in every single run (every seed at every offset), not only on average.
A headline that an untrained head would meet comes with its experiment's baseline, as a headline of
its own: frequency's top-4 share against the same heads untrained, prop1's MAE against the better
trivial predictor (a head at chance has a small MAE too), and a head at chance past the range (learned,
linear arm 2) with its fit of the training range.

Its inputs are the headline tables of the experiments that run (``catalog.plan`` fills them in
from each declaration's ``headline_tables``), named by their files: ``accuracy_by_length``, or
``shift_changes_K1``, ``shift_changes_K2``, ... for a per-offset experiment. A headline reads the
tables of its schemas and runs only when there is one of each.
"""

import operator
import re
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from lengthgen import seed_sums, thresholds
from lengthgen.claims import check
from lengthgen.experiments.declaration import PER_OFFSET
from lengthgen.prediction_errors import gain_over_trivial, prediction_errors
from lengthgen.stats import summarize_over_seeds
from lengthgen.experiments.linear.tables import ARMS as LINEAR_ARMS

COMPARISONS = {">=": operator.ge, "<=": operator.le, ">": operator.gt}
UNIT = (0.0, 1.0)
DIFFERENCE = (-1.0, 1.0)  # of two values in [0, 1]
_, LINEAR_HEAD = LINEAR_ARMS  # arm 2, the test of the claim


@dataclass(frozen=True)
class Headline:
    name: str  # begins with the experiment whose claim it repeats
    sources: tuple[str, ...]  # the schemas of the tables it is read from (each one table, or one per offset)
    comparison: str  # ">=", "<=" or ">"
    threshold: Callable[[dict], float]  # from the task settings, e.g. chance = 1/V
    # its tables, one under the other with their schema in column ``source``; task settings -> value by (offset, seed)
    per_run: Callable[[pd.DataFrame, dict], pd.Series]
    log_scale: bool = False  # for values spanning orders of magnitude
    bounds: tuple[float, float] | None = None  # the range of the value, e.g. (0, 1) for an accuracy
    kind: str = "evidence"  # of its check (claims.check): "sanity" where only a bug can fail it


def _past(frame: pd.DataFrame, settings: dict) -> pd.DataFrame:
    return frame[frame["length"] > settings["train_length_max"]]


def _at_four_x(frame: pd.DataFrame, settings: dict) -> pd.DataFrame:
    return frame[frame["length"] == 4 * settings["train_length_max"]]


def _by_run(frame: pd.DataFrame, column: str, how: str) -> pd.Series:
    return frame.groupby(["offset", "seed"])[column].agg(how)


def _share_over_untrained(frame: pd.DataFrame, settings: dict) -> pd.Series:
    """Per run, its top-4 share minus the highest of the same heads at init at its offset: above 0 in every run
    is frequency's ``share_over_untrained`` check (every trained head above every untrained one)."""
    trained = frame[frame["source"] == "frequency_summary"].set_index(["offset", "seed"])["top4_share"]
    highest_untrained = frame[frame["source"] == "frequency_untrained_summary"].groupby("offset")["top4_share"].max()
    return trained - highest_untrained.reindex(trained.index.get_level_values("offset")).to_numpy()


def _gain_over_trivial(frame: pd.DataFrame, settings: dict) -> pd.Series:
    """Per run, prop1's ``gain_over_trivial`` of the claim predictor's target attention past the range: the better
    trivial baseline's MAE minus the predictor's, on that run's rows alone."""
    gains = {(offset, seed): gain_over_trivial(
        prediction_errors(run, settings["train_length_max"], settings["vocab_size"]), "trained", f"K={offset}",
        thresholds.PROP1_CLAIM_PREDICTOR, "target_attention")
        for (offset, seed), run in frame.groupby(["offset", "seed"])}
    return pd.Series(gains).rename_axis(["offset", "seed"])


HEADLINES = [
    Headline("generalization: rope accuracy at 4x the training length", ("accuracy_by_length",), ">=",
             lambda s: thresholds.ABOVE_CHANCE_FACTOR / s["vocab_size"],
             lambda f, s: _by_run(_at_four_x(f[f["pe"] == "rope"], s), "accuracy", "mean"), bounds=UNIT),
    # A head that learned nothing is at chance too: the distance is paired with the fit of the range, as the
    # generalization section's verdict pairs them.
    Headline("generalization: learned distance from chance past the range (max over lengths)", ("accuracy_by_length",),
             "<=",
             lambda s: thresholds.CHANCE_TOLERANCE,
             lambda f, s: _by_run(_past(f[f["pe"] == "learned"], s).assign(
                 distance=lambda g: (g["accuracy"] - 1 / s["vocab_size"]).abs()), "distance", "max")),
    Headline("generalization: learned lowest accuracy in the training range", ("accuracy_by_length",), ">=",
             lambda s: thresholds.NEAR_PERFECT,
             lambda f, s: _by_run(f[(f["pe"] == "learned") & f["in_training_range"]], "accuracy", "min"), bounds=UNIT),
    Headline("mechanics: learned fraction of sequences at the modal position (min over lengths)",
             ("mechanics_by_length",), ">=", lambda s: thresholds.MIN_MODAL_FRACTION,
             lambda f, s: _by_run(f[(f["pe"] == "learned") & f["past_training_range"]], "modal_fraction", "min"),
             bounds=UNIT),
    # RoPE's attention logits depend on the relative offset alone, by the rotation's algebra: an identity
    # of the encoding, which only a bug (or more than float64 rounding) breaks.
    Headline("shift: rope float64 attention-logit change (max over shifts)", ("shift_changes",), "<=",
             lambda s: thresholds.ROPE_MAX_CHANGE,
             lambda f, s: _by_run(f[(f["pe"] == "rope") & (f["dtype"] == "float64")], "attention_logit_change", "max"),
             log_scale=True, kind="sanity"),
    # A head at chance meets the MAE bar (prop1's heads at init: 0.0001), so the MAE is paired with the gain over
    # the better trivial baseline, as in prop1's checks.
    Headline("prop1: mean-field target-attention error past the range", ("prop1_prediction",), "<=",
             lambda s: thresholds.MAX_ATTENTION_MAE,
             lambda f, s: _by_run(_past(f[f["predictor"] == thresholds.PROP1_CLAIM_PREDICTOR], s).assign(
                 error=lambda g: (g["predicted_attention"] - g["measured_attention"]).abs()), "error", "mean")),
    Headline("prop1: mean-field target-attention error past the range, below the better trivial baseline's",
             ("prop1_prediction",), ">=", lambda s: thresholds.MIN_MAE_GAIN_OVER_TRIVIAL, _gain_over_trivial,
             bounds=DIFFERENCE),
    # Untrained heads already hold 0.46-0.75 of their energy in their top 4 blocks (thresholds.py), so the share
    # is paired with its margin over the same heads untrained, as in frequency's checks.
    Headline("frequency: energy share of the top 4 rotary blocks", ("frequency_summary",), ">=",
             lambda s: thresholds.MIN_TOP4_SHARE, lambda f, s: _by_run(f, "top4_share", "mean"), bounds=UNIT),
    Headline("frequency: energy share of the top 4 rotary blocks over the highest of the same heads untrained",
             ("frequency_summary", "frequency_untrained_summary"), ">",
             lambda s: thresholds.MIN_SHARE_MARGIN_OVER_UNTRAINED, _share_over_untrained, bounds=DIFFERENCE),
    Headline("frequency: alignment of the top 4 blocks with K", ("frequency_summary",), ">=",
             lambda s: thresholds.MIN_TOP4_ALIGNMENT, lambda f, s: _by_run(f, "top4_alignment", "mean"), bounds=(-1, 1)),
    # Arm 2 only: arm 1's extrapolation is set by its width and base (experiments/linear.py, control_checks).
    # A head that learned nothing does not extrapolate either: paired with arm 2's fit of the range, the
    # precondition of linear's own checks.
    Headline(f"linear, {LINEAR_ARMS[LINEAR_HEAD]}: accuracy at 4x the training length", ("linear_by_length",), "<=",
             lambda s: thresholds.CHANCE_MULTIPLE / s["vocab_size"],
             lambda f, s: _by_run(_at_four_x(f[f["arm"] == LINEAR_HEAD], s), "accuracy", "mean"), bounds=UNIT),
    Headline(f"linear, {LINEAR_ARMS[LINEAR_HEAD]}: lowest accuracy in the training range", ("linear_by_length",), ">=",
             lambda s: thresholds.LINEAR_HEAD_FIT_ACCURACY,
             lambda f, s: _by_run(f[(f["arm"] == LINEAR_HEAD) & f["in_training_range"]], "accuracy", "min"),
             bounds=UNIT),
]
CHECKED = ("headline_by_seed",)


def tables_of(inputs: dict, schema: str) -> list[pd.DataFrame]:
    """The input tables of ``schema``: the one named after it, or one per offset (``shift_changes_K1``, ...)."""
    per_offset = re.escape(schema) + PER_OFFSET.format(offset=r"\d+")
    return [table for name, table in sorted(inputs.items()) if name == schema or re.fullmatch(per_offset, name)]


def headlines_of(inputs: dict) -> list[Headline]:
    """The headlines all of whose tables are among ``inputs`` (those of the experiments that run), in order."""
    return [headline for headline in HEADLINES if all(tables_of(inputs, source) for source in headline.sources)]


def read_headline(headline: Headline, inputs: dict, settings: dict) -> pd.Series:
    """A headline's value per run, from its tables one under the other, each row with its schema (``source``)."""
    tables = [table.assign(source=source) for source in headline.sources for table in tables_of(inputs, source)]
    return headline.per_run(pd.concat(tables, ignore_index=True), settings)


def headline_by_seed(inputs: dict, settings: dict) -> pd.DataFrame:
    """One row per (headline, offset, seed) of every headline whose tables are among ``inputs``.
    ``settings``: the task's (vocab_size, train_length_max)."""
    frames = [read_headline(headline, inputs, settings).rename("value").reset_index().assign(headline=headline.name)
              for headline in headlines_of(inputs)]
    return pd.concat(frames, ignore_index=True)


def summarize_headlines(by_seed: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """Mean and 95% interval over seeds per offset and over every run ("all"), with the threshold."""
    per_offset = summarize_over_seeds(by_seed.assign(offset=by_seed["offset"].map(lambda k: f"K={k}")),
                                      ["headline", "offset"], "value")
    pooled = summarize_over_seeds(by_seed.assign(offset="all"), ["headline", "offset"], "value")
    summary = pd.concat([per_offset, pooled], ignore_index=True)
    rows = []
    for headline in headlines_in(by_seed):
        runs = meeting(by_seed, headline, settings)
        fractions = (runs.groupby(runs["offset"].map(lambda k: f"K={k}"))["meets"].mean().to_dict()
                     | {"all": runs["meets"].mean()})
        part = summary[summary["headline"] == headline.name]
        if headline.bounds is not None:  # a 95% interval past the value's own range means nothing there
            part = part.assign(ci_low=part["ci_low"].clip(*headline.bounds), ci_high=part["ci_high"].clip(*headline.bounds))
        rows.append(part.assign(threshold=headline.threshold(settings), comparison=headline.comparison,
                                fraction_of_runs_meeting=part["offset"].map(fractions)))
    return pd.concat(rows, ignore_index=True)


def headlines_in(by_seed: pd.DataFrame) -> list[Headline]:
    """The headlines with rows in ``by_seed``, in their order."""
    return [headline for headline in HEADLINES if headline.name in set(by_seed["headline"])]


def meeting(by_seed: pd.DataFrame, headline: Headline, settings: dict) -> pd.DataFrame:
    """The headline's runs, each with whether it meets the headline's threshold (``meets``)."""
    runs = by_seed[by_seed["headline"] == headline.name]
    return runs.assign(meets=COMPARISONS[headline.comparison](runs["value"], headline.threshold(settings)))


def analyze(inputs: dict, settings: dict) -> dict[str, pd.DataFrame]:
    by_seed = headline_by_seed(inputs, settings["task"])
    return {"headline_by_seed": by_seed, "headline_summary": summarize_headlines(by_seed, settings["task"])}


def checks(tables: dict[str, pd.DataFrame], settings: dict) -> list[dict]:
    """One check per headline: every run (all seeds, all offsets) meets the threshold. The share of runs meeting it
    is a mean over runs, so the seed bootstrap resamples it as seed sums."""
    by_seed, task = tables["headline_by_seed"], settings["task"]
    rows = []
    for headline in headlines_in(by_seed):
        runs = meeting(by_seed, headline, task)
        rows.append(check(headline.name, "fraction of runs meeting the headline's threshold",
                          seed_sums.mean(runs, "meets"), "==", 1.0, kind=headline.kind,
                          rule=f"== 1: each of {len(runs)} runs (every seed at every offset) has value "
                               f"{headline.comparison} {headline.threshold(task):.3g}"))
    return rows
