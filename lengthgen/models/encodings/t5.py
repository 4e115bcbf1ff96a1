"""T5's relative position bias: a learned scalar per bucket of the causal offset."""

import math

import torch
from torch import nn

from lengthgen.models.encodings.base import EncodingConfig, PositionalEncoding, query_key_offsets

# What each encoding's mechanism is (defined in docs/adding-an-encoding.md): read as text by the workflow,
# without importing this module (lengthgen/models/encodings_table.py), so every value is a literal.
DECLARATIONS = {
    "t5": {
        "class": "T5RelativeBias",
        "offset_only": True,  # a function of the offset's bucket
        "trained_past_range": False,  # the buckets of offsets past the training range
        "monotone_in_offset": False,  # one free scalar per bucket
    },
}


def causal_offset_bucket(offsets: torch.Tensor, num_buckets: int = 32, max_distance: int = 128) -> torch.Tensor:
    """T5's bucket of each causal offset i - j >= 0, as huggingface transformers'
    ``T5Attention._relative_position_bucket(j - i, bidirectional=False, num_buckets, max_distance)``.

    Offsets below num_buckets / 2 get a bucket each; larger ones share the other half of the buckets,
    log-spaced up to ``max_distance``, computed in float32 as there; everything from
    16 * 8^(15/16) = 112.4 on (at the defaults) lands in the last bucket.
    """
    max_exact = num_buckets // 2
    offsets = offsets.clamp(min=0)
    # Clamped below at max_exact only to keep log() finite where torch.where discards the value anyway.
    large = max_exact + (torch.log(offsets.clamp(min=max_exact).float() / max_exact)
                         / math.log(max_distance / max_exact) * (num_buckets - max_exact)).to(torch.long)
    return torch.where(offsets < max_exact, offsets, large.clamp(max=num_buckets - 1))


class T5RelativeBias(PositionalEncoding):
    """T5's relative position bias (Raffel et al., JMLR 2020): a learned scalar per bucket of the
    causal offset i - j (32 buckets, max distance 128, ``causal_offset_bucket``), added to the
    logits. Initialized normal with std d_model^-1/2 as huggingface's T5 does (N(0, init_std^2) under a named
    normal init).

    Buckets of offsets longer than any training sequence get no gradient and keep their init.
    """


    def __init__(self, config: EncodingConfig):
        super().__init__()
        std = config.d_model ** -0.5 if config.init_std is None else config.init_std
        self.bucket_bias = nn.Parameter(torch.randn(32) * std)

    def logit_bias(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
        if query_positions.is_floating_point():
            raise ValueError("t5 buckets integer offsets; fractional positions (position interpolation) have none")
        return self.bucket_bias[causal_offset_bucket(query_key_offsets(query_positions, key_positions))]
