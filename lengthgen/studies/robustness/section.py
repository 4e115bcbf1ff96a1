"""The robustness appendix's mechanism section: rope's errors, kernels and the two accounts across the points."""

import pandas as pd

from lengthgen.studies.robustness import DEFAULT_POINT


def mechanism_markdown(mechanism: pd.DataFrame, points: list[str]) -> str:
    """The mechanism table, each column's aggregate in its header: every number pools all K of a point."""
    rows = mechanism.set_index("point").loc[points].reset_index()
    return pd.DataFrame({
        "point": rows["point"], "rope wrong past the range (sum over K, seeds, lengths)": rows["n_wrong"],
        "ranking share of them (pooled)": rows["ranking_share_of_wrong"].map("{:.2f}".format),
        "unseen kernel peak / value at K (median over heads)": rows["unseen_peak_ratio"].map("{:.3g}".format),
        "unseen peak - value at K, logits (median over heads)": rows["unseen_peak_gap"].map("{:+.3g}".format),
        "accuracy MAE, dilution law (all heads)": rows["dilution_mae"].map("{:.3f}".format),
        "accuracy MAE, ranking (all heads)": rows["ranking_mae"].map("{:.3f}".format),
        "predicts better": rows["better_predictor"]}).to_markdown(index=False)


RANKING_MAJORITY = 0.5  # the finding: most of rope's wrong answers past the range are ranking errors


def mechanism_sentences(mechanism: pd.DataFrame) -> str:
    """The spread of the ranking share over the points, how it goes with the kernel's unseen peak, which account
    predicts the accuracy past the range better where, the largest logit gap, and where the ranking majority flips
    (the share crossing one half: a rule fixed before the default grid was read)."""
    by_point = mechanism.set_index("point")
    share = by_point["ranking_share_of_wrong"].dropna()
    text = [f"The ranking share of rope's wrong answers past the range runs from {share.min():.2f} ({share.idxmin()}) "
            f"to {share.max():.2f} ({share.idxmax()})." if len(share) else
            "rope makes no wrong answers past the range at any point."]
    paired = by_point[["ranking_share_of_wrong", "unseen_peak_ratio"]].dropna()
    if len(paired) >= 3:
        rho = paired["ranking_share_of_wrong"].corr(paired["unseen_peak_ratio"], method="spearman")
        text.append(f"Across the {len(paired)} points its rank correlation with the carrier kernel's largest value at "
                    f"unseen offsets relative to its value at K is {rho:+.2f}.")
    dilution = sorted(by_point.index[by_point["better_predictor"] != "ranking"])
    text.append(f"The ranking predictor predicts rope's accuracy past the range better (lower MAE) at "
                f"{len(by_point) - len(dilution)} of {len(by_point)} points; the dilution law at "
                f"{', '.join(dilution) or 'none'}.")
    if by_point["unseen_peak_gap"].notna().any():  # the gap in logits carries the kernel's size; the ratio does not
        point = by_point["unseen_peak_gap"].abs().idxmax()
        gap, ratio = by_point.loc[point, ["unseen_peak_gap", "unseen_peak_ratio"]]
        height = f", a kernel about {abs(gap / (ratio - 1)):.3g} logits tall at K" if ratio != 1 else ""
        text.append(f"The unseen peak's gap to the value at K is in logits, so it grows with the kernel's size, which "
                    f"the ratio does not: at {point}, the largest gap ({gap:+.3g}), the peak is {ratio:.3g} times the "
                    f"value at K{height}.")
    side = lambda value: value > RANKING_MAJORITY
    if DEFAULT_POINT in share:  # the finding, and the points where it flips
        flips = [point for point, value in share.items() if side(value) != side(share[DEFAULT_POINT])]
        text.append(f"Pooled over K, ranking errors are {'' if side(share[DEFAULT_POINT]) else 'not '}most of them at "
                    f"the default ({share[DEFAULT_POINT]:.2f}); the pooled majority flips at "
                    f"{', '.join(flips) or 'none of the points'} (per K, with its interval: the dilution-cause claim "
                    "in the claims appendix).")
    return " ".join(text)


def section(mechanism: pd.DataFrame, points: list[str]) -> str:
    """The section, from the ``robustness_mechanism`` table; ``points`` in config order, the default first."""
    return "\n\n".join(["## The mechanism across the settings", mechanism_markdown(mechanism, points),
                         mechanism_sentences(mechanism)]) + "\n"
