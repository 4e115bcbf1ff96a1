"""Which experiments run under a config, and why each of the others is left out.

Every experiment is one ``Experiment`` entry of ``CATALOG``, in the order of RESULTS.md: its
name (``lengthgen/experiments/<name>.py``, rules ``analyze_<name>`` and ``plot_<name>``), the
sections it writes (one per offset for ``shift``: ``shift_K1``, ...; one, its name, otherwise),
and what it needs from the config, as requirements: functions config -> None when met, else a
one-line reason. ``plan(config)`` returns the experiments that run, their sections, and the
reason for each left out. An experiment that cannot run under a config (say, the sweep trains
only rope, so nothing is left to compare) is not an error: the workflow leaves it out, runs the
others, and RESULTS.md prints its reason.

Adding an experiment:

1. append one ``Experiment`` entry here, with the requirements its claim needs;
2. in the workflow, add its ``analyze_<name>`` / ``plot_<name>`` rules, and one entry per section
   to ``FIGURES_BY_SECTION`` (``workflow/rules/figures.smk``); if multiseed reads a headline
   from it, its tables to ``HEADLINE_TABLES`` (``workflow/rules/analysis.smk``) and its
   headlines, with ``experiment=<name>``, to ``experiments.multiseed.HEADLINES``.

``EXPERIMENTS`` (``workflow/rules/common.smk``), the figures, multiseed's headlines and the
report follow the plan. This module imports no torch: the workflow reads it at start-up.
"""

from dataclasses import dataclass
from typing import Callable, NamedTuple

Requirement = Callable[[dict], str | None]


def trained(*encodings: str, by: str = "sweep") -> Requirement:
    """Needs every one of ``encodings`` in ``config[by]["pe"]`` (the sweep's, or the transformer's):
    the claim compares or reads them."""

    def unmet(config: dict) -> str | None:
        missing = [pe for pe in encodings if pe not in config[by]["pe"]]
        if missing:
            return (f"needs {' and '.join(encodings)} in {by}.pe, which has {', '.join(config[by]['pe'])} "
                    f"(missing: {', '.join(missing)})")
        return None

    return unmet


def seeds(count: int) -> Requirement:
    """Needs at least ``count`` seeds in the sweep."""

    def unmet(config: dict) -> str | None:
        given = len(config["sweep"]["seed"])
        return f"needs at least {count} seeds in sweep.seed, which has {given}" if given < count else None

    return unmet


def lengths_past(factor: int, count: int) -> Requirement:
    """Needs ``count`` evaluation lengths of at least ``factor`` x task.train_length_max."""

    def unmet(config: dict) -> str | None:
        bound = factor * config["task"]["train_length_max"]
        past = [length for length in config["task"]["eval_lengths"] if length >= bound]
        if len(past) < count:
            return (f"needs {count} of task.eval_lengths >= {factor} x task.train_length_max = {bound}, which has "
                    f"{len(past)} ({', '.join(map(str, past)) or 'none'})")
        return None

    return unmet


@dataclass(frozen=True)
class Experiment:
    name: str
    needs: tuple[Requirement, ...] = ()
    sections: Callable[[dict], list[str]] | None = None  # config -> its RESULTS.md sections; default [name]

    def reason_left_out(self, config: dict) -> str | None:
        """The first unmet requirement, or None when the experiment runs under ``config``."""
        return next((reason for reason in (need(config) for need in self.needs) if reason), None)

    def section_names(self, config: dict) -> list[str]:
        return self.sections(config) if self.sections else [self.name]


CATALOG = [
    Experiment("base", needs=(trained("rope", "learned"),)),
    Experiment("mechanics", needs=(trained("rope", "learned"),)),
    # Encodings the sweep does not train are measured at init (shift.pe_at_init), so shift always runs.
    Experiment("shift", sections=lambda config: [f"shift_K{offset}" for offset in config["shift"]["offsets"]]),
    Experiment("prop1", needs=(trained("rope"),)),
    Experiment("frequency", needs=(trained("rope"),)),
    # Trains its own rope heads without softmax; its decay rate compares two lengths past 2x the range.
    Experiment("linear", needs=(lengths_past(2, count=2),)),
    Experiment("variants"),  # trains every encoding it names
    # Cures the sweep's rope and learned heads; its predictions build on prop1's.
    Experiment("cures", needs=(trained("rope", "learned"),)),
    Experiment("transformer", needs=(trained("rope", "learned", by="transformer"),)),
    Experiment("multiseed", needs=(seeds(2),)),  # every headline in every seed
]


class Plan(NamedTuple):
    experiments: list[str]  # the experiments that run, in report order
    sections: list[str]  # their sections (claims/<section>.parquet, sections/<section>.md), in report order
    left_out: dict[str, str]  # experiment -> why it does not run under this config


def plan(config: dict, catalog: list[Experiment] = CATALOG) -> Plan:
    """What runs under ``config`` (derived settings already filled), and why the rest does not."""
    running, sections, left_out = [], [], {}
    for experiment in catalog:
        reason = experiment.reason_left_out(config)
        if reason:
            left_out[experiment.name] = reason
        else:
            running.append(experiment.name)
            sections.extend(experiment.section_names(config))
    return Plan(running, sections, left_out)
