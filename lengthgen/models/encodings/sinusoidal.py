"""The fixed sin/cos absolute encoding, added to the token embeddings."""

import torch

from lengthgen.models.encodings.base import EncodingConfig, PositionalEncoding, rotary_frequencies

# What each encoding's mechanism is (defined in docs/adding-an-encoding.md): read as text by the workflow,
# without importing this module (lengthgen/models/encodings_table.py), so every value is a literal.
DECLARATIONS = {
    "sinusoidal": {
        "class": "Sinusoidal",
        "offset_only": False,  # added to the embeddings, so the projections mix position and token terms
        "trained_past_range": True,  # no parameter of its own; the projections see every feature in range
        "monotone_in_offset": False,
    },
}


class Sinusoidal(PositionalEncoding):
    """The fixed sin/cos absolute encoding of Vaswani et al. (2017), added to the embeddings:
    (sin p theta_i, cos p theta_i) with theta_i = 10000^(-2i/D)."""

    def __init__(self, config: EncodingConfig):
        super().__init__()
        self.register_buffer("theta", rotary_frequencies(config.d_model, 1e4), persistent=False)

    def position_embedding(self, positions: torch.Tensor) -> torch.Tensor:
        angles = positions.to(torch.float64)[..., None] * self.theta.to(positions.device)  # (..., D/2)
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)  # (..., D), float64
