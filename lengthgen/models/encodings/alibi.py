"""ALiBi: a logit bias linear in the offset, with a fixed or a learned slope."""

import torch
from torch import nn

from lengthgen.models.encodings.base import EncodingConfig, PositionalEncoding, query_key_offsets

# What each encoding's mechanism is (defined in docs/adding-an-encoding.md): read as text by the workflow,
# without importing this module (lengthgen/models/encodings_table.py), so every value is a literal.
DECLARATIONS = {
    "alibi": {
        "class": "ALiBi",
        "parameters": ("slope",),
        "offset_only": True,  # -m (i - j)
        "trained_past_range": True,  # no parameter: the slope is fixed
        "monotone_in_offset": True,  # linear in the offset
    },
    "alibi_learned": {
        "class": "LearnedSlopeALiBi",
        "parameters": ("slope",),
        "offset_only": True,
        "trained_past_range": True,  # one slope, trained by every sequence
        "monotone_in_offset": True,  # linear in the offset, whatever the slope's sign
    },
}


class ALiBi(PositionalEncoding):
    """ALiBi (Press et al., ICLR 2022, "Train Short, Test Long"): logit bias -m (i - j) for query
    position i and key position j <= i, with a fixed slope m.

    The paper's slopes for n heads are m_k = 2^(-8k/n), k = 1..n, so its single-head slope is
    m = 2^-8 = 1/256: the default here, being the published rule. At 1/256 the bias moves a logit
    by 0.125 across a 32-token training range, small next to the logits a trained head reaches,
    so at these lengths ``alibi`` is all but NoPE. Slopes at which the bias does matter over 32
    tokens are set on the name: ``alibi@slope=0.5``, the steepest slope of an 8-head model (2^-1:
    16 logits across the training range), and ``alibi@slope=1``, the limit the steepest slope
    2^(-8/n) of an n-head model approaches as n grows; ``alibi_learned`` lets training choose it.
    """

    learned_slope = False

    def __init__(self, config: EncodingConfig, *, slope: float = 2.0 ** -8):
        super().__init__()
        slope = torch.tensor(float(slope))
        if self.learned_slope:
            self.slope = nn.Parameter(slope)
        else:
            self.register_buffer("slope", slope, persistent=False)

    def logit_bias(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
        return -self.slope * query_key_offsets(query_positions, key_positions).to(self.slope.dtype)


class LearnedSlopeALiBi(ALiBi):
    """ALiBi's bias -m (i - j) with the slope m a learned scalar, initialized at the single-head
    slope 2^-8 and free to take any value (a negative slope favours far keys; the bias stays
    linear, so monotone, in the offset either way)."""

    learned_slope = True
