"""Which experiments run under a config, and why each of the others is left out.

Every experiment is one ``Experiment`` declaration in ``CATALOG`` (``declaration.py`` says what
one declares), in the order of RESULTS.md. ``plan(config)`` returns the experiments that run,
their sections, and the reason for each left out. An experiment that cannot run under a config
(say, the sweep trains only rope, so nothing is left to compare) is not an error: the workflow
leaves it out, runs the others, and RESULTS.md prints its reason. The workflow makes one
``analyze_<name>`` and one ``plot_<name>`` job of each declaration; adding an experiment is its
module, its plot, its section text and one entry here (docs/adding-an-experiment.md).

This module imports no torch: the workflow reads it at start-up.
"""

from dataclasses import replace
from typing import NamedTuple

from lengthgen.experiments.declaration import (EvalSets, Evaluations, Experiment, Models, RangeFits, Requirement,
                                               Table, TrainingCurves, schema_of)

SWEEP_HEADS = ("rope", "learned")
ROPE_BASES = ("rope@base=100", "rope", "rope@base=1e6")  # the variants' rope at three rotary bases


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


TASK = ("task.vocab_size", "task.train_length_min", "task.train_length_max", "task.eval_lengths")

CATALOG = [
    Experiment("generalization", reads={"accuracy_by_length": Table("accuracy_by_length")}, settings=TASK,
               tables=("accuracy_summary",), figures=("generalization",), needs=(trained(*SWEEP_HEADS),),
               headline_tables=("accuracy_by_length",)),
    Experiment("mechanics", reads={"models": Models(pe=SWEEP_HEADS), "eval_sets": EvalSets()},
               settings=(*TASK, "model.learned_init_std", "model.init"),
               tables=("mechanics_by_length", "mechanics_argmax_histogram", "mechanics_attention_profile",
                       "mechanics_untrained_by_length"),
               figures=("mechanics",), needs=(trained(*SWEEP_HEADS),),
               headline_tables=("mechanics_by_length", "mechanics_untrained_by_length")),
    # Encodings the sweep does not train are measured at init (shift.pe_at_init), so shift always runs.
    Experiment("shift", reads={"models": Models(), "eval_sets": EvalSets("shift.offsets")},
               settings=(*TASK, "shift", "sweep.pe", "sweep.seed"), tables=("shift_changes_K{offset}",),
               figures=("shift_equivariance_K{offset}",), per_offset="shift.offsets",
               headline_tables=("shift_changes_K{offset}",)),
    # Measures the rope heads at their seeded init itself (the baseline of its MAE checks).
    Experiment("prop1", reads={"models": Models(pe=("rope",)), "accuracy_by_length": Table("accuracy_by_length"),
                               "eval_sets": EvalSets()},
               settings=(*TASK, "prop1.n_samples"),
               tables=("prop1_prediction", "prop1_untrained_prediction", "prop1_error", "prop1_kernel",
                       "prop1_kernel_summary"),
               figures=("prop1_validation_K{offset}",), figures_per="sweep.offset", needs=(trained("rope"),),
               headline_tables=("prop1_prediction",)),
    Experiment("frequency", reads={"models": Models(pe=("rope",))}, settings=TASK,
               tables=("frequency_blocks", "frequency_summary", "frequency_untrained_summary",
                       "frequency_singular_values"),
               figures=("frequency_rank",), needs=(trained("rope"),),
               headline_tables=("frequency_summary", "frequency_untrained_summary")),
    # Trains its own rope heads without softmax, and the same heads with it (matched); its decay rate compares two
    # lengths past 2x the range.
    Experiment("linear", reads={"models": Models("linear"), "matched": Models("linear_softmax"),
                                "curves": TrainingCurves("linear"), "eval_sets": EvalSets()},
               settings=(*TASK, "linear", "model.d_model", "model.rope_base"),
               tables=("linear_by_length", "linear_kernel", "linear_cutoffs", "linear_comparison",
                       "linear_convergence", "linear_training_progress", "linear_min_norm_sweep"),
               figures=("linear_control", "linear_matched"), needs=(lengths_past(2, count=2),),
               headline_tables=("linear_by_length",)),
    # Trains every encoding it names; reads its fire models for the threshold each learned (fire_fixed's is fixed).
    Experiment("variants", reads={"evaluations": Evaluations("variants"), "fits": RangeFits("variants"),
                                  "fire_models": Models("variants", pe=("fire",))},
               settings=(*TASK, "variants.pe"), tables=("variants_summary", "variants_classes",
                                                        "variants_fire_thresholds"),
               figures=("pe_variants",)),
    # Cures the sweep's rope and learned heads; its predictions build on prop1's.
    Experiment("cures", reads={"models": Models(pe=SWEEP_HEADS), "trained": Models("log_length"), "eval_sets": EvalSets(),
                               "prop1_prediction": Table("prop1_prediction")},
               settings=(*TASK, "prop1.n_samples"), tables=("cures_by_length", "cures_prediction", "cures_recovery"),
               figures=("dilution_cures",), needs=(trained(*SWEEP_HEADS),), headline_tables=("cures_by_length",)),
    # Splits every wrong answer of the sweep's heads into ranking and dilution errors; prop1's predictions predict it.
    Experiment("errors", reads={"models": Models(pe=SWEEP_HEADS), "eval_sets": EvalSets(),
                                "prop1_prediction": Table("prop1_prediction")}, settings=TASK,
               tables=("errors_by_length", "errors_winning_offset", "errors_predicted_split"), figures=("error_split",),
               needs=(trained(*SWEEP_HEADS),), headline_tables=("errors_by_length",)),
    # Predicts the rope-base variants' accuracy past the range from their parameters: does the order come out?
    Experiment("rope_bases", reads={"models": Models("variants", pe=ROPE_BASES), "evaluations": Evaluations("variants")},
               settings=(*TASK, "prop1.n_samples"), tables=("rope_bases_prediction", "rope_bases_order"),
               figures=("rope_bases",), needs=(trained(*ROPE_BASES, by="variants"),)),
    Experiment("transformer", reads={"models": Models("transformer"), "evaluations": Evaluations("transformer"),
                                     "eval_sets": EvalSets("transformer.offsets")},
               settings=(*TASK, "transformer", "shift.shifts", "shift.lengths"),
               tables=("transformer_by_position", "transformer_windows", "transformer_shift_changes",
                       "transformer_heads", "transformer_blocks", "transformer_carrier",
                       "transformer_untrained_carrier", "transformer_steps", "transformer_step_predictions"),
               figures=("transformer_shift", "transformer"), needs=(trained(*SWEEP_HEADS, by="transformer"),),
               headline_tables=("transformer_windows", "transformer_steps")),
    # Every headline of the experiments that run, in every seed: it reads their headline tables (plan).
    Experiment("multiseed", reads={}, settings=TASK, tables=("headline_by_seed", "headline_summary"),
               figures=("multiseed_results",), needs=(seeds(2),)),
]
HEADLINE_READER = "multiseed"


class Plan(NamedTuple):
    running: list[Experiment]  # the experiments that run, in report order
    sections: list[str]  # their sections (claims/<section>.parquet, sections/<section>.md), in report order
    left_out: dict[str, str]  # experiment -> why it does not run under this config

    @property
    def experiments(self) -> list[str]:
        return [experiment.name for experiment in self.running]


def headline_tables(experiments: list[Experiment], config: dict) -> list[Table]:
    """The tables the multiseed experiment reads its headlines from, of the experiments that run."""
    return [Table(table.format(offset=offset), schema_of(table)) if experiment.per_offset else Table(table)
            for experiment in experiments for table in experiment.headline_tables
            for offset in (experiment.offsets(config, experiment.per_offset) or [None])]


def not_chosen(name: str, chosen: list[str] | None) -> str | None:
    """Why an experiment is left out by the config's ``experiments`` list (None: every one runs)."""
    if chosen is None or name in chosen:
        return None
    return f"not among the config's experiments ({', '.join(chosen)})"


def plan(config: dict, catalog: list[Experiment] = CATALOG) -> Plan:
    """What runs under ``config`` (derived settings already filled), and why the rest does not."""
    running, sections, left_out = [], [], {}
    for experiment in catalog:
        reason = not_chosen(experiment.name, config.get("experiments")) or experiment.reason_left_out(config)
        if reason:
            left_out[experiment.name] = reason
            continue
        if experiment.name == HEADLINE_READER:
            experiment = replace(experiment, reads={table.name: table for table in headline_tables(running, config)})
        running.append(experiment)
        sections.extend(experiment.section_names(config))
    return Plan(running, sections, left_out)
