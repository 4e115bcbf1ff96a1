"""The families of trained models, one row each: where its runs live, which runs it has under a config, the
settings its models are built and trained with, the trainer that trains them, the table its evaluation writes, and
how the training summary names it.

The workflow reads this table at start-up (its training and evaluation rules, and the files of every declared
input: ``declaration.Models("variants")``, ``RangeFits("linear")``, ...), the experiment runner reads it to load a
family's models, and the report to name the families; so this module imports no torch. A family's name is the one
spelling everywhere: its rules are ``train_<name>`` and ``evaluate_<name>``.

Paths are relative to the results folder: a run's model files are ``models/<folder><run folder>/``, its evaluation
``evaluations/<folder><run folder>.parquet``.
"""

import itertools
from collections.abc import Callable
from dataclasses import dataclass

RUN_FOLDER = "pe~{pe}/seed~{seed}/offset~{offset}"  # a run of a family that trains several encodings
SEED_OFFSET_FOLDER = "seed~{seed}/offset~{offset}"  # a run of a family of one encoding (rope)
Run = dict  # {"pe": str, "seed": int, "offset": int}


def section(config: dict, name: str, keys: tuple[str, ...] | None = None) -> dict:
    """The ``keys`` of ``config[name]`` (all by default), sorted, so that reordering config.yaml or changing other
    keys does not look like a change of a rule's params."""
    values = config[name]
    return {key: values[key] for key in sorted(keys or values)}


@dataclass(frozen=True)
class Family:
    name: str
    folder: str  # below models/ and evaluations/, ending in "/" ("": its run folders sit there directly)
    run_folder: str  # one run's folder below ``folder``: RUN_FOLDER or SEED_OFFSET_FOLDER
    grid: Callable[[dict], tuple[list[str], list[int], list[int]]]  # its runs' encodings, seeds, offsets
    model: Callable[[dict], dict]  # its model settings under a config (besides the task's trained_positions)
    train: Callable[[dict], dict]  # its training settings (training.loop.TrainConfig)
    trainer: str  # "head" (training.loop.train_heads) or "transformer" (train_transformers)
    evaluation_table: str | None  # the table an evaluate_<name> job writes per run; None: no such job
    range_fit_family: str  # its name in the training summary (tables/training.parquet), shared by families in one folder
    display_name: str  # that summary family as RESULTS.md names it
    single_softmax_head: bool  # the model the variants' account predicts for (science/variant_predictions.py)
    runtime: int  # minutes of one training job, for a cluster's scheduler
    # Earlier families whose runs share its folder: it trains only its encodings they do not train.
    trained_elsewhere: tuple[str, ...] = ()


def _head(config: dict) -> dict:
    return section(config, "model")


def _linear_grid(config: dict) -> tuple[list[str], list[int], list[int]]:
    """Arm 2's runs (the linear experiment): rope at every sweep seed and offset."""
    return ["rope"], config["sweep"]["seed"], config["sweep"]["offset"]


def _linear_training(config: dict) -> dict:
    """Arm 2's training settings (the linear experiment's own)."""
    return section(config, "linear", ("steps", "batch_size", "lr", "warmup_fraction"))


FAMILIES = {family.name: family for family in [
    # The sweep: one head per (pe, seed, offset) of sweep.
    Family("sweep", folder="", run_folder=RUN_FOLDER,
           grid=lambda config: (config["sweep"]["pe"], config["sweep"]["seed"], config["sweep"]["offset"]),
           model=_head, train=lambda config: section(config, "train"), trainer="head",
           evaluation_table="accuracy_by_length", range_fit_family="head",
           display_name="single heads (sweep and variants)", single_softmax_head=True, runtime=30),
    # The variants: every encoding of variants.pe, trained like the sweep; a run the sweep has is trained there once.
    Family("variants", folder="", run_folder=RUN_FOLDER,
           grid=lambda config: (config["variants"]["pe"], config["variants"]["seeds"], config["variants"]["offsets"]),
           model=_head, train=lambda config: section(config, "train"), trainer="head",
           evaluation_table="accuracy_by_length", range_fit_family="head",
           display_name="single heads (sweep and variants)", single_softmax_head=True, runtime=30,
           trained_elsewhere=("sweep",)),
    # The linear-attention control (arm 2): the sweep's rope head without a softmax, at a rotary base of its own
    # (the config schema says why).
    Family("linear", folder="linear/", run_folder=SEED_OFFSET_FOLDER, grid=_linear_grid,
           model=lambda config: {**_head(config), "attention": "linear", "rope_base": config["linear"]["rope_base"]},
           train=_linear_training, trainer="head", evaluation_table=None, range_fit_family="linear",
           display_name="linear-attention heads (arm 2)", single_softmax_head=False, runtime=60),
    # Arm 2's matched softmax head: arm 2 with its softmax back (same base, seeds, offsets and training), so that the
    # linear experiment can tell "no extrapolation without softmax" from "no extrapolation at this base". Not a head
    # the variants' account predicts for: its base is not the one its encoding, rope, declares.
    Family("linear_softmax", folder="linear_softmax/", run_folder=SEED_OFFSET_FOLDER, grid=_linear_grid,
           model=lambda config: {**_head(config), "attention": "softmax", "rope_base": config["linear"]["rope_base"]},
           train=_linear_training, trainer="head", evaluation_table=None, range_fit_family="linear_softmax",
           display_name="softmax heads at arm 2's base (linear)", single_softmax_head=False, runtime=60),
    # The cure trained in: the sweep's rope head with log-length scaling of its logits (SSMax-style) in training and
    # evaluation, by the length over the longest training length.
    Family("log_length", folder="log_length/", run_folder=SEED_OFFSET_FOLDER,
           grid=lambda config: (["rope"], config["cures"]["seeds"], config["sweep"]["offset"]),
           model=lambda config: {**_head(config), "logit_scale": "log_length",
                                 "reference_length": config["task"]["train_length_max"]},
           train=lambda config: section(config, "train"), trainer="head", evaluation_table=None,
           range_fit_family="log_length", display_name="log-length heads (cures)", single_softmax_head=True,
           runtime=60),
    # The transformer: a causal decoder per (pe, seed, offset) of its own, smaller grid, on the full-sequence task.
    Family("transformer", folder="transformer/", run_folder=RUN_FOLDER,
           grid=lambda config: (config["transformer"]["pe"], config["transformer"]["seeds"],
                                config["transformer"]["offsets"]),
           model=lambda config: {**section(config, "transformer", ("n_layers", "n_heads", "d_model", "init")),
                                 **section(config, "model", ("rope_base", "learned_init_std"))},
           train=lambda config: section(config, "transformer", ("steps", "batch_size", "lr", "log_every",
                                                                "precision", "warmup_fraction")),
           trainer="transformer", evaluation_table="transformer_by_position", range_fit_family="transformer",
           display_name="transformers", single_softmax_head=False, runtime=60),
]}


def family(name: str) -> Family:
    """The family ``name``; a KeyError names it and the families there are."""
    if name not in FAMILIES:
        raise KeyError(f"no model family {name!r}; the families: {', '.join(FAMILIES)}")
    return FAMILIES[name]


def runs(name: str, config: dict, pe=None, offset: int | None = None) -> list[Run]:
    """The runs of family ``name`` under ``config``, in grid order (encoding, then seed, then offset); optionally
    only the encodings ``pe`` or one ``offset``."""
    encodings, seeds, offsets = family(name).grid(config)
    return [{"pe": each_pe, "seed": int(seed), "offset": int(each_offset)}
            for each_pe, seed, each_offset in itertools.product(encodings, seeds, offsets)
            if (pe is None or each_pe in pe) and (offset is None or each_offset == offset)]


def run_path(name: str, run: Run | None = None) -> str:
    """One run's folder below models/ (and its evaluation's name below evaluations/); without ``run``, the
    pattern with the wildcards {pe} (if the family's folders name it), {seed} and {offset}."""
    pattern = family(name).folder + family(name).run_folder
    return pattern.format(**run) if run is not None else pattern


def model_files(name: str, config: dict, file: str = "model.pt", pe=None, offset: int | None = None) -> list[str]:
    """One ``file`` (model.pt, training_curve.parquet, range_fit.parquet) per run of the family."""
    return [f"models/{run_path(name, run)}/{file}" for run in runs(name, config, pe, offset)]


def evaluation_files(name: str, config: dict, pe=None, offset: int | None = None) -> list[str]:
    return [f"evaluations/{run_path(name, run)}.parquet" for run in runs(name, config, pe, offset)]


def trained_encodings(name: str, config: dict) -> list[str]:
    """The encodings the family's own training jobs train: its grid's, less those of ``trained_elsewhere``."""
    elsewhere = {pe for other in family(name).trained_elsewhere for pe in family(other).grid(config)[0]}
    return [pe for pe in family(name).grid(config)[0] if pe not in elsewhere]


def every_encoding(config: dict) -> set[str]:
    """Every encoding a model of ``config`` is trained with, in any family."""
    return {pe for name in FAMILIES for pe in family(name).grid(config)[0]}


def trained_seeds(name: str, config: dict) -> list[int]:
    """The seeds one training job of the family trains side by side."""
    return list(family(name).grid(config)[1])


def job_runs(name: str, config: dict, wildcards: dict) -> list[Run]:
    """The runs of one training or evaluation job, every seed of one (pe, offset): from its {pe} (or the family's
    one encoding) and {offset} wildcards."""
    pe = wildcards.get("pe") or family(name).grid(config)[0][0]
    return [{"pe": pe, "seed": seed, "offset": int(wildcards["offset"])} for seed in trained_seeds(name, config)]


def model_settings(name: str, config: dict) -> dict:
    """The settings a model of the family is built with besides its encoding and vocabulary: its config settings and
    ``trained_positions``, the longest training length (the rows a learned position table stores)."""
    return {**family(name).model(config), "trained_positions": config["task"]["train_length_max"]}


def expected_settings(name: str, config: dict) -> dict:
    """What every model file of the family holds besides its encoding (``checkpoint.load_model`` checks it): the
    task's vocabulary, then its model settings."""
    return {"vocab_size": config["task"]["vocab_size"], **model_settings(name, config)}


def train_settings(name: str, config: dict) -> dict:
    return family(name).train(config)


def range_fit_files(config: dict) -> dict[str, list[str]]:
    """Every trained model's range_fit.parquet, by its family in the training summary (a run that two families of
    one folder share, once)."""
    files: dict[str, list[str]] = {}
    for name, each in FAMILIES.items():
        group = files.setdefault(each.range_fit_family, [])
        group += [path for path in model_files(name, config, "range_fit.parquet") if path not in group]
    return files


def display_names() -> dict[str, str]:
    """Each family of the training summary as RESULTS.md names it."""
    return {each.range_fit_family: each.display_name for each in FAMILIES.values()}


def single_softmax_heads() -> tuple[str, ...]:
    """The training summary's families of single softmax heads."""
    return tuple(dict.fromkeys(each.range_fit_family for each in FAMILIES.values() if each.single_softmax_head))
