"""cures: does sharpening the softmax as the sequence grows undo rope's decay past the training range?

If the decay is attention dilution (prop1: the target's weight shrinks as keys are added), a
factor on the logits that grows with the length n should win much of it back, without
retraining; the learned head fails by pinning to a trained position, not by dilution, so it
should gain nothing. Every cure is applied to the trained ``generalization`` heads at evaluation time
only, as a head option (``lengthgen.models.length_scaling``), L = the longest training length:

- ``log_length``: logits x log(n) / log(L) (Chiang & Cholak 2022; Scalable-Softmax, Nakanishi 2025);
- ``yarn``: YaRN's attention temperature, logits x (0.1 ln(n / L) + 1)^2 for n > L (Peng et al. 2023);
- ``interpolate``: position interpolation (Chen et al. 2023), positions x (L - 1) / (n - 1) for
  n > L. It keeps no offset exact (the target K back sits at K (L - 1) / (n - 1) < 1 position
  back at n > KL), so the account predicts it hurts a fixed-offset rule. On the learned head it
  reads the table at fractional rows, interpolating linearly between trained rows: every
  position then falls inside the trained range, which tells pinning (an absolute lookup) from
  a mere lack of trained rows.

Predictions come from prop1's law on the cured head: the rotary kernel at each length, with
positions and logits scaled as the cure scales them (``kernel.logit_kernel``), gives every
predictor's target attention and accuracy. Measured beside accuracy and target attention: the
hard-attention accuracy, the head's accuracy when each sequence attends only to its
highest-logit key. It is the limit of scaling the logits without bound: what a sharpening cure
approaches as its factor grows, since a sequence whose highest logit is not the target's stays
wrong however much its logits are scaled. A rope head trained with log-length
scaling from the start (SSMax-style: the same head option during training and evaluation) is
compared with the sweep's rope head in paired runs.
"""

import dataclasses

import numpy as np
import pandas as pd
import torch

from lengthgen.science import dilution

from lengthgen.checks import seed_sums
from lengthgen.checks.check import check
from lengthgen.evaluation import accuracy_by_length, in_chunks
from lengthgen.models.head import AttentionHead
from lengthgen.experiments.cures.thresholds import (CURES_CLAIM_PREDICTOR, MAX_RECOVERY_ERROR_OF_LIMIT,
                                                    MIN_RECOVERED_FRACTION)
from lengthgen.experiments.prop1.thresholds import MAX_ACCURACY_MAE, MAX_ATTENTION_MAE, MIN_MAE_GAIN_OVER_TRIVIAL
from lengthgen.checks.shared_rules import CHANCE_TOLERANCE, NEAR_PERFECT
from lengthgen.science.prediction_errors import PREDICTORS, gain_past_range, mae_past_range, with_baselines
from lengthgen.checks.seed_sums import SeedSums
from lengthgen.checks.stats import mean_interval_low
from lengthgen.experiments.cures.summaries import CURES, SHARPENING, TRAINED_HEAD, comparison

RUN_KEYS = ["head", "offset", "seed", "length"]


def cured(model: AttentionHead, cure: str, reference_length: int) -> AttentionHead:
    """The trained head with the cure's options set: same weights, scaled at evaluation."""
    config = dataclasses.replace(model.config, **CURES[cure], reference_length=reference_length)
    head = AttentionHead(config).to(next(model.parameters()).device)
    head.load_state_dict(model.state_dict())
    return head.eval()


# ---------------------------------------------------------------------------------------------
# Measurements


@torch.no_grad()
def hard_attention_accuracy(model: AttentionHead, tokens: torch.Tensor, targets: torch.Tensor) -> float:
    """Accuracy when each sequence attends only to its highest-logit key (logits scaled without bound).

    The output is then that key's readout: its token's unembedded value, plus its position's
    term for absolute encodings, plus the unembedding bias.
    """
    correct = 0
    for chunk in in_chunks(model, tokens, targets):
        scores, _ = model.attention(chunk.tokens, tables=chunk.tables)
        chosen = scores.argmax(-1)  # (B,)
        logits = chunk.tables.token_outputs[chunk.tokens.gather(1, chosen[:, None])[:, 0]] + model.unembedding.bias
        if chunk.tables.position_outputs is not None:
            logits = logits + chunk.tables.position_outputs[chosen]
        correct += (logits.argmax(-1) == chunk.targets).sum().item()
    return correct / len(tokens)


def measure(model: AttentionHead, eval_sets: dict, offset: int, seed: int) -> pd.DataFrame:
    """Per length: accuracy, target attention and hard-attention accuracy of ``model`` as configured."""
    evaluation = accuracy_by_length(model, eval_sets, offset, seed).drop(columns="loss")
    hard = [hard_attention_accuracy(model, tokens, targets) for _, (tokens, targets) in sorted(eval_sets.items())]
    return evaluation.assign(hard_accuracy=hard)


def measure_cures(model: AttentionHead, eval_sets: dict, offset: int, seed: int, reference_length: int,
                  train_length_min: int) -> pd.DataFrame:
    """``cures_by_length`` rows of one trained head of the sweep under every cure (and none)."""
    frames = [measure(cured(model, cure, reference_length), eval_sets, offset, seed).assign(cure=cure)
              for cure in CURES]
    return label(pd.concat(frames, ignore_index=True), model.config.pe, offset, seed, train_length_min,
                 reference_length)


def measure_trained(model: AttentionHead, eval_sets: dict, offset: int, seed: int, train_length_min: int,
                    train_length_max: int) -> pd.DataFrame:
    """``cures_by_length`` rows of one head trained with log-length scaling (its own scale, no cure)."""
    if model.config.logit_scale != "log_length":
        raise ValueError(f"expected a head trained with logit_scale='log_length', got {model.config.logit_scale!r}")
    return label(measure(model, eval_sets, offset, seed).assign(cure="none"), TRAINED_HEAD, offset, seed,
                 train_length_min, train_length_max)


def label(frame: pd.DataFrame, head: str, offset: int, seed: int, train_length_min: int,
          train_length_max: int) -> pd.DataFrame:
    return frame.assign(head=head, offset=offset, seed=seed,
                        in_training_range=frame["length"].between(train_length_min, train_length_max))


# ---------------------------------------------------------------------------------------------
# Predictions from the dilution law


def predict_cures(model: AttentionHead, offset: int, seed: int, lengths: list[int], n_samples: int,
                  reference_length: int) -> pd.DataFrame:
    """``cures_prediction`` rows of one rope head under every cure but none (prop1 has those)."""
    frames = [dilution.predict_dilution(cured(model, cure, reference_length), offset, seed, lengths, n_samples)
              .assign(cure=cure) for cure in CURES if cure != "none"]
    return pd.concat(frames, ignore_index=True).assign(head=model.config.pe)


def uncured_predictions(prop1_prediction: pd.DataFrame) -> pd.DataFrame:
    """prop1's predictions for the uncured rope heads, as ``cures_prediction`` rows."""
    columns = ["offset", "seed", "length", "predictor", "predicted_attention", "predicted_accuracy"]
    return prop1_prediction[columns].assign(head="rope", cure="none")


# ---------------------------------------------------------------------------------------------
# Statistics and claims


def past_range(frame: pd.DataFrame, train_length_max: int) -> pd.DataFrame:
    return frame[frame["length"] > train_length_max]


def rows_of(frame: pd.DataFrame, head: str, cure: str) -> pd.DataFrame:
    return frame[(frame["head"] == head) & (frame["cure"] == cure)].set_index(RUN_KEYS).sort_index()


def recovered_fraction(uncured: pd.Series, cured_values: pd.Series) -> SeedSums:
    """mean(cured - uncured) / mean(1 - uncured) over matching rows (both indexed by ``RUN_KEYS``); NaN when
    nothing was lost. Seed sums: the seed bootstrap resamples it."""
    runs = pd.DataFrame({"gain": cured_values - uncured, "lost": 1 - uncured}).reset_index()
    return seed_sums.combine(lambda gain, lost: np.where(lost > 0, gain / lost, np.nan),
                             seed_sums.mean(runs, "gain"), seed_sums.mean(runs, "lost"))


def recovery_table(by_length: pd.DataFrame, predictions: pd.DataFrame, train_length_max: int) -> pd.DataFrame:
    """The ``cures_recovery`` table: per cure, the fraction of rope's lost accuracy it wins back past
    the range, measured (source "measured") and as each predictor predicts it from its own cured and
    uncured predictions (source: the predictor); and the hard-attention limit's (cure "hard_attention")."""
    return pd.DataFrame([{"cure": cure, "source": source, "recovered_fraction": fraction.value()}
                         for (cure, source), fraction in recoveries(by_length, predictions, train_length_max).items()])


def recoveries(by_length: pd.DataFrame, predictions: pd.DataFrame, train_length_max: int) -> dict:
    """The rows of ``recovery_table`` as {(cure, source): recovered fraction as seed sums}, in its order."""
    past = past_range(by_length, train_length_max)
    uncured = rows_of(past, "rope", "none")
    fractions = {("hard_attention", "measured"): recovered_fraction(uncured["accuracy"], uncured["hard_accuracy"])}
    for cure in (cure for cure in CURES if cure != "none"):
        fractions[cure, "measured"] = recovered_fraction(uncured["accuracy"], rows_of(past, "rope", cure)["accuracy"])
        for predictor in PREDICTORS:
            predicted = past_range(predictions[predictions["predictor"] == predictor], train_length_max)
            fractions[cure, predictor] = recovered_fraction(rows_of(predicted, "rope", "none")["predicted_accuracy"],
                                                            rows_of(predicted, "rope", cure)["predicted_accuracy"])
    return fractions


def paired_runs(by_length: pd.DataFrame, train_length_max: int) -> pd.DataFrame:
    """Per (offset, seed) run present for both: the trained log-length head's mean accuracy past the range minus
    rope's (``difference``); no rows where no run has both (a seed of the sweep that cures.seeds leaves out, alone
    in the per-seed count of the bootstrap)."""
    past = past_range(by_length[by_length["cure"] == "none"], train_length_max)
    per_run = past.groupby(["head", "offset", "seed"])["accuracy"].mean()
    heads = per_run.index.get_level_values("head")
    if TRAINED_HEAD not in heads or "rope" not in heads:
        return pd.DataFrame({"offset": [], "seed": [], "difference": []})
    return (per_run[TRAINED_HEAD] - per_run["rope"]).dropna().rename("difference").reset_index()


CHECKED = ("cures_by_length", "cures_prediction")


def analyze(inputs: dict, settings: dict) -> dict[str, pd.DataFrame]:
    """The sweep's rope and learned heads under every cure, with the law's predictions for rope (prop1's for
    the uncured heads), and the heads trained with log-length scaling as they are."""
    task, eval_sets = settings["task"], inputs["eval_sets"]
    train_length_min, train_length_max = task["train_length_min"], task["train_length_max"]
    by_length, predictions = [], [uncured_predictions(inputs["prop1_prediction"])]
    for run, model in inputs["models"]:
        offset, seed = run["offset"], run["seed"]
        by_length.append(measure_cures(model, eval_sets[offset], offset, seed, train_length_max, train_length_min))
        if run["pe"] == "rope":
            predictions.append(predict_cures(model, offset, seed, task["eval_lengths"], settings["prop1"]["n_samples"],
                                             train_length_max))
    for run, model in inputs["trained"]:
        by_length.append(measure_trained(model, eval_sets[run["offset"]], run["offset"], run["seed"], train_length_min,
                                         train_length_max))
    by_length, predictions = pd.concat(by_length, ignore_index=True), pd.concat(predictions, ignore_index=True)
    return {"cures_by_length": by_length, "cures_prediction": predictions,
            "cures_recovery": recovery_table(by_length, predictions, train_length_max)}


def checks(tables: dict[str, pd.DataFrame], settings: dict) -> list[dict]:
    task = settings["task"]
    return cures_checks(tables["cures_by_length"], tables["cures_prediction"], task["train_length_max"],
                        task["vocab_size"])


def cures_checks(by_length: pd.DataFrame, predictions: pd.DataFrame, train_length_max: int,
                 vocab_size: int) -> list[dict]:
    """The checks of the cures claim (see ``lengthgen.checks.shared_rules``), pooled over offsets and seeds.

    One is sanity: position interpolation (without the fine-tuning of Chen et al.) moves the target
    of a fixed-offset rule to a fractional position it was never trained at, so it hurting rope is
    close to an impossibility to fail. The rest is evidence: whether sharpening wins accuracy back,
    whether the law predicts the cured heads (prop1's MAE limits, each paired, after the full run, with
    prop1's gain over the trivial baselines) and how much each sharpening cure wins back (also added after
    the full run, ``recovery_prediction_checks``), whether any cure helps the learned head,
    and how the head trained with log-length scaling fits and extrapolates all depend on what the heads learned.
    """
    past = past_range(by_length, train_length_max)
    uncured = rows_of(past, "rope", "none")["accuracy"]
    rows = sharpening_checks(past, uncured)
    rows += recovery_prediction_checks(recoveries(by_length, predictions, train_length_max))
    interpolated, uncured_mean = (seed_sums.mean(rows_of(past, "rope", cure).reset_index(), "accuracy")
                                  for cure in ("interpolate", "none"))
    rows.append(check("interpolate hurts rope's fixed-offset rule",
                      "rope mean accuracy past the training range, interpolated minus uncured",
                      interpolated - uncured_mean, "<", 0, kind="sanity"))
    rows += prediction_checks(by_length, predictions, train_length_max, vocab_size)
    rows += learned_checks(past)
    rows += trained_head_checks(by_length, train_length_max)
    return rows


def sharpening_checks(past: pd.DataFrame, uncured: pd.Series) -> list[dict]:
    return [check(f"{cure} undoes much of rope's decay",
                  "mean(cured - uncured) / mean(1 - uncured) of rope accuracy past the training range",
                  recovered_fraction(uncured, rows_of(past, "rope", cure)["accuracy"]), ">=", MIN_RECOVERED_FRACTION)
            for cure in SHARPENING]


def recovery_prediction_checks(fraction: dict) -> list[dict]:
    """Per sharpening cure, whether the claim predictor's predicted recovery lies within
    MAX_RECOVERY_ERROR_OF_LIMIT x the hard-attention limit of the measured recovery. ``fraction``:
    ``recoveries``; the threshold is a statistic of the data too, resampled with the value."""
    limit = fraction["hard_attention", "measured"]
    tolerance = limit * MAX_RECOVERY_ERROR_OF_LIMIT
    return [check(f"the dilution law predicts how much of rope's decay {cure} undoes",
                  # no "|" for an absolute value: the statistic is a cell of a markdown table
                  f"{CURES_CLAIM_PREDICTOR}: absolute error of the predicted fraction of rope's lost accuracy won "
                  "back past the training range",
                  abs(fraction[cure, "measured"] - fraction[cure, CURES_CLAIM_PREDICTOR]), "<=", tolerance,
                  rule=f"<= {MAX_RECOVERY_ERROR_OF_LIMIT:g} x the hard-attention limit ({limit.value():.3g}) "
                       f"= {tolerance.value():.4g}")
            for cure in SHARPENING]


def cured_comparison(by_length: pd.DataFrame, predictions: pd.DataFrame, cure: str) -> pd.DataFrame:
    """rope under ``cure``, the claim predictor beside the measurements (``comparison``) in the columns of prop1's
    comparison, at every length (its no_decay baseline holds the longest in-range one)."""
    compared = comparison(by_length, predictions, CURES_CLAIM_PREDICTOR)
    return (compared[compared["cure"] == cure].assign(predictor=CURES_CLAIM_PREDICTOR)
            .rename(columns={"accuracy": "measured_accuracy", "target_attention": "measured_attention"}))


def prediction_checks(by_length: pd.DataFrame, predictions: pd.DataFrame, train_length_max: int,
                      vocab_size: int) -> list[dict]:
    """Per cure and quantity, prop1's pair of checks on the cured rope heads, pooled over offsets: the claim
    predictor's MAE past the range (prop1's limits), and its gain over the better trivial baseline
    (``prediction_errors.gain_over_trivial``: an MAE alone is met by a head that collapsed to chance, as rope does under
    interpolate)."""
    rows = []
    for cure in (cure for cure in CURES if cure != "none"):
        compared = with_baselines(cured_comparison(by_length, predictions, cure), train_length_max, vocab_size)
        for quantity, threshold in (("target_attention", MAX_ATTENTION_MAE), ("accuracy", MAX_ACCURACY_MAE)):
            claim = f"the dilution law predicts rope under {cure}"
            statistic = f"{CURES_CLAIM_PREDICTOR}: MAE of predicted {quantity} past the training range"
            rows += [
                check(claim, statistic, mae_past_range(compared, train_length_max, CURES_CLAIM_PREDICTOR, quantity),
                      "<=", threshold),
                check(claim, f"{statistic}, below the better of the chance and no-decay baselines' MAEs",
                      gain_past_range(compared, train_length_max, CURES_CLAIM_PREDICTOR, quantity), ">=",
                      MIN_MAE_GAIN_OVER_TRIVIAL,
                      rule=f">= {MIN_MAE_GAIN_OVER_TRIVIAL:g} (prop1's pairing, set after the data)"),
            ]
    return rows


def learned_checks(past: pd.DataFrame) -> list[dict]:
    """Per cure, the largest gain of the learned head's mean accuracy over seeds at any offset and length
    past the range."""
    learned = seed_sums.means_by(past[past["head"] == "learned"], ["cure", "offset", "length"], "accuracy")
    places = sorted({(offset, length) for _, offset, length in learned})
    return [check(f"{cure} does nothing for the learned head",
                  "largest gain of learned mean accuracy over seeds at any offset and length past the training range",
                  seed_sums.largest([learned.get((cure, *place), seed_sums.NOTHING)
                                     - learned.get(("none", *place), seed_sums.NOTHING) for place in places]),
                  "<=", CHANCE_TOLERANCE)
            for cure in CURES if cure != "none"]


def trained_head_checks(by_length: pd.DataFrame, train_length_max: int) -> list[dict]:
    """The log-length head fits the range (the precondition), and beats rope past it in paired runs (a t-interval
    over the runs, which widens on one seed's few runs: not counted per seed)."""
    trained = by_length[by_length["head"] == TRAINED_HEAD]
    in_range = seed_sums.means_by(trained[trained["in_training_range"]], ["offset", "length"], "accuracy")
    runs = paired_runs(by_length, train_length_max)
    mean = seed_sums.mean(runs, "difference").value()
    return [
        check("the log-length head fits the training range (precondition)",
              "lowest mean accuracy over seeds at an in-range length and offset",
              seed_sums.smallest(list(in_range.values())), ">=", NEAR_PERFECT),
        check("the log-length head extrapolates further than rope",
              "lower end of the 95% interval of the mean paired difference in accuracy past the range",
              mean_interval_low(runs, "difference"), ">", 0,
              rule=f"> 0 ({len(runs)} paired runs; mean {mean:+.3f})", per_seed=False),
    ]
