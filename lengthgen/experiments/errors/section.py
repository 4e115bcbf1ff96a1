"""The errors page: every wrong answer as a ranking error or a dilution error, measured and predicted; its checks."""

import pandas as pd

from lengthgen.checks.check import checks_markdown
from lengthgen.experiments.errors.summaries import pooled_past_range
from lengthgen.experiments.errors.thresholds import MIN_DILUTION_SHARE, MIN_UNSEEN_WINNER_SHARE
from lengthgen.experiments.sections import distinct, markdown


def share(part: float, whole: float) -> str:
    return "-" if whole == 0 else f"{part / whole:.3f}"


def past_range_markdown(by_length: pd.DataFrame) -> str:
    """Per (encoding, K), pooled over seeds and lengths past the range: the checked shares."""
    rows = [[pe, str(offset), f"{cell['n_wrong']} of {cell['n_sequences']}",
             share(cell["n_dilution_error"], cell["n_wrong"]), share(cell["n_ranking_error"], cell["n_wrong"]),
             share(cell["n_winning_unseen"], cell["n_ranking_error"])]
            for pe in ("rope", "learned") for offset, cell in pooled_past_range(by_length, pe).iterrows()]
    return markdown(rows, ["encoding", "K", "wrong answers", "dilution errors (share of wrong)",
                           "ranking errors (share of wrong)", "ranking errors won at an unseen offset"])


def finding(by_length: pd.DataFrame) -> str:
    """rope's split past the range, pooled over offsets, seeds and lengths, against the account."""
    pooled = pooled_past_range(by_length, "rope").sum()
    if pooled["n_wrong"] == 0:
        return "rope gives no wrong answer past the training range: there is nothing to split."
    dilution = pooled["n_dilution_error"] / pooled["n_wrong"]
    return (f"Pooled over K, {dilution:.3f} of rope's {pooled['n_wrong']} wrong answers past the range are dilution "
            f"errors, and {share(pooled['n_winning_unseen'], pooled['n_ranking_error'])} of its ranking errors are "
            "won at an unseen offset. " + ("Most are dilution errors, as the account predicts." if dilution >=
                                           MIN_DILUTION_SHARE else "This contradicts the account: most are ranking "
            "errors, which no sharpening of the softmax mends (save where the winning key holds the target's token)."))


def section(tables: dict[str, pd.DataFrame], checks: pd.DataFrame, settings: dict) -> str:
    by_length, train_length_max = tables["errors_by_length"], settings["task"]["train_length_max"]
    return "\n\n".join([
        "## errors: ranking errors and dilution errors",
        f"Every wrong answer of the sweep's heads (seeds {distinct(by_length['seed'])}), by cause: a "
        "**ranking error** when a key other than the target has the highest logit, a **dilution error** when the "
        "target has it yet the softmax readout picks another token. A winning key's offset is unseen when it is at "
        f"least {train_length_max}. **The paper's account predicts** that past the range rope keeps the target's "
        f"logit highest while more keys share the softmax: at least {MIN_DILUTION_SHARE:g} of its wrong answers "
        "there are dilution errors. Sanity check: a rope logit depends on the offset alone, so keys that outscore "
        f"the target there sit at unseen offsets (at least {MIN_UNSEEN_WINNER_SHARE:g} of its ranking errors). The "
        "learned head pins (mechanics), so its errors are ranking errors: reported, not checked.",
        "Past the range, per K, pooled over seeds and lengths (the figure splits every answer by length):",
        past_range_markdown(by_length),
        finding(by_length),
        "![every answer by cause, and where rope's ranking errors' winning keys lie](figures/error_split.png)",
        checks_markdown(checks),
    ])
