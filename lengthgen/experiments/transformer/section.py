"""The transformer experiment's RESULTS.md section: the three findings, each with its table, and the checks."""

import numpy as np
import pandas as pd

from lengthgen.checks.check import checks_markdown, verdict
from lengthgen.checks.rule_history import changes_naming
from lengthgen.experiments.transformer.summaries import (FINDINGS, PAPER_FINDINGS, prediction_factor, retrieving,
                                                         rope_drops, rope_floor_by_length)
from lengthgen.experiments.frequency.thresholds import MIN_TOP_ALIGNMENT, MIN_TOP_SHARE
from lengthgen.experiments.transformer.thresholds import (MIN_RETRIEVAL_ATTENTION, STEP_KERNEL_MARGIN, STEP_MIN_DROP,
                                                          STEP_PREDICTION_FACTOR)
from lengthgen.checks.shared_rules import ABOVE_CHANCE_FACTOR


def _spread(values: pd.Series, digits: str = ".3f", center: str = "mean") -> str:
    """``center`` (mean or median) [min, max]."""
    return f"{getattr(values, center)():{digits}} [{values.min():{digits}}, {values.max():{digits}}]"


def windows_markdown(windows: pd.DataFrame, train_length_max: int) -> str:
    """Per (encoding, K) row and length column: mean [min, max] over seeds of the last-window accuracy."""
    cells = windows.groupby(["pe", "offset", "length"])["accuracy"].agg(_spread).unstack("length")
    cells.columns = [f"n={n}{'*' if n <= train_length_max else ''}" for n in cells.columns]
    table = cells.fillna("-").rename_axis(index=["encoding", "K"]).reset_index()
    return table.to_markdown(index=False, disable_numparse=True)


def floor_markdown(windows: pd.DataFrame, vocab_size: int) -> str:
    """Per K row and length column: rope's lowest last-window accuracy over seeds, and whether it clears the
    phenomenon's bar (``ABOVE_CHANCE_FACTOR`` x chance) there."""
    bar = ABOVE_CHANCE_FACTOR / vocab_size
    floor = rope_floor_by_length(windows)
    floor["cell"] = floor["accuracy"].map(lambda value: f"{value:.3f}" + ("" if value >= bar else " (below)"))
    table = floor.pivot(index="offset", columns="length", values="cell")
    table.columns = [f"n={n}" for n in table.columns]
    return table.rename_axis(index="K").reset_index().to_markdown(index=False, disable_numparse=True)


def _position(value) -> str:
    return "none" if pd.isna(value) else str(int(value))


def steps_markdown(steps: pd.DataFrame) -> str:
    """Every step found: where, and the window means before and after."""
    if steps.empty:
        return "No run has a step."
    table = pd.DataFrame({"encoding": steps["pe"], "K": steps["offset"], "seed": steps["seed"],
                          "position": steps["position"], "accuracy before": steps["accuracy_before"].map("{:.3f}".format),
                          "after": steps["accuracy_after"].map("{:.3f}".format)})
    return table.sort_values(["encoding", "K", "seed", "position"]).to_markdown(index=False, disable_numparse=True)


def steps_finding(steps: pd.DataFrame, windows: pd.DataFrame, train_length_max: int) -> str:
    """Whether rope's accuracy past the range falls in steps or decays gracefully, run by run, in words."""
    runs = windows.loc[windows["pe"] == "rope", ["offset", "seed"]].drop_duplicates()
    stepped = steps[(steps["pe"] == "rope") & (steps["position"] >= train_length_max)].sort_values(
        ["offset", "seed", "position"])
    if stepped.empty:
        return (f"No rope model's accuracy falls in a step past the range (a drop of {STEP_MIN_DROP:g} within a "
                "window): where it decays, it decays gracefully.")
    where = "; ".join(f"K={row.offset} seed {row.seed} at position {row.position} ({row.accuracy_before:.3f} to "
                      f"{row.accuracy_after:.3f})" for row in stepped.itertuples())
    n_stepped = len(stepped[["offset", "seed"]].drop_duplicates())
    return (f"rope's accuracy past the range falls in steps, not gracefully, in {n_stepped} of the {len(runs)} rope "
            f"models: {where}. At a step a far offset overtakes the target, and the accuracy drops at once.")


def drops_markdown(drops: pd.DataFrame) -> str:
    """Every rope model's largest drop past the range (``rope_drops``): where, its size, whether it is a step."""
    rows = drops.sort_values(["offset", "seed"])
    return pd.DataFrame({
        "K": rows["offset"], "seed": rows["seed"], "position": rows["position"],
        "accuracy before": rows["accuracy_before"].map("{:.3f}".format),
        "after": rows["accuracy_after"].map("{:.3f}".format), "drop": rows["size"].map("{:.3f}".format),
        f"a step (>= {STEP_MIN_DROP:g})": rows["step"].map({True: "yes", False: "no"}),
    }).to_markdown(index=False, disable_numparse=True)


def size_range(sizes: pd.Series) -> str:
    """``0.100`` for one size (or equal ones), ``0.100 to 0.400`` otherwise."""
    low, high = f"{sizes.min():.3f}", f"{sizes.max():.3f}"
    return low if low == high else f"{low} to {high}"


def step_rule_timing(history_of=changes_naming) -> str:
    """When the step rule (``STEP_MIN_DROP``) was set and changed, relative to the data it judges, as the rule history
    (``history_of``: ``rule_history.changes_naming``) records it: a predicate of "the step rule"."""
    changes = history_of("STEP_MIN_DROP", "transformer")
    if not changes:
        return "has no entry in the rule history"

    def timing(change) -> str:
        return {True: "before the data it judges was seen", False: "after data it judges had been seen",
                None: "at a time the rule history does not record"}[change.blind]

    first, later = changes[0], changes[1:]
    text = f"was set in {first.commit}, {timing(first)} ({first.data_seen})"
    return text + "".join(f"; its use changed in {change.commit}, {timing(change)}" for change in later)


def drops_finding(drops: pd.DataFrame, history_of=changes_naming) -> str:
    """Per K, every rope model's largest drop: how many are steps, and the size and position of each; and when the
    step rule was set (``step_rule_timing``)."""
    parts = []
    for offset, runs in drops.sort_values(["offset", "seed"]).groupby("offset", sort=True):
        each = ", ".join(f"seed {row.seed} by {row.size:.3f} at position {row.position}"
                         f"{' (a step)' if row.step else ''}" for row in runs.itertuples())
        parts.append(f"K={offset}: {int(runs['step'].sum())} of {len(runs)} reach a step ({each})")
    return (f"Every rope model's largest drop past the range: {'; '.join(parts)}. The step rule (a drop of at least "
            f"{STEP_MIN_DROP:g}) {step_rule_timing(history_of)}. A drop below it is still a drop.")


def predictions_markdown(predictions: pd.DataFrame, drops: pd.DataFrame) -> str:
    """Per rope model: the step its carrier kernel predicts, the first step found past the range, their factor, and
    the model's largest drop past the range (``rope_drops``) whether or not it is a step."""
    rows = predictions.sort_values(["offset", "seed"])
    largest = drops.set_index(["offset", "seed"])
    return pd.DataFrame({
        "K": rows["offset"], "seed": rows["seed"], "s(K)": rows["kernel_at_offset"].map("{:.2f}".format),
        "lead over in-range median": rows["kernel_lead"].map("{:.2f}".format),
        "closest unseen gap (leads)": rows["closest_unseen_gap"].map("{:.3f}".format),
        "predicted step": rows["predicted_step"].map(_position), "found step": rows["found_step"].map(_position),
        "factor": [f"{prediction_factor(row.predicted_step, row.found_step):.2f}" if pd.notna(row.found_step) else "-"
                   for row in rows.itertuples()],
        "largest drop (position: size)": [
            f"{largest.loc[(row.offset, row.seed), 'position']}: {largest.loc[(row.offset, row.seed), 'size']:.3f}"
            if (row.offset, row.seed) in largest.index else "-" for row in rows.itertuples()],
    }).to_markdown(index=False, disable_numparse=True)


def _models(count: int) -> str:
    return f"{count} model{'' if count == 1 else 's'}"


def drop_prediction_finding(predictions: pd.DataFrame, drops: pd.DataFrame) -> str:
    """Per K, the kernel's predictions counted against every rope model's largest drop, not only the steps."""
    paired = predictions.merge(drops, on=["offset", "seed"])
    parts = []
    for offset, runs in paired.groupby("offset", sort=True):
        hits = sum(prediction_factor(row.predicted_step, row.position) <= STEP_PREDICTION_FACTOR
                   for row in runs.itertuples())
        unpredicted = runs[runs["predicted_step"].isna()]
        parts.append(f"K={offset}: {hits} of {len(runs)} within a factor {STEP_PREDICTION_FACTOR:g}, no predicted "
                     f"step in {_models(len(unpredicted))}" + ("" if unpredicted.empty else
                                                               f" (drops of {size_range(unpredicted['size'])})"))
    return ("Counted against every rope model's largest drop past the range instead of the steps alone, the kernel "
            f"predicts: {'; '.join(parts)}.")


def prediction_finding(predictions: pd.DataFrame) -> str:
    """Per K, whether the kernel predicts the steps, in counts: hits, and false alarms among the models without one."""
    parts = []
    for offset, runs in predictions.groupby("offset", sort=True):
        stepped, unstepped = runs[runs["found_step"].notna()], runs[runs["found_step"].isna()]
        hits = sum(prediction_factor(row.predicted_step, row.found_step) <= STEP_PREDICTION_FACTOR
                   for row in stepped.itertuples())
        false_alarms = int(unstepped["predicted_step"].notna().sum())
        parts.append(f"K={offset}: {hits} of the {len(stepped)} rope steps predicted within a factor "
                     f"{STEP_PREDICTION_FACTOR:g}, a step predicted in {int(runs['predicted_step'].notna().sum())} of "
                     f"its {_models(len(runs))}, and {false_alarms} of the {_models(len(unstepped))} without a step "
                     f"{'has' if false_alarms == 1 else 'have'} one all the same (false alarms)")
    return "The strongest head's kernel against the steps found: " + "; ".join(parts) + "."


def shift_markdown(changes: pd.DataFrame) -> str:
    """Per (encoding, dtype, K): the largest output-logit change over seeds and lengths at each shift
    (NaN, shown undefined, where no seed and length defines the shift)."""
    largest = changes.groupby(["pe", "dtype", "offset", "shift"])["output_logit_change"].max().unstack("shift")
    shown = largest.apply(lambda column: column.map(lambda value: "undefined" if np.isnan(value) else f"{value:.2e}"))
    shown.columns = [f"s={s}" for s in shown.columns]
    table = shown.rename_axis(index=["encoding", "dtype", "K"]).reset_index()
    return table.sort_values(["K", "encoding", "dtype"]).to_markdown(index=False, disable_numparse=True)


def peak_offsets(heads: pd.DataFrame) -> pd.Series:
    """Per (offset, seed, layer, head): the head's peak offset and its weight, as ``1 (0.93)``."""
    peaks = heads.loc[heads.groupby(["offset", "seed", "layer", "head"])["mean_weight"].idxmax()]
    cells = peaks["delta"].astype(str) + " (" + peaks["mean_weight"].map("{:.2f}".format) + ")"
    return pd.Series(cells.to_numpy(), index=pd.MultiIndex.from_frame(peaks[["offset", "seed", "layer", "head"]]))


def carrier_markdown(carrier: pd.DataFrame, heads: pd.DataFrame, untrained: pd.DataFrame) -> str:
    """One row per head of every rope model: its attention at K, whether it retrieves, its peak offset, its carrier,
    and the same (layer, head) at the model's init."""
    keys = ["offset", "seed", "layer", "head"]
    rows = carrier.sort_values(keys)
    peaks = peak_offsets(heads)
    at_init = untrained.set_index(keys)
    return pd.DataFrame({
        "K": rows["offset"], "seed": rows["seed"], "head": [f"L{row.layer}H{row.head}" for row in rows.itertuples()],
        "attention at K": rows["attention_at_offset"].map("{:.3f}".format),
        "retrieves": rows["retrieves"].map({True: "yes", False: "no"}),
        "peak offset (weight)": [peaks.loc[(row.offset, row.seed, row.layer, row.head)] for row in rows.itertuples()],
        "top-4 share": rows["top4_share"].map("{:.3f}".format),
        "top-4 alignment": rows["top4_alignment"].map("{:.3f}".format), "peak delta": rows["peak_delta"],
        "carrier vs realized logit (corr.)": rows["kernel_logit_correlation"].map("{:.3f}".format),
        "same head untrained: attention at K, top-4 share, top-4 alignment": [
            "{:.3f}, {:.3f}, {:.3f}".format(*at_init.loc[(row.offset, row.seed, row.layer, row.head),
                                                         ["attention_at_offset", "top4_share", "top4_alignment"]])
            for row in rows.itertuples()],
    }).to_markdown(index=False, disable_numparse=True)


def baseline_text(n_blocks: int) -> str:
    """What the table of heads at init is, and the rule it sets; with 4 blocks or fewer, why that rule fails."""
    text = ("The baseline: every head of every rope model at init, what a carrier that learned nothing looks like: "
            "median [min, max], and how many heads reach the retrieving heads' bars. A top-4 share counts as "
            "learned only when every retrieving head holds more than every one of the same heads at init, in every "
            "seed (the check on the lowest trained share minus the highest untrained).")
    if n_blocks <= 4:
        text += (f" With {n_blocks} blocks per head, every head holds all its energy in its top 4, trained or not, "
                 "so that check cannot hold.")
    return text


def untrained_markdown(untrained: pd.DataFrame) -> str:
    """Per K: every head of every rope model at init, median [min, max] of the carrier's statistics, and how
    many heads reach the retrieving heads' absolute bars."""
    rows = []
    for offset, heads in untrained.groupby("offset", sort=True):
        rows.append({
            "K": offset, "heads at init": len(heads),
            "attention at K": _spread(heads["attention_at_offset"], center="median"),
            "top-4 share": _spread(heads["top4_share"], center="median"),
            f"share >= {MIN_TOP_SHARE:g}": f"{int((heads['top4_share'] >= MIN_TOP_SHARE).sum())}",
            "top-4 alignment": _spread(heads["top4_alignment"], center="median"),
            f"alignment >= {MIN_TOP_ALIGNMENT:g}": f"{int((heads['top4_alignment'] >= MIN_TOP_ALIGNMENT).sum())}",
        })
    return pd.DataFrame(rows).to_markdown(index=False, disable_numparse=True)


def carrier_finding(carrier: pd.DataFrame) -> str:
    """Per rope model, the heads that retrieve (``retrieves``), with their attention at K and carrier; the models
    where none does (the work split), said, not only checked."""
    models = carrier[["offset", "seed"]].drop_duplicates().sort_values(["offset", "seed"])
    judged = retrieving(carrier).sort_values(["offset", "seed", "layer", "head"])
    named = judged.groupby(["offset", "seed"]).apply(
        lambda heads: ", ".join(f"L{row.layer}H{row.head} ({row.attention_at_offset:.2f}: top-4 share "
                                f"{row.top4_share:.3f}, alignment {row.top4_alignment:.3f})"
                                for row in heads.itertuples()), include_groups=False)
    counts = judged.groupby(["offset", "seed"]).size()
    each = "; ".join(f"K={row.offset} seed {row.seed}: {named.get((row.offset, row.seed), 'none')}"
                     for row in models.itertuples())
    several, none = int((counts > 1).sum()), len(models) - len(counts)
    text = (f"Heads that retrieve (at least {MIN_RETRIEVAL_ATTENTION:g} of their attention on offset K), with their "
            f"attention at K and carrier: {each}. In {several} of {len(models)} rope models more than one head "
            "retrieves; the carrier checks judge every retrieving head, worst over seeds and heads.")
    if none:
        text += (f" No head retrieves in {none} of {len(models)} rope models: the work is split over heads or layers, "
                 "as each head's peak offset shows, and no head of theirs enters the carrier checks but the attention "
                 "check, which they fail.")
    return text


def findings_markdown(checks: pd.DataFrame) -> str:
    """Per finding: whose claim it is, how many of its evidence checks hold, and its verdict (sanity checks count
    in neither)."""
    rows = []
    for finding in FINDINGS:
        evidence = checks[(checks["claim"] == finding) & (checks["kind"] == "evidence")]
        rows.append({"finding": finding, "claimed by": "the paper" if finding in PAPER_FINDINGS else "this pipeline",
                     "evidence checks holding": f"{int(evidence['holds'].sum())}/{len(evidence)}",
                     "verdict": verdict(checks[checks["claim"] == finding])})
    return pd.DataFrame(rows).to_markdown(index=False)


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    """The transformer section of RESULTS.md, every number read from the tables."""
    model, task = settings["transformer"], settings["task"]
    windows, changes = tables["transformer_windows"], tables["transformer_shift_changes"]
    carrier, untrained = tables["transformer_carrier"], tables["transformer_untrained_carrier"]
    seeds = ", ".join(map(str, sorted(windows["seed"].unique())))
    head_dim = model["d_model"] // model["n_heads"]
    drops = rope_drops(tables["transformer_by_position"], task["train_length_max"])
    return "\n\n".join([
        "## transformer: do the phenomenon, the equivariance and the carrier transfer?",
        f"A causal decoder of {model['n_layers']} pre-norm layers, {model['n_heads']} heads of width {head_dim} "
        f"(d_model {model['d_model']}), trained on the full-sequence task (at every position t >= K, the token at "
        f"t - K) on lengths {task['train_length_min']}..{task['train_length_max']}: Adam, lr {model['lr']:g}, batch "
        f"{model['batch_size']}, {model['steps']} steps, {model['precision']}; seeds {seeds}. Its positional "
        "encoding is the single head's registry entry, applied in every layer. Evaluated on the first "
        f"{model['eval_samples']} sequences of each evaluation length, at every position.",
        "**Phenomenon.** Accuracy over the last window of each length: the last "
        f"{task['train_length_max']} positions with a target (the analogue of the single head's query at that "
        "length); mean [min, max] over seeds; * in the training range. Chance is "
        f"{1 / task['vocab_size']:.4f}.",
        windows_markdown(windows, task["train_length_max"]),
        "rope's lowest last-window accuracy over seeds at every length; (below): under the phenomenon's bar, "
        f"{ABOVE_CHANCE_FACTOR:g} x chance, which it must clear at every length past the range (the check on the "
        "lowest of them), as the single head must at 4x.",
        floor_markdown(windows, task["vocab_size"]),
        f"**Steps.** Per run, on its longest length: a step at position p where the mean accuracy over the "
        f"{task['train_length_max']} positions before p exceeds that over the {task['train_length_max']} from p on by "
        f"at least {STEP_MIN_DROP:g} (the largest drop of each stretch of such positions). A step is what a far "
        "offset overtaking the target looks like, not a graceful dilution: the phenomenon's graceful decay "
        "requires that no rope run has one past the range.",
        steps_markdown(tables["transformer_steps"]),
        steps_finding(tables["transformer_steps"], windows, task["train_length_max"]),
        "Every rope model's largest drop past the range, a step or not: the position p past the range where the "
        "mean accuracy falls most from the window before p to the window from p on.",
        drops_markdown(drops),
        drops_finding(drops),
        "The carrier kernel s(delta) (below) of each model's strongest head, the one with the most attention at "
        "delta = K, predicts a step at the first unseen offset where it "
        f"comes back within {STEP_KERNEL_MARGIN:g} x its lead (s(K) minus the median of s over the other in-range "
        "offsets) of s(K): there an average distractor ties the target. The closest unseen gap is "
        "(s(K) - max over unseen offsets of s) / lead; the found step is the first rope step past the range.",
        predictions_markdown(tables["transformer_step_predictions"], drops),
        prediction_finding(tables["transformer_step_predictions"]),
        drop_prediction_finding(tables["transformer_step_predictions"], drops),
        "**Equivariance.** Every position id shifted by s, on sequences of length "
        f"{', '.join(map(str, sorted(changes['length'].unique())))}; the largest change of any output logit "
        "against the unshifted model, max over seeds and lengths (undefined: position ids past the learned "
        "table's rows).",
        shift_markdown(changes),
        "**Carrier.** In each rope model, the mean attention weight of every head at each offset delta on "
        f"in-range sequences (length {task['train_length_max']}); a head retrieves when it puts at least "
        f"{MIN_RETRIEVAL_ATTENTION:g} of its attention on delta = K. Every head's content-averaged logit kernel over "
        "the real query and key states it sees is decomposed "
        f"into its {head_dim // 2} rotary blocks as in the frequency experiment (top-4 share, energy-weighted top-4 "
        "alignment cos(K theta + phi), peak delta of the kernel); the next column correlates that kernel with the "
        "head's mean realized logit at each delta, and the last measures the same (layer, head) the same way in "
        "the model's seeded initialization (`training.seeded_init` at its seed: the weights its training started "
        "from), on the same sequences. The carrier here keeps the fixed top 4 blocks at every width, the frequency "
        "experiment's earlier rule, not its top D/16 (its tables' top_share and top_alignment columns hold the "
        "top-D/16 values, which no check here reads).",
        carrier_markdown(carrier, tables["transformer_heads"], untrained),
        carrier_finding(carrier),
        baseline_text(head_dim // 2),
        untrained_markdown(untrained),
        "![shift equivariance of the transformer](figures/transformer_shift.png)",
        "![accuracy by position and the retrieving heads](figures/transformer.png)",
        "**Claim**: the phenomenon (near perfect in range, well above chance at every length past it, a graceful "
        "decay), the equivariance and the carrier transfer to a multi-layer, multi-head transformer. The steps "
        "finding, that the strongest head's kernel predicts where the accuracy steps down, is this pipeline's own "
        "hypothesis, not the paper's claim. Verdict per finding:",
        findings_markdown(checks),
        checks_markdown(checks),
    ])
