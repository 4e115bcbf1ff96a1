"""errors: why a trained head answers wrong, split by cause, at every evaluation length.

Every wrong answer of the sweep's rope and learned heads on the evaluation sets is one of two kinds:

- a *ranking error*: the key with the highest attention logit is not the target (some other key
  outranks it; a tie counts, as the target is then not the one highest key);
- a *dilution error*: the target has the highest logit, yet the softmax readout, which weighs every
  key, picks another token.

The paper's account of rope's decay past the training range is dilution: the target keeps the
largest logit while more keys share the softmax, so its wrong answers should be dilution errors.
A hard-attention readout (cures) fixes a dilution error and no ranking error whose winning key holds
another token. For every ranking error the winning key's offset (query position minus its position:
0 is the query itself) tells where it lies: at an offset seen in training, 0..train_length_max-1, or
at one never seen. Its distribution is kept as counts in bins that double in width (``offset_bins``),
so the tables stay small at any length and number of sequences (a dozen bins per run and length at 1024).

Logits and answers come from the head's own ``attention`` and ``predict``: no part of it is re-implemented.

Each account also predicts the split, from the parameters alone (``errors_predicted_split``, rope heads):
the dilution law (``prediction_errors.DILUTION_LAW_PREDICTOR``) says every wrong answer is a dilution
error, so its predicted dilution share is its predicted error, 1 - accuracy, and its ranking share 0;
the ranking account (prop1's ``ranking``) predicts as ranking errors the answers where a key holding
another token outranks the target, 1 - mean P_rank over uniform query and target tokens (prop1's
``ranking_probability``), and no dilution errors. Both are set beside the measured shares of all answers.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from lengthgen.checks import seed_sums
from lengthgen.checks.check import check
from lengthgen.models.encodings.rope import Rotary
from lengthgen.evaluation import in_chunks
from lengthgen.science.dilution import ranking_probability
from lengthgen.science.kernel import logit_kernel
from lengthgen.models.head import AttentionHead
from lengthgen.experiments.errors.thresholds import MIN_DILUTION_SHARE, MIN_UNSEEN_WINNER_SHARE
from lengthgen.science.prediction_errors import DILUTION_LAW_PREDICTOR
from lengthgen.experiments.errors.summaries import past_range_cells, pooled_past_range
from lengthgen.checks.seed_sums import SeedSums

TABLES = ("errors_by_length", "errors_winning_offset", "errors_predicted_split")
SPLIT_PREDICTORS = (DILUTION_LAW_PREDICTOR, "ranking")
CHECKED = ("errors_by_length",)


@dataclass(frozen=True)
class Answers:
    """Per sequence of one length, each (N,): is the answer right, is the target the highest-logit key,
    and the offset of the highest-logit key other than the target (the winner, where the target is outranked)."""

    correct: np.ndarray
    target_on_top: np.ndarray
    winning_offset: np.ndarray

    @property
    def ranking_error(self) -> np.ndarray:
        return ~self.correct & ~self.target_on_top

    @property
    def dilution_error(self) -> np.ndarray:
        return ~self.correct & self.target_on_top


@torch.no_grad()
def read_answers(model: AttentionHead, tokens: torch.Tensor, targets: torch.Tensor, offset: int) -> Answers:
    """The head's answer and attention logits on every sequence (N, T), in chunks."""
    length = tokens.shape[1]
    target_position = length - 1 - offset
    correct, on_top, winners = [], [], []
    for chunk in in_chunks(model, tokens, targets):
        output, _ = model.predict(chunk.tokens, tables=chunk.tables)  # (B, V)
        scores, _ = model.attention(chunk.tokens, tables=chunk.tables)  # (B, T)
        others = scores.clone()
        others[:, target_position] = -torch.inf
        best_other, winner = others.max(-1)  # (B,), (B,): ties go to the lowest position
        correct.append((output.argmax(-1) == chunk.targets).cpu())
        on_top.append((scores[:, target_position] > best_other).cpu())
        winners.append((length - 1 - winner).cpu())
    return Answers(torch.cat(correct).numpy(), torch.cat(on_top).numpy(), torch.cat(winners).numpy())


def offset_bins(train_length_max: int, longest: int) -> np.ndarray:
    """Bin edges over key offsets 0..longest-1, each bin [edge, next edge): 0, 1, 2, 4, 8, ... with
    train_length_max an edge too, so that every bin lies wholly inside or wholly past the seen offsets."""
    doubling = 2 ** np.arange(int(np.ceil(np.log2(max(longest, 2)))) + 1)
    return np.unique(np.concatenate([[0], doubling, [train_length_max]]))


def share(part, whole):
    """``part / whole``, NaN where there is no whole (0: no wrong answer, no ranking error); numbers or arrays
    alike, elementwise, so that a check's share over seed resamples is the same function (``pooled_share``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(whole) > 0, np.divide(part, whole), np.nan)[()]  # [()]: a number for numbers


def pooled_share(cells: pd.DataFrame, part: str, whole: str) -> SeedSums:
    """The ``share`` of ``cells[part]`` summed over the cells in ``cells[whole]`` summed, as seed sums."""
    return seed_sums.combine(share, seed_sums.total(cells, part), seed_sums.total(cells, whole))


def error_counts(answers: Answers, train_length_max: int) -> dict:
    """One ``errors_by_length`` row's counts and shares (without its run keys)."""
    ranking, dilution = answers.ranking_error, answers.dilution_error
    winning = answers.winning_offset[ranking]
    n, n_wrong = len(answers.correct), int((~answers.correct).sum())
    return {
        "n_sequences": n, "n_wrong": n_wrong, "n_ranking_error": int(ranking.sum()),
        "n_dilution_error": int(dilution.sum()), "n_outranked": int((~answers.target_on_top).sum()),
        "n_winning_seen": int((winning < train_length_max).sum()),
        "n_winning_unseen": int((winning >= train_length_max).sum()),
        "median_winning_offset": float(np.median(winning)) if len(winning) else float("nan"),
        "accuracy": 1 - n_wrong / n,
        "ranking_share": ranking.sum() / n, "dilution_share": dilution.sum() / n,
        "ranking_share_of_wrong": share(ranking.sum(), n_wrong),
        "dilution_share_of_wrong": share(dilution.sum(), n_wrong),
    }


def winning_offset_histogram(answers: Answers, edges: np.ndarray, train_length_max: int) -> pd.DataFrame:
    """The ranking errors' winning offsets counted per bin of ``edges``, every bin (a dozen or so)."""
    counts, _ = np.histogram(answers.winning_offset[answers.ranking_error], bins=edges)
    return pd.DataFrame({"winning_offset_min": edges[:-1], "winning_offset_max": edges[1:] - 1,
                         "seen": edges[1:] <= train_length_max, "count": counts})


def measure_errors(model: AttentionHead, eval_sets: dict, run: dict, train_length_max: int) -> dict[str, pd.DataFrame]:
    """Both tables of one trained head (``TABLES``), its rows labelled with ``run`` ({pe, offset, seed});
    ``eval_sets`` is {length: (tokens, targets)} of the run's offset."""
    run = {key: run[key] for key in ("pe", "offset", "seed")}
    edges = offset_bins(train_length_max, max(eval_sets))
    rows, histograms = [], []
    for length, (tokens, targets) in sorted(eval_sets.items()):
        answers = read_answers(model, tokens, targets, run["offset"])
        cell = {**run, "length": length}
        rows.append({**cell, "past_training_range": length > train_length_max,
                     **error_counts(answers, train_length_max)})
        histograms.append(winning_offset_histogram(answers, edges, train_length_max).assign(**cell))
    return dict(zip(TABLES[:2], (pd.DataFrame(rows), pd.concat(histograms, ignore_index=True))))


def predicted_outranked_share(model: AttentionHead, offset: int, length: int) -> float:
    """The share of answers the ranking account predicts as ranking errors: a key holding another token
    outranks the target (1 - mean P_rank over uniform query and target tokens)."""
    return 1.0 - ranking_probability(logit_kernel(model, length), offset, length).mean().item()


def predicted_split(measured: pd.DataFrame, ranking_shares: pd.DataFrame, prop1_prediction: pd.DataFrame) -> pd.DataFrame:
    """The ``errors_predicted_split`` table: per rope run, length and predictor of ``SPLIT_PREDICTORS``, the
    predicted ranking and dilution shares of all answers beside the measured ones (module doc)."""
    keys = ["offset", "seed", "length"]
    rope = measured[measured["pe"] == "rope"][keys + ["past_training_range", "ranking_share", "dilution_share"]].rename(
        columns={"ranking_share": "measured_ranking_share", "dilution_share": "measured_dilution_share"})
    law = prop1_prediction[prop1_prediction["predictor"] == DILUTION_LAW_PREDICTOR][keys + ["predicted_accuracy"]]
    dilution = law.assign(predictor=DILUTION_LAW_PREDICTOR, predicted_ranking_share=0.0,
                          predicted_dilution_share=1.0 - law["predicted_accuracy"]).drop(columns="predicted_accuracy")
    ranking = ranking_shares.assign(predictor="ranking", predicted_dilution_share=0.0)
    predicted = pd.concat([dilution, ranking], ignore_index=True)
    return rope.merge(predicted, on=keys, how="inner", validate="one_to_many").assign(pe="rope")


def analyze(inputs: dict, settings: dict) -> dict[str, pd.DataFrame]:
    """Every trained head of the sweep (rope and learned) on the evaluation sets of its offset; for the rotary
    heads, each account's predicted split (``prop1_prediction`` holds the dilution law's accuracy)."""
    task = settings["task"]
    train_length_max = task["train_length_max"]
    measured, ranking_shares = [], []
    for run, model in inputs["models"]:
        measured.append(measure_errors(model, inputs["eval_sets"][run["offset"]], run, train_length_max))
        if run["pe"] == "rope" and isinstance(model.encoding, Rotary):
            ranking_shares += [{"offset": run["offset"], "seed": run["seed"], "length": length,
                                "predicted_ranking_share": predicted_outranked_share(model, run["offset"], length)}
                               for length in task["eval_lengths"]]
    tables = {table: pd.concat([one[table] for one in measured], ignore_index=True) for table in TABLES[:2]}
    ranking_shares = pd.DataFrame(ranking_shares, columns=["offset", "seed", "length", "predicted_ranking_share"])
    tables["errors_predicted_split"] = predicted_split(tables["errors_by_length"], ranking_shares,
                                                       inputs["prop1_prediction"])
    return tables


def checks(tables: dict[str, pd.DataFrame], settings: dict) -> list[dict]:
    return errors_checks(tables["errors_by_length"])


def errors_checks(by_length: pd.DataFrame) -> list[dict]:
    """Two checks per offset for rope, pooled over seeds and lengths past the training range (rules in
    ``lengthgen.checks.shared_rules``). The dilution account predicts that most wrong answers are dilution errors: it
    depends on what the head learned, evidence. The learned head's errors (ranking errors at its pinned
    position, by the mechanics claim) are reported, not checked: the account says nothing of them.

    That a ranking error's winning key lies at an unseen offset is sanity: it follows from the relative-offset
    identity and the in-range fit (``MIN_UNSEEN_WINNER_SHARE``: keys at seen offsets outrank the target past the
    range as rarely as in range, at most 1 sequence in 100), wherever rope outranks its target in 1 sequence in
    10 or more past the range, which its rule text states; a lower share is a bug (in the winning offset, or in
    the seen/unseen boundary), not a finding.

    Each share is of counts summed over the pooled cells (``pooled_share``): a statistic of seed sums, which the
    seed bootstrap resamples without recomputing the checks (``lengthgen.checks.seed_sums``).
    """
    if not by_length["past_training_range"].any():
        raise ValueError("errors needs evaluation lengths past the training range")
    rows = []
    pooled = pooled_past_range(by_length, "rope")  # the counts the rule texts state, as the section states them
    for offset, cells in past_range_cells(by_length, "rope").groupby("offset"):
        cell = pooled.loc[offset]
        rows += [
            check("rope's wrong answers past the training range are mostly dilution errors",
                  "rope: share of wrong answers past the training range that are dilution errors",
                  pooled_share(cells, "n_dilution_error", "n_wrong"), ">=", MIN_DILUTION_SHARE, offset=int(offset),
                  rule=f">= {MIN_DILUTION_SHARE:g} ({cell['n_wrong']} wrong of {cell['n_sequences']} answers, every "
                       "seed's pooled)"),
            check("rope's ranking errors past the training range come from offsets unseen in training",
                  "rope: share of ranking errors past the training range whose winning key is at an unseen offset",
                  pooled_share(cells, "n_winning_unseen", "n_ranking_error"), ">=", MIN_UNSEEN_WINNER_SHARE,
                  offset=int(offset), kind="sanity",
                  rule=f">= {MIN_UNSEEN_WINNER_SHARE:g} ({cell['n_ranking_error']} ranking errors among "
                       f"{cell['n_sequences']} answers, every seed's pooled)"),
        ]
    return rows
