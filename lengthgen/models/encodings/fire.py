"""FIRE: a learned function of the log offset over the log of the (thresholded) query position."""

import torch
from torch import nn

from lengthgen.models.encodings.base import EncodingConfig, PositionalEncoding, query_key_offsets
from lengthgen.models.init import Init, initialize

# What each encoding's mechanism is (defined in docs/adding-an-encoding.md): read as text by the workflow,
# without importing this module (lengthgen/models/encodings_table.py), so every value is a literal.
DECLARATIONS = {
    "fire": {
        "class": "FIRE",
        "parameters": ("threshold",),
        "offset_only": False,  # the normalizer psi(max(L, i)) depends on the query position once i > L
        # ReLU units of f whose kink lies beyond every offset seen in training get no gradient, yet shape f past it.
        "trained_past_range": False,
        "monotone_in_offset": False,
    },
    "fire_fixed": {
        "class": "FixedThresholdFIRE",
        "parameters": ("threshold",),
        "offset_only": False,  # past L (512 by default) the normalizer depends on the query position
        "offset_only_up_to": "threshold",  # below L the normalizer psi(L) is one constant: a function of i - j alone
        "trained_past_range": False,  # as fire's: the MLP's units past the offsets seen in training
        "monotone_in_offset": False,
    },
}


class FIRE(PositionalEncoding):
    """FIRE (Li et al., ICLR 2024, arXiv:2310.04418): logit bias b(i, j) = f(psi(i - j) / psi(max(L, i)))
    with psi(x) = log(c x + 1) and f a ReLU MLP 1 -> 32 -> 1.

    As in the paper's reference code: c is learned from 0.1 (used as |c|), the threshold is
    L = |s| * 512 with the multiplier s learned from 1, and the denominator carries + 1e-6.
    Below the threshold (i < L) the bias is a function of the offset alone; past it the
    offsets are squeezed into [0, 1] as the query position grows (progressive interpolation).
    ``fire@threshold=32`` sets another initial L; ``fire_fixed`` keeps L where it starts.
    """

    learned_threshold = True

    def __init__(self, config: EncodingConfig, *, threshold: float = 512.0):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 1))
        if config.init_std is not None:  # a named normal init draws the MLP; c and the threshold keep their values
            initialize([self.mlp], Init("normal", config.init_std))
        self.c = nn.Parameter(torch.tensor(0.1))
        if self.learned_threshold:
            self.threshold_scale = nn.Parameter(torch.tensor(1.0))
        else:
            self.register_buffer("threshold_scale", torch.tensor(1.0), persistent=False)
        self.register_buffer("initial_threshold", torch.tensor(float(threshold)), persistent=False)

    def logit_bias(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
        dtype = self.c.dtype
        offsets = query_key_offsets(query_positions, key_positions).to(dtype)  # (..., Tq, Tk)
        threshold = (self.threshold_scale * self.initial_threshold).abs()
        normalizer = torch.maximum(query_positions.to(dtype), threshold)[..., :, None]  # (..., Tq, 1)
        fraction = self.psi(offsets) / (self.psi(normalizer) + 1e-6)
        return self.mlp(fraction[..., None])[..., 0]

    def psi(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(torch.abs(self.c * x) + 1)


class FixedThresholdFIRE(FIRE):
    """FIRE's bias f(psi(i - j) / psi(max(L, i))) with the threshold L fixed at its initial value
    (512 unless the name sets it, ``fire_fixed@threshold=64``), c and f learned as in ``fire``.

    Learned, L follows the training loss down to about the longest training length (29-36 from
    512 in the default runs), which moves the bias's peak with the query position past it. Fixed
    at 512, the normalizer psi(L) is one constant for every query position below L: the bias is a
    function of the offset alone up to length 512, and squeezed only past it.
    """

    learned_threshold = False
