"""Where a trained head attends past the training range (the ``mechanics`` experiment).

For one trained head and the evaluation sequences of its offset, at every length:
which key position the query attends to most (the argmax), how often that is the
single most common position (the mode), how much attention mass stays on the
positions seen in training, [0, train_length_max), and the mean attention weight at
every key position (the attention map).

The claim under test (SCIENCE.md): the learned-absolute head pins to a fixed absolute
position inside the training range, while the RoPE head, whose logits depend on
relative offset alone, keeps attending near the query.
"""

import numpy as np
import pandas as pd
import torch

from lengthgen.claims import check
from lengthgen.evaluation import TOKENS_PER_BATCH
from lengthgen.model import AttentionHead
from lengthgen.rules import MIN_MASS_IN_RANGE, MIN_MODAL_FRACTION
from lengthgen.schemas.mechanics import MECHANICS_ARGMAX_HISTOGRAM, MECHANICS_ATTENTION_PROFILE, MECHANICS_BY_LENGTH

EXPERIMENT = "mechanics"


def as_token_sets(eval_sets: dict) -> dict[int, torch.Tensor]:
    """{length: tokens (N, length)} from {length: tokens} or {length: (tokens, targets)}."""
    return {int(length): (value[0] if isinstance(value, (tuple, list)) else value) for length, value in eval_sets.items()}


@torch.no_grad()
def attention_weights(model: AttentionHead, tokens: torch.Tensor) -> torch.Tensor:
    """The query's softmax weights over every key, (N, T) float64 on the CPU, in chunks."""
    device = next(model.parameters()).device
    batch = max(1, TOKENS_PER_BATCH // tokens.shape[1])
    chunks = [model.attention(tokens[start:start + batch].to(device))[1].cpu() for start in range(0, len(tokens), batch)]
    return torch.cat(chunks).double()


def argmax_statistics(weights: torch.Tensor, train_length_max: int, offset: int) -> dict:
    """Argmax mode and mass statistics of one length's weights (N, T)."""
    argmax = weights.argmax(dim=-1)  # (N,)
    counts = torch.bincount(argmax, minlength=weights.shape[1])  # (T,)
    modal_position = int(counts.argmax())  # ties go to the lowest position
    return {
        "n_sequences": len(weights),
        "modal_position": modal_position,
        "modal_fraction": counts[modal_position].item() / len(weights),
        "modal_in_training_range": modal_position < train_length_max,
        "mass_in_training_range": weights[:, :train_length_max].sum(-1).mean().item(),
        "target_attention": weights[:, -1 - offset].mean().item(),
        "max_weight": weights.max(-1).values.mean().item(),
    }


def measure_mechanics(
    model: AttentionHead, eval_sets: dict, offset: int, seed: int, train_length_max: int
) -> dict[str, pd.DataFrame]:
    """The three mechanics tables of one trained head, keyed by table kind.

    ``eval_sets`` is {length: tokens} or {length: (tokens, targets)} (as from
    ``evaluation.eval_sets_from_frame``); every length is measured.
    """
    run = {"pe": model.config.pe, "offset": offset, "seed": seed}
    by_length, histograms, profiles = [], [], []
    for length, tokens in sorted(as_token_sets(eval_sets).items()):
        weights = attention_weights(model, tokens)  # (N, T)
        by_length.append({**run, "length": length, "past_training_range": length > train_length_max,
                          **argmax_statistics(weights, train_length_max, offset)})
        counts = torch.bincount(weights.argmax(-1), minlength=length).numpy()  # (T,)
        hit = np.flatnonzero(counts)
        histograms.append(pd.DataFrame({**run, "length": length, "position": hit, "count": counts[hit]}))
        profiles.append(pd.DataFrame({**run, "length": length, "position": np.arange(length),
                                      "mean_weight": weights.mean(0).numpy()}))
    return {
        MECHANICS_BY_LENGTH: pd.DataFrame(by_length),
        MECHANICS_ARGMAX_HISTOGRAM: pd.concat(histograms, ignore_index=True),
        MECHANICS_ATTENTION_PROFILE: pd.concat(profiles, ignore_index=True),
    }


def pinned_runs(by_length: pd.DataFrame) -> pd.DataFrame:
    """Per (pe, offset, seed) past the range: is the modal position the same at every length?"""
    past = by_length[by_length["past_training_range"]]
    return (past.groupby(["pe", "offset", "seed"])["modal_position"]
            .agg(n_positions="nunique", position=lambda p: int(p.iloc[0]))
            .assign(same_position=lambda f: f["n_positions"] == 1).reset_index())


def claims_mechanics(by_length: pd.DataFrame) -> pd.DataFrame:
    """One claim row per (encoding claim, offset); the rule is fixed above, before the data.

    learned, for every seed and every length past the range: the modal argmax position
    lies inside the training range; it is the same position at every such length; at
    least ``MIN_MODAL_FRACTION`` of the sequences attend there; at least
    ``MIN_MASS_IN_RANGE`` of the attention mass stays inside the training range.
    rope (the contrast): at no length past the range is its modal argmax position
    inside the training range.
    """
    past = by_length[by_length["past_training_range"]]
    if past.empty:
        raise ValueError("mechanics needs evaluation lengths past the training range")
    runs = pinned_runs(by_length)
    rows = []
    for offset in sorted(past["offset"].unique()):
        learned = past[(past["pe"] == "learned") & (past["offset"] == offset)]
        learned_runs = runs[(runs["pe"] == "learned") & (runs["offset"] == offset)]
        rope = past[(past["pe"] == "rope") & (past["offset"] == offset)]
        checks = [
            (f"K={offset}: learned modal argmax position lies inside the training range",
             "fraction of (seed, length) cells past the range with the modal position inside it",
             learned["modal_in_training_range"].mean(), "== 1", lambda v: v == 1.0, learned),
            (f"K={offset}: learned modal argmax position is the same at every length past the range",
             "fraction of seeds whose modal position is one position at every length past the range",
             learned_runs["same_position"].mean(), "== 1", lambda v: v == 1.0, learned_runs),
            (f"K={offset}: learned head sends most sequences to the modal position",
             "min over (seed, length) past the range of the fraction of sequences at the modal position",
             learned["modal_fraction"].min(), f">= {MIN_MODAL_FRACTION}", lambda v: v >= MIN_MODAL_FRACTION, learned),
            (f"K={offset}: learned head keeps most attention mass inside the training range",
             "min over (seed, length) past the range of the mean attention mass on positions < train_length_max",
             learned["mass_in_training_range"].min(), f">= {MIN_MASS_IN_RANGE}",
             lambda v: v >= MIN_MASS_IN_RANGE, learned),
            (f"K={offset}: rope head does not pin inside the training range (contrast)",
             "fraction of (seed, length) cells past the range with the rope modal position inside it",
             rope["modal_in_training_range"].mean(), "== 0", lambda v: v == 0.0, rope),
        ]
        for claim, statistic, value, rule, test, cells in checks:
            # A claim with no cells to check (an encoding missing from the sweep) does not hold.
            value = float(value) if len(cells) else float("nan")
            rows.append(check(EXPERIMENT, claim, statistic, value, f"{statistic} {rule}", len(cells) and test(value)))
    return pd.DataFrame(rows)


def _past_range_table(by_length: pd.DataFrame, pe: str) -> list[str]:
    """Markdown rows: per (offset, length) past the range, modal positions per seed and their stats."""
    past = by_length[by_length["past_training_range"] & (by_length["pe"] == pe)]
    lines = ["| K | length | modal position per seed | fraction at mode (mean, min) | mass in training range (mean, min) |",
             "|---|---|---|---|---|"]
    for (offset, length), cells in past.groupby(["offset", "length"]):
        cells = cells.sort_values("seed")
        positions = ", ".join(str(p) for p in cells["modal_position"])
        fraction, mass = cells["modal_fraction"], cells["mass_in_training_range"]
        lines.append(f"| {offset} | {length} | {positions} | {fraction.mean():.2f}, {fraction.min():.2f} "
                     f"| {mass.mean():.3f}, {mass.min():.3f} |")
    return lines


def section_markdown(by_length: pd.DataFrame, claims: pd.DataFrame, train_length_max: int,
                     learned_init_std: float, figure: str = "mechanics.png") -> str:
    """The mechanics section of RESULTS.md, every number read from the tables."""
    seeds = sorted(by_length["seed"].unique())
    lines = [
        f"## {EXPERIMENT}",
        "",
        "Where the trained heads attend at evaluation lengths past the training range: for each "
        "sequence the argmax-attended key position; per (encoding, K, seed, length) the most common "
        "(modal) argmax position, the fraction of sequences attending there, and the mean attention "
        f"mass on the positions seen in training, [0, {train_length_max}). "
        f"Seeds {', '.join(map(str, seeds))}; learned table initialized with std {learned_init_std:g}.",
        "",
        "**learned** (absolute table):",
        "",
        *_past_range_table(by_length, "learned"),
        "",
        "**rope** (contrast):",
        "",
        *_past_range_table(by_length, "rope"),
        "",
        "Claims (rule fixed before the data: pinning means a majority of sequences at one position "
        f"(>= {MIN_MODAL_FRACTION}) and a majority of the mass (>= {MIN_MASS_IN_RANGE}) inside the training range):",
        "",
        "| claim | rule | value | holds |",
        "|---|---|---|---|",
    ]
    for row in claims.itertuples():
        rule = row.rule.replace("|", "\\|")  # a pipe would end the markdown cell
        lines.append(f"| {row.claim} | {rule} | {row.value:.4g} | {'yes' if row.holds else 'no'} |")
    lines += ["", f"![Attention of the learned and rope heads past the training range](figures/{figure})", ""]
    return "\n".join(lines)
