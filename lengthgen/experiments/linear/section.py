"""The linear page: both arms, the linear head against its softmax twin, the min-norm kernels, arm 1's sweep."""

from functools import partial

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.linear.summaries import CONTROL, HEAD, MATCHED, SWEEP_CUTOFF, comparison_lengths
from lengthgen.experiments.linear.thresholds import (CHANCE_MULTIPLE, EXTRAPOLATION_FACTOR, LINEAR_CUTOFFS,
                                                     LINEAR_HEAD_FIT_ACCURACY, MIN_SOFTMAX_ADVANTAGE)
from lengthgen.experiments.sections import distinct, markdown

ARM_NAMES = {CONTROL: "1", HEAD: "2", MATCHED: "2, softmax"}  # so that tables list arm 1 first
ranks = partial(distinct, separator="/", form="{:g}")  # several runs' ranks in one cell: "6/8"


def weights_summary(by_length: pd.DataFrame, train_length_max: int) -> pd.DataFrame:
    """Per (arm, K), means over seeds: accuracies, and distractor weights in units of |target weight|."""
    reference, far = comparison_lengths(by_length["length"], train_length_max)
    four_x = EXTRAPOLATION_FACTOR * train_length_max
    units = by_length.assign(arm=by_length["arm"].map(ARM_NAMES),
                             per_key=by_length["far_key_weight"] / by_length["target_abs_weight"],
                             mass=by_length["distractor_weight"] / by_length["target_abs_weight"])

    def at(length, column):
        return units[units["length"] == length].groupby(["arm", "offset"])[column].mean()

    return pd.DataFrame({
        "seeds": units.groupby(["arm", "offset"])["seed"].nunique(),
        "lowest in-range acc": units[units["in_training_range"]].groupby(["arm", "offset"])["accuracy"].min(),
        f"acc @{four_x}": at(four_x, "accuracy"), f"acc @{far}": at(far, "accuracy"),
        f"per-key distractor @{reference}": at(reference, "per_key"), f"per-key distractor @{far}": at(far, "per_key"),
        f"distractor mass @{far}": at(far, "mass"),
    }).rename_axis(["arm", "K"]).reset_index()


def kernel_summary(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per (arm, K), means over seeds: the trained kernel against the min-norm one (target = 1)."""
    return comparison.assign(arm=comparison["arm"].map(ARM_NAMES)).groupby(["arm", "offset"]).agg(**{
        "cut-off": ("rtol", partial(distinct, form="{:g}")), "rank": ("rank", ranks),
        "rel. error": ("relative_error", "mean"), "kernel cosine": ("kernel_cosine", "mean"),
        "max abs(trained - min-norm)": ("max_kernel_error", "mean"), "norm trained / min-norm": ("norm_ratio", "mean"),
        "row-space frac": ("row_space_fraction", "mean"), "trained per-key @far": ("trained_far_key_weight", "mean"),
        "min-norm per-key @far": ("min_norm_far_key_weight", "mean")}).rename_axis(["arm", "K"]).reset_index()


def cutoff_text(cutoffs: pd.DataFrame) -> str:
    """How much the min-norm solution's match to the trained kernel moves over the cut-offs, per arm."""
    spans = cutoffs.groupby("arm")["relative_error"].agg(["min", "max"]).reindex([CONTROL, HEAD]).dropna()
    return (f"Over the cut-offs {', '.join(f'{rtol:g}' for rtol in LINEAR_CUTOFFS)}, the relative error of every run "
            "spans " + "; ".join(f"{low:.3g} to {high:.3g} in arm {ARM_NAMES[arm]}" for arm, (low, high) in
                                 spans.iterrows()) + ".")


def sweep_summary(sweep: pd.DataFrame) -> pd.DataFrame:
    """Arm 1's closed-form sweep per (d, base), means over offsets: conditioning, far weight, accuracy at n."""
    length = int(sweep["length"].max())
    return sweep.groupby(["d_model", "rope_base"]).agg(**{
        "condition number": ("condition_number", "max"), "rank": ("rank", ranks),
        f"min-norm per-key @{length}": ("far_key_weight", "mean"), f"acc @{length}": ("accuracy", "mean"),
    }).rename_axis(["d", "base"]).reset_index()


def extrapolation_text(by_length: pd.DataFrame, linear: dict, train_length_max: int, vocab_size: int) -> str:
    """Whether arm 2, the linear head, extrapolates: its accuracy at 4x against its bar, and its softmax twin's."""
    four_x, bar = EXTRAPOLATION_FACTOR * train_length_max, CHANCE_MULTIPLE / vocab_size
    at_4x = by_length[by_length["length"] == four_x].groupby("arm")["accuracy"].mean()
    head, softmax = at_4x[HEAD], at_4x[MATCHED]
    does = ("does extrapolate, so the claim that a head without softmax does not fails here" if head > bar
            else "does not extrapolate")
    return (f"**Does the linear head extrapolate?** At n = {four_x} ({EXTRAPOLATION_FACTOR}x the longest training "
            f"length), arm 2 at base {linear['rope_base']:g} has mean accuracy {head:.3f} over seeds and K, "
            f"{head * vocab_size:.1f}x chance (1/V = {1 / vocab_size:.4g}), where the claim allows at most "
            f"{CHANCE_MULTIPLE}/V = {bar:.3g}: it {does}. Its matched softmax head has {softmax:.3f} there.")


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    """The linear experiment's page, from its tables and its settings."""
    by_length, comparison = tables["linear_by_length"], tables["linear_comparison"]
    task, linear, model = settings["task"], settings["linear"], settings["model"]
    control, train_max = linear["min_norm"], task["train_length_max"]
    conditions = comparison.groupby("arm")["condition_number"].max()
    far = comparison_lengths(by_length["length"], train_max)[1]
    return "\n\n".join([
        "## linear",
        "**Claim** (the paper): without softmax normalization, training selects a min-norm interpolant that does not "
        "extrapolate. Arm 2, the linear-attention head, tests the claim; arm 1, a min-norm interpolant, is a control.",
        f"**Arm 1.** A kernel k(delta) = w . phi(delta) over d = {control['d_model']} rotary features (base "
        f"{control['rope_base']:g}) weights each key directly, no softmax. Plain SGD on the squared error from w = 0 "
        f"(lr {control['lr']:g}, batch {control['batch_size']}, {control['steps']} steps) converges to the minimum-norm "
        f"interpolant of k(delta) = [delta = K], delta = 0..{train_max - 1} (condition number "
        f"{conditions.get(CONTROL, float('nan')):.3g}). Width and base decide its outcome (a far key's weight scales as "
        "1/sqrt(d); a base >= 1 makes the basis singular), so it is shown as a sweep over both, and its checks are "
        "sanity checks.",
        f"**Arm 2.** The factorized rope head (d = {model['d_model']}, base {linear['rope_base']:g}) with its logits "
        f"used directly as weights: Adam (lr {linear['lr']:g}, batch {linear['batch_size']}, {linear['steps']} steps), "
        f"cross-entropy. Its base departs from the sweep's {model['rope_base']:g}, where its basis is singular and it "
        "did not fit its range; its checks ask first that it fit every in-range length of every run. Its "
        f"content-averaged kernel (condition number {conditions.get(HEAD, float('nan')):.3g}) is compared with the "
        "min-norm one at the cut-off that matches it best, the reading most favourable to the claim.",
        extrapolation_text(by_length, linear, train_max, task["vocab_size"]),
        f"**Is it the softmax?** The matched control is arm 2 with its softmax, the same base, seeds, K and training. "
        f"Rule, fixed before any run of this head: at each K its mean accuracy at n = {EXTRAPOLATION_FACTOR * train_max}"
        f" minus arm 2's is at least {MIN_SOFTMAX_ADVANTAGE:g}, where both fit every in-range length of every seed (>= "
        f"{LINEAR_HEAD_FIT_ACCURACY:g}). Per arm, means over seeds (distractor weights in units of the target's: per "
        "key, mean over keys at delta in [n/2, n); mass, summed over every other key):",
        markdown(weights_summary(by_length, train_max), floatfmt=".3g"),
        "![arm 2 against its matched softmax head: accuracy vs length](figures/linear_matched.png)",
        "Each trained kernel against the min-norm one, both divided by their value at delta = K (rel. error: "
        f"|trained - min-norm| / |min-norm| over every evaluated offset; per-key weights at n = {far}):",
        markdown(kernel_summary(comparison), floatfmt=".3g"),
        cutoff_text(tables["linear_cutoffs"]),
        f"Arm 1's sweep: the closed-form min-norm interpolant per width d and base (cut-off {SWEEP_CUTOFF:g}), its "
        "mean per-key weight in the last octave of the longest length and its accuracy there, means over K:",
        markdown(sweep_summary(tables["linear_min_norm_sweep"]), floatfmt=".3g"),
        checks_markdown(checks),
        "![linear control: accuracy, distractor weights, convergence and kernels](figures/linear_control.png)",
    ])
