"""The linear experiment's RESULTS.md section: both arms' settings, accuracy and weights, kernels against
the min-norm interpolant, the cut-off sensitivity, arm 2's training progress, the checks."""

import pandas as pd

from lengthgen.claims import checks_markdown
from lengthgen.experiments.linear import CONTROL, HEAD, comparison_lengths
from lengthgen.thresholds import EXTRAPOLATION_FACTOR, LINEAR_CUTOFFS
from lengthgen.table_schemas.linear import ARMS

FIGURE = "linear_control.png"


def markdown_table(frame: pd.DataFrame) -> str:
    return frame.to_markdown(index=False, floatfmt=".3g")


def joined(values, separator: str) -> str:
    """The distinct values of a cell, sorted: several runs' ranks ("6/8") or cut-offs ("1e-05, 0.001")."""
    return separator.join(f"{value:g}" for value in sorted(set(values)))


def weights_summary(by_length: pd.DataFrame, train_length_max: int) -> pd.DataFrame:
    """Per (arm, K), means over seeds: accuracies, and distractor weights in units of |target weight|."""
    reference, far = comparison_lengths(by_length["length"], train_length_max)
    four_x = EXTRAPOLATION_FACTOR * train_length_max
    units = by_length.assign(per_key=by_length["far_key_weight"] / by_length["target_abs_weight"],
                             mass=by_length["distractor_weight"] / by_length["target_abs_weight"])
    keys = ["arm", "offset"]

    def at(length, column):
        return units[units["length"] == length].groupby(keys)[column].mean()

    return pd.DataFrame({
        "seeds": units.groupby(keys)["seed"].nunique(),
        "in-range acc": units[units["in_training_range"]].groupby(keys)["accuracy"].mean(),
        f"acc @{four_x}": at(four_x, "accuracy"),
        f"acc @{far}": at(far, "accuracy"),
        f"per-key distractor / abs(target) @{reference}": at(reference, "per_key"),
        f"per-key distractor / abs(target) @{far}": at(far, "per_key"),
        f"distractor mass / abs(target) @{far}": at(far, "mass"),
    }).rename_axis(["arm", "K"]).reset_index()


def kernel_summary(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per (arm, K), means over seeds: the trained kernel against the min-norm one (target = 1)."""
    groups = comparison.groupby(["arm", "offset"])
    columns = {"trained_fit_error": "trained fit err", "min_norm_fit_error": "min-norm fit err",
               "relative_error": "rel. error", "kernel_cosine": "kernel cosine",
               "max_kernel_error": "max abs(trained - min-norm)",
               "coefficient_cosine": "coef cosine", "norm_ratio": "norm trained / min-norm",
               "row_space_fraction": "row-space frac", "trained_far_key_weight": "trained per-key @far",
               "min_norm_far_key_weight": "min-norm per-key @far"}
    frame = pd.DataFrame({"cut-off(s)": groups["rtol"].agg(lambda rtols: joined(rtols, ", ")),
                          "rank": groups["rank"].agg(lambda ranks: joined(ranks, "/"))})
    for column, title in columns.items():
        frame[title] = groups[column].mean()
    return frame.rename_axis(["arm", "K"]).reset_index()


def cutoff_summary(cutoffs: pd.DataFrame) -> pd.DataFrame:
    """Per (arm, cut-off), over every run: how the min-norm solution and its match depend on the cut-off."""
    groups = cutoffs.groupby(["arm", "rtol"])
    return pd.DataFrame({
        "rank": groups["rank"].agg(lambda ranks: joined(ranks, "/")),
        "min-norm norm": groups["min_norm_norm"].mean(),
        "min-norm fit err": groups["min_norm_fit_error"].mean(),
        "min-norm per-key @far": groups["min_norm_far_key_weight"].mean(),
        "rel. error: mean": groups["relative_error"].mean(),
        "min": groups["relative_error"].min(),
        "max": groups["relative_error"].max(),
        "kernel cosine": groups["kernel_cosine"].mean(),
        "coef cosine": groups["coefficient_cosine"].mean(),
        "row-space frac": groups["row_space_fraction"].mean(),
    }).reset_index().sort_values(["arm", "rtol"], ascending=[True, False]).rename(columns={"rtol": "cut-off"})


def progress_line(progress: pd.DataFrame) -> str:
    """Arm 2's training accuracy by window of steps, mean over seeds, per K."""
    means = progress.groupby(["offset", "until_step"])["accuracy"].mean()
    parts = [f"K={offset}: " + ", ".join(f"{accuracy:.3f} (to step {step})" for step, accuracy in rows.droplevel(0).items())
             for offset, rows in means.groupby(level=0)]
    return "; ".join(parts)


def numbered_arms(frame: pd.DataFrame) -> pd.DataFrame:
    """The arm column as "1" and "2", so that tables list arm 1 first."""
    return frame.assign(arm=frame["arm"].map({CONTROL: "1", HEAD: "2"}))


def arm_tally(checks: pd.DataFrame) -> str:
    """How many of each arm's checks hold."""
    of_control = checks["claim"].str.startswith(ARMS[CONTROL])
    control, head = checks.loc[of_control, "holds"], checks.loc[~of_control, "holds"]
    return f"Arm 1: {int(control.sum())}/{len(control)} checks hold; arm 2: {int(head.sum())}/{len(head)}."


def arm_1_text(control: dict, train_length_min: int, train_length_max: int, condition: float) -> str:
    return (
        f"**Arm 1, the min-norm control.** A positional kernel linear in its parameters, k(delta) = w . phi(delta) "
        f"over d = {control['d_model']} rotary features (cos and sin of delta theta_i, theta_i = base^(-2i/d), base "
        f"{control['rope_base']:g}), used directly as each key's weight (no softmax) with a fixed one-hot readout "
        f"(the output for token v is the summed weight of the keys holding v), trained on lengths "
        f"{train_length_min}..{train_length_max} from w = 0 by plain SGD (lr {control['lr']:g}, batch "
        f"{control['batch_size']}, {control['steps']} steps) on the squared error against the target's one-hot. "
        "Squared loss because gradient descent from zero on least squares never leaves the span of the training "
        "offsets' features and so converges to the minimum-norm interpolant; cross-entropy would head for a "
        "max-margin direction instead, and Adam would leave that span. The closed form is min |w| subject to "
        f"w . phi(delta) = [delta = K] for delta = 0..{train_length_max - 1}. Over those offsets the basis has "
        f"condition number {condition:.3g}, so the pseudo-inverse needs no cut-off. "
        "(With a base >= 1 every frequency is at most 1 rad, and the basis over consecutive offsets is numerically "
        "singular at any width; with a base below 1 the frequencies, taken modulo 2 pi on integer offsets, "
        "spread over (0, pi].)")


def arm_2_text(head: dict, condition: float) -> str:
    cutoff_grid = ", ".join(f"{rtol:g}" for rtol in LINEAR_CUTOFFS)
    return (
        f"**Arm 2, the linear-attention head.** The factorized RoPE head (d = {head['d_model']}, base "
        f"{head['rope_base']:g}) with its logits used directly as weights, trained with Adam (lr {head['lr']:g}, "
        f"batch {head['batch_size']}, {head['steps']} steps) and cross-entropy. Its kernel is content-averaged "
        "through its value path (the push a key gives to its own token's logit margin; at delta = 0 the key is the "
        "query's own token). Its rotary basis over the training offsets has condition number "
        f"{condition:.3g}: the min-norm solution there is set by the singular-value "
        f"cut-off, so it is computed at relative cut-offs {cutoff_grid} and compared at the "
        "cut-off whose kernel is closest to the trained one (lowest relative error |trained - min-norm| / "
        "|min-norm| over every evaluated offset: the reading most favourable to the claim).")


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    """The ``## linear`` section of RESULTS.md, from the experiment's tables and its settings."""
    by_length, comparison = tables["linear_by_length"], tables["linear_comparison"]
    task, linear, model = settings["task"], settings["linear"], settings["model"]
    head = {**linear, "d_model": model["d_model"], "rope_base": model["rope_base"]}
    conditions = comparison.groupby("arm")["condition_number"].max()
    reference, far = comparison_lengths(by_length["length"], task["train_length_max"])
    return "\n\n".join([
        "## linear",
        "**Claim**: without softmax normalization, training selects a min-norm interpolant that does not "
        "extrapolate. Two arms; **arm 1 tests the claim as stated, in a setting where it is well-posed; arm 2 asks "
        "whether the linear-attention head behaves like it.**",
        arm_1_text(linear["min_norm"], task["train_length_min"], task["train_length_max"],
                   conditions.get(CONTROL, float("nan"))),
        arm_2_text(head, conditions.get(HEAD, float("nan"))),
        "**Units**: every kernel, trained or min-norm, of either arm, is divided by its own value at delta = K, and "
        "measured weights by the mean |target weight| at the same length, so all fit errors, norms, norm ratios and "
        "distractor weights are in units of the target's weight. Per-key distractor weight at length n: mean "
        "|weight| over the keys at delta in [n/2, n), the target excluded (the 'does not decay' checks compare it "
        f"at n = {far} with n = {reference}); distractor mass: summed |weight| of every non-target key. Fit error: "
        f"max |k - ideal| over the training offsets. Cells: mean over seeds.",
        "Accuracy and distractor weights (measured on the evaluation sets):",
        markdown_table(weights_summary(numbered_arms(by_length), task["train_length_max"])),
        "Trained kernel against the min-norm one (arm 1: exact; arm 2: at its most favourable cut-off; "
        f"per-key weights at n = {far}):",
        markdown_table(kernel_summary(numbered_arms(comparison))),
        "Sensitivity to the cut-off (every run; relative error and cosine between the trained and the min-norm "
        "kernel over every evaluated offset):",
        markdown_table(cutoff_summary(numbered_arms(tables["linear_cutoffs"]))),
        "Arm 2's training accuracy, mean over seeds and over windows of its steps: "
        f"{progress_line(tables['linear_training_progress'])}.",
        checks_markdown(checks),
        arm_tally(checks),
        f"![linear control: accuracy, distractor weights, convergence and kernels](figures/{FIGURE})",
    ])
