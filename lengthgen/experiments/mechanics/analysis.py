"""Where a trained head attends past the training range (the ``mechanics`` experiment).

For one trained head and the evaluation sequences of its offset, at every length:
which key position the query attends to most (the argmax), how often that is the
single most common position (the mode), how much attention mass stays on the
positions seen in training, [0, train_length_max), and the mean attention weight at
every key position (the attention map).

The claim under test (docs/science.md): the learned-absolute head pins to a fixed absolute
position inside the training range, while the RoPE head, whose logits depend on
relative offset alone, keeps attending near the query. The same statistics on the same
heads at their seeded init (``mechanics_untrained_by_length``, the weights each run trained
from) show what a head that learned nothing does; each check states whether those pass.
"""

from typing import NamedTuple

import numpy as np
import pandas as pd
import torch

from lengthgen.checks import seed_sums
from lengthgen.checks.check import check
from lengthgen.checks.seed_sums import SeedSums
from lengthgen.evaluation import in_chunks
from lengthgen.models.head import AttentionHead
from lengthgen.experiments.mechanics.thresholds import MIN_MASS_IN_RANGE, MIN_MODAL_FRACTION, SAME_POSITION_TOLERANCE
from lengthgen.training.loop import init_head

TABLES = ("mechanics_by_length", "mechanics_argmax_histogram", "mechanics_attention_profile")
CHECKED = ("mechanics_by_length", "mechanics_untrained_by_length")


def as_token_sets(eval_sets: dict) -> dict[int, torch.Tensor]:
    """{length: tokens (N, length)} from {length: tokens} or {length: (tokens, targets)}."""
    return {int(length): (value[0] if isinstance(value, (tuple, list)) else value) for length, value in eval_sets.items()}


@torch.no_grad()
def attention_weights(model: AttentionHead, tokens: torch.Tensor) -> torch.Tensor:
    """The query's softmax weights over every key, (N, T) float64 on the CPU, in chunks."""
    chunks = [model.attention(chunk.tokens, tables=chunk.tables)[1].cpu() for chunk in in_chunks(model, tokens)]
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
    """The three mechanics tables of one trained head, by table name (``TABLES``).

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
    return dict(zip(TABLES, (pd.DataFrame(by_length), pd.concat(histograms, ignore_index=True),
                             pd.concat(profiles, ignore_index=True))))


def analyze(inputs: dict, settings: dict) -> dict[str, pd.DataFrame]:
    """Every trained head of the sweep (rope and learned), measured on the evaluation sets of its offset; and the
    statistics of each at its seeded init (the baseline of the checks)."""
    train_length_max = settings["task"]["train_length_max"]
    measured, untrained = [], []
    for run, model in inputs["models"]:
        eval_sets, offset, seed = inputs["eval_sets"][run["offset"]], run["offset"], run["seed"]
        measured.append(measure_mechanics(model, eval_sets, offset, seed, train_length_max))
        at_init = init_head(model.config, seed).to(next(model.parameters()).device).eval()
        untrained.append(measure_mechanics(at_init, eval_sets, offset, seed, train_length_max)["mechanics_by_length"])
    tables = {table: pd.concat([tables[table] for tables in measured], ignore_index=True) for table in TABLES}
    return {**tables, "mechanics_untrained_by_length": pd.concat(untrained, ignore_index=True)}


def pinned_runs(by_length: pd.DataFrame) -> pd.DataFrame:
    """Per (pe, offset, seed) past the range: how many modal positions it has, the first, how far apart the
    farthest two lie (``spread``), and whether that is the same position within ``SAME_POSITION_TOLERANCE``."""
    past = by_length[by_length["past_training_range"]]
    return (past.groupby(["pe", "offset", "seed"])["modal_position"]
            .agg(n_positions="nunique", position=lambda p: int(p.iloc[0]), spread=lambda p: int(p.max() - p.min()))
            .assign(same_position=lambda f: f["spread"] <= SAME_POSITION_TOLERANCE).reset_index())


def checks(tables: dict[str, pd.DataFrame], settings: dict) -> list[dict]:
    return mechanics_checks(tables["mechanics_by_length"], tables["mechanics_untrained_by_length"])


class Statistic(NamedTuple):
    """One check's statistic and rule, before it is set beside the untrained heads'."""

    claim: str
    statistic: str
    value: SeedSums
    comparison: str
    threshold: float


def pinning_statistics(by_length: pd.DataFrame, offset: int) -> list[Statistic]:
    """The statistic of each check at ``offset``, from ``mechanics_by_length`` rows; the rule is fixed above,
    before the data.

    learned, for every seed and every length past the range: the modal argmax position
    lies inside the training range (the claim's primary number); it is the same position at every such length,
    within ``SAME_POSITION_TOLERANCE`` positions; at
    least ``MIN_MODAL_FRACTION`` of the sequences attend there; at least
    ``MIN_MASS_IN_RANGE`` of the attention mass stays inside the training range.
    rope (the contrast): at no length past the range is its modal argmax position
    inside the training range. An encoding missing from the rows leaves its statistics
    NaN (the mean or min of no cells), and a NaN check does not hold. Each is a statistic of seed sums (a mean
    over cells or seeds, the smallest of the drawn seeds' cells), so the seed bootstrap resamples it as numbers.
    """
    past = by_length[by_length["past_training_range"] & (by_length["offset"] == offset)]
    runs = pinned_runs(by_length)
    learned, rope = past[past["pe"] == "learned"], past[past["pe"] == "rope"]
    learned_runs = runs[(runs["pe"] == "learned") & (runs["offset"] == offset)]
    return [
        Statistic("learned modal argmax position lies inside the training range",
                  "fraction of (seed, length) cells past the range with the modal position inside it",
                  seed_sums.mean(learned, "modal_in_training_range"), "==", 1.0),
        Statistic(f"learned modal argmax position is the same, within {SAME_POSITION_TOLERANCE} position, at every "
                  "length past the range",
                  f"fraction of seeds whose modal positions past the range lie within {SAME_POSITION_TOLERANCE} "
                  "position of each other",
                  seed_sums.mean(learned_runs, "same_position"), "==", 1.0),
        Statistic("learned head sends most sequences to the modal position",
                  "min over (seed, length) past the range of the fraction of sequences at the modal position",
                  seed_sums.minimum(learned, "modal_fraction"), ">=", MIN_MODAL_FRACTION),
        Statistic("learned head keeps most attention mass inside the training range",
                  "min over (seed, length) past the range of the mean attention mass on positions < train_length_max",
                  seed_sums.minimum(learned, "mass_in_training_range"), ">=", MIN_MASS_IN_RANGE),
        Statistic("rope head does not pin inside the training range (contrast)",
                  "fraction of (seed, length) cells past the range with the rope modal position inside it",
                  seed_sums.mean(rope, "modal_in_training_range"), "==", 0.0),
    ]


def mechanics_checks(by_length: pd.DataFrame, untrained: pd.DataFrame) -> list[dict]:
    """Five checks per offset (``pinning_statistics``), each rule text with the same statistic on the same heads
    at their seeded init (``untrained``) and whether they pass it: a check that untrained heads pass could not
    tell a pinned head from one that learned nothing. (At default size they fail every one: 10 seeds, K=1..3.)"""
    past = by_length[by_length["past_training_range"]]
    if past.empty:
        raise ValueError("mechanics needs evaluation lengths past the training range")
    rows = []
    for offset in sorted(past["offset"].unique()):
        for trained, at_init in zip(pinning_statistics(by_length, offset), pinning_statistics(untrained, offset)):
            baseline = check(*at_init)
            outcome = "pass" if baseline["holds"] else "fail"
            rows.append(check(*trained, offset=offset, rule=f"{trained.comparison} {trained.threshold:g} "
                                                            f"(untrained heads: {baseline['value']:.3g}, {outcome})"))
    return rows
