"""Which step written for its shape (``fast_heads.py``, ``fast_bias.py``, ``fast_randomized.py``) trains a run's heads,
if any."""

import torch

from lengthgen.models.head import AttentionHead
from lengthgen.training.fast_bias import FastAlibiHeads, FastBiasHeads, FastFireHeads, FastT5Heads
from lengthgen.training.fast_heads import FastHeads, FastLearnedHeads, FastRopeHeads, FastSinusoidalHeads
from lengthgen.training.fast_randomized import FastRandomizedLearnedHeads, FastRandomizedRopeHeads

# By the registered name, not the class: importing the encodings' modules here would make every training job depend
# on them, so an edit to one encoding would retrain every model.
STEPS = {"rope": FastRopeHeads, "learned": FastLearnedHeads, "sinusoidal": FastSinusoidalHeads,
         "randomized_rope": FastRandomizedRopeHeads, "randomized_learned": FastRandomizedLearnedHeads,
         "nope": FastBiasHeads, "alibi": FastAlibiHeads, "alibi_learned": FastAlibiHeads, "t5": FastT5Heads,
         "fire": FastFireHeads, "fire_fixed": FastFireHeads}


def fast_heads(models: list, precision: str) -> FastHeads | None:
    """The fast step of the heads ``models``, or None where none computes them (they train through
    ``StackedHeads``): a single head whose encoding is one of ``STEPS``' (registered names: every encoding of the
    default run's single heads), position ids as drawn (no position scale), float32, on the CPU (the steps are
    written and tested for the CPU's kernels; a GPU trains through autograd as before)."""
    head = models[0]
    if precision != "float32" or not all(isinstance(model, AttentionHead) for model in models):
        return None
    parameter = next(head.parameters())
    if head.config.position_scale != "none" or parameter.dtype != torch.float32 or parameter.device.type != "cpu":
        return None
    if len(models) * head.config.vocab_size ** 2 * head.config.trained_positions >= 2 ** 31:
        return None  # a logit table past int32 indices
    step = STEPS.get(head.config.pe.partition("@")[0])
    return step(models) if step else None
