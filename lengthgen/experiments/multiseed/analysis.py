"""The multiseed experiment: every headline number per (offset, seed), summarized over seeds.

Each headline is one number per trained run, read from an experiment's tables, with the threshold its experiment's
rule uses (or none, for a baseline); each experiment declares its own (``<name>/headlines.py``,
``lengthgen/checks/headlines.py``), gathered in ``multiseed/headlines.py``. Its ``headline_by_seed`` table is what
every claim's verdict is read from (``lengthgen/experiments/claims.py``, ``lengthgen/checks/judgment.py``), in this
run, each confirmation run and each robustness point. It judges nothing itself: its page shows every run's value
beside the mean, and how many runs meet each rule, as the spread.

Its inputs are the headline tables of the experiments that run (``catalog.plan`` fills them in
from each declaration's ``headline_tables``), named by their files: ``accuracy_by_length``, or
``shift_changes_K1``, ``shift_changes_K2``, ... for a per-offset experiment. A headline reads the
tables of its schemas and runs only when there is one of each.
"""

import operator
import re

import pandas as pd

from lengthgen.experiments.declaration import PER_OFFSET
from lengthgen.experiments.multiseed.headlines import HEADLINES
from lengthgen.checks.headlines import Headline
from lengthgen.checks.stats import summarize_over_seeds

COMPARISONS = {">=": operator.ge, "<=": operator.le, ">": operator.gt}
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
        part = summary[summary["headline"] == headline.name]
        if headline.bounds is not None:  # a 95% interval past the value's own range means nothing there
            part = part.assign(ci_low=part["ci_low"].clip(*headline.bounds), ci_high=part["ci_high"].clip(*headline.bounds))
        if headline.comparison is None:  # a baseline: no rule to meet
            rows.append(part.assign(threshold=float("nan"), comparison="", fraction_of_runs_meeting=float("nan")))
            continue
        runs = meeting(by_seed, headline, settings)
        fractions = (runs.groupby(runs["offset"].map(lambda k: f"K={k}"))["meets"].mean().to_dict()
                     | {"all": runs["meets"].mean()})
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
    """None: the claims are judged from ``headline_by_seed`` by their one rule (``lengthgen/checks/judgment.py``)."""
    return []
