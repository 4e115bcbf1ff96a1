"""The transformer page: the paper's three findings that should transfer, this pipeline's steps hypothesis, checks."""

import numpy as np
import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.checks.rule_history import changes_naming
from lengthgen.experiments.frequency.thresholds import MIN_TOP_SHARE
from lengthgen.experiments.sections import YES_NO, decimals, distinct, markdown, spread, wide_markdown
from lengthgen.experiments.transformer.summaries import prediction_factor, rope_drops
from lengthgen.experiments.transformer.thresholds import (MIN_RETRIEVAL_ATTENTION, STEP_KERNEL_MARGIN, STEP_MIN_DROP,
                                                          STEP_PREDICTION_FACTOR)

def steps_markdown(drops: pd.DataFrame, predictions: pd.DataFrame) -> str:
    """Per rope model: its largest drop past the range, whether it is a step, the first step found and predicted."""
    rows = drops.merge(predictions, on=["offset", "seed"], how="outer").sort_values(["offset", "seed"])
    return markdown({
        "K": rows["offset"], "seed": rows["seed"], "largest drop at": decimals(rows["position"], 0, "none"),
        "accuracy before, after": decimals(rows["accuracy_before"]) + ", " + decimals(rows["accuracy_after"]),
        "drop": decimals(rows["size"]), "a step": rows["step"].map(YES_NO).fillna("-"),
        "first step found": decimals(rows["found_step"], 0, "none"),
        "predicted step": decimals(rows["predicted_step"], 0, "none"),
        "closest unseen gap (leads)": decimals(rows["closest_unseen_gap"])})


def step_reach(margin: float = STEP_KERNEL_MARGIN) -> str:
    """Where the kernel predicts a step, in words: with no margin, where an unseen offset's s reaches s(K)."""
    return "reaches s(K)" if margin == 0 else f"comes back within {margin:g} x its lead of s(K)"


def step_rule_timing(history_of=changes_naming) -> str:
    """When the step rule (``STEP_MIN_DROP``) was set and changed, as the rule history records it: a predicate."""
    changes = history_of("STEP_MIN_DROP", "transformer")
    if not changes:
        return "has no entry in the rule history"
    timing = {True: "before the data it judges was seen", False: "after data it judges had been seen",
              None: "at a time the rule history does not record"}
    first, later = changes[0], changes[1:]
    return (f"was set in {first.commit}, {timing[first.blind]} ({first.data_seen})"
            + "".join(f"; its use changed in {change.commit}, {timing[change.blind]}" for change in later))


def within_factor(runs: pd.DataFrame, found: str) -> int:
    """How many of ``runs`` have their ``found`` position within ``STEP_PREDICTION_FACTOR`` of the predicted step."""
    return sum(prediction_factor(row.predicted_step, getattr(row, found)) <= STEP_PREDICTION_FACTOR
               for row in runs.itertuples())


def steps_finding(drops: pd.DataFrame, predictions: pd.DataFrame, history_of=changes_naming) -> str:
    """Per K: the rope models in a step, the kernel's predictions against the steps found (and its false alarms) and
    against every model's largest drop; and when the step rule was set."""
    parts = []
    for offset, runs in predictions.merge(drops, on=["offset", "seed"]).groupby("offset", sort=True):
        stepped, unstepped = runs[runs["found_step"].notna()], runs[runs["found_step"].isna()]
        parts.append(f"At K={offset}, {int(runs['step'].sum())} of {len(runs)} rope models fall in a step; the kernel "
                     f"predicts {within_factor(stepped, 'found_step')} of the {len(stepped)} steps and "
                     f"{within_factor(runs, 'position')} of the {len(runs)} largest drops within a factor "
                     f"{STEP_PREDICTION_FACTOR:g}, and a step in {int(unstepped['predicted_step'].notna().sum())} of "
                     f"the {len(unstepped)} models without one (false alarms).")
    return (" ".join(parts) + f" The step rule ({STEP_MIN_DROP:g}) {step_rule_timing(history_of)}. A drop below it "
            "is still a drop.")


def carrier_markdown(carrier: pd.DataFrame, heads: pd.DataFrame, untrained: pd.DataFrame) -> str:
    """Per head of every rope model: attention at K, whether it retrieves, its peak offset, its carrier, and at init."""
    keys = ["offset", "seed", "layer", "head"]
    peaks = heads.loc[heads.groupby(keys)["mean_weight"].idxmax(), [*keys, "delta", "mean_weight"]]
    at_init = untrained[[*keys, "attention_at_offset", "top4_share"]]
    rows = carrier.merge(peaks, on=keys).merge(at_init, on=keys, suffixes=("", "_init")).sort_values(keys)
    return markdown({
        "K": rows["offset"], "seed": rows["seed"], "head": "L" + rows["layer"].astype(str) + "H" + rows["head"].astype(str),
        "attention at K": decimals(rows["attention_at_offset"]), "retrieves": rows["retrieves"].map(YES_NO),
        "peak offset (weight)": rows["delta"].astype(str) + " (" + decimals(rows["mean_weight"], 2) + ")",
        "top-4 share": decimals(rows["top4_share"]), "top-4 alignment": decimals(rows["top4_alignment"]),
        "kernel peak": rows["peak_delta"], "kernel vs logit (corr.)": decimals(rows["kernel_logit_correlation"]),
        "at init: attention at K, top-4 share": decimals(rows["attention_at_offset_init"]) + ", "
                                                 + decimals(rows["top4_share_init"])})


def carrier_finding(carrier: pd.DataFrame, untrained: pd.DataFrame, n_blocks: int) -> str:
    """The rope models with several retrieving heads and with none, the baseline the heads at init set, and, with 4
    blocks per head or fewer, why the share's check cannot hold."""
    per_model = carrier.groupby(["offset", "seed"])["retrieves"].sum()
    none = int((per_model == 0).sum())
    return " ".join([
        f"In {int((per_model > 1).sum())} of {len(per_model)} rope models more than one head retrieves; the carrier "
        "checks judge every one.",
        *([f"No head retrieves in {none} of {len(per_model)} rope models: the work is split over heads or layers, as "
           "each head's peak offset shows."] if none else []),
        "The baseline is each head at its seeded init (the weights its training started from), measured the same way: "
        f"there {int((untrained['top4_share'] >= MIN_TOP_SHARE).sum())} of {len(untrained)} heads already have a top-4 "
        f"share of at least {MIN_TOP_SHARE:g}, so a retrieving head's share counts as learned only where it exceeds "
        "the same head's at init.",
        *([f"With {n_blocks} blocks per head, every head holds all its energy in its top 4, trained or not, so that "
           "check cannot hold."] if n_blocks <= 4 else [])])


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    """The transformer's page, every number read from the tables."""
    model, task = settings["transformer"], settings["task"]
    windows, changes, carrier = (tables[f"transformer_{name}"] for name in ("windows", "shift_changes", "carrier"))
    predictions, train_max = tables["transformer_step_predictions"], task["train_length_max"]
    head_dim = model["d_model"] // model["n_heads"]
    drops, untrained = rope_drops(tables["transformer_by_position"], train_max), tables["transformer_untrained_carrier"]

    return "\n\n".join([
        "## transformer: do the phenomenon, the equivariance and the carrier transfer?",
        f"A causal decoder ({model['n_layers']} pre-norm layers, {model['n_heads']} heads of width {head_dim}, d_model "
        f"{model['d_model']}) with rope or learned positions in every layer, trained at K = {distinct(windows['offset'])} "
        f"to give at each position t >= K the token at t - K, on lengths {task['train_length_min']}..{train_max} (Adam, "
        f"lr {model['lr']:g}, batch {model['batch_size']}, {model['steps']} steps, {model['precision']}; seeds "
        f"{distinct(windows['seed'])}), and evaluated on {model['eval_samples']} sequences per length.",
        f"**Phenomenon.** Accuracy over the last {train_max} positions of each length (the single head's query there): "
        f"mean [min, max] over seeds; * in the training range; chance {1 / task['vocab_size']:.4f}.",
        wide_markdown(windows.groupby(["pe", "offset", "length"])["accuracy"].agg(spread, ".3f"), ["encoding", "K"],
                      lambda n: f"n={n}{'*' if n <= train_max else ''}"),
        f"**Steps.** A drop at position p: the mean accuracy over the {train_max} positions before p minus that over the "
        f"{train_max} from p on (longest length). A step is a drop of at least {STEP_MIN_DROP:g}: a far offset "
        "overtaking the target, not a graceful decay. This pipeline's hypothesis: the strongest head's kernel s(delta) "
        f"predicts a step at the first unseen offset where s {step_reach()}; its lead is s(K) minus the median of s "
        "over the other in-range offsets, and the closest unseen gap s(K) minus the largest s at an unseen offset, in "
        "leads. Per rope model:",
        steps_markdown(drops, predictions),
        steps_finding(drops, predictions),
        f"**Equivariance.** Every position id shifted by s, on lengths {distinct(changes['length'])}: the largest change "
        "of any output logit over seeds and lengths (undefined: ids past the learned table).",
        wide_markdown(changes.groupby(["offset", "pe", "dtype", "shift"])["output_logit_change"].max().map(
            lambda value: "undefined" if np.isnan(value) else f"{value:.2e}"), ["K", "encoding", "dtype"], "s={}".format),
        f"**Carrier.** A head retrieves when at least {MIN_RETRIEVAL_ATTENTION:g} of its mean attention on in-range "
        f"sequences is on offset K. Its content-averaged logit kernel, split into its {head_dim // 2} rotary blocks as "
        "in the frequency experiment: the share of its energy in its top 4 blocks, their energy-weighted alignment "
        "cos(K theta + phi), the offset where it peaks, and its correlation with the head's realized logits.",
        carrier_markdown(carrier, tables["transformer_heads"], untrained),
        carrier_finding(carrier, untrained, head_dim // 2),
        "![shift equivariance of the transformer](figures/transformer_shift.png)",
        "![accuracy by position and the retrieving heads](figures/transformer.png)",
        checks_markdown(checks),
    ])
