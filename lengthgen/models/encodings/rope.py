"""Rotary positions (RoPE): queries and keys rotated by angles proportional to their positions."""

import torch

from lengthgen.models.encodings.base import EncodingConfig, PositionalEncoding, rotary_frequencies

# What each encoding's mechanism is (defined in docs/adding-an-encoding.md): read as text by the workflow,
# without importing this module (lengthgen/models/encodings_table.py), so every value is a literal.
DECLARATIONS = {
    "rope": {
        "class": "Rotary",
        "parameters": ("base",),
        "offset_only": True,  # q_m . k_n depends on m - n only
        "trained_past_range": True,  # no parameter at all: the frequencies are fixed
        "monotone_in_offset": False,  # a sum of cosines of the offset can peak anywhere
    },
}


class Rotary(PositionalEncoding):
    """Rotary encoding (Su et al. 2021): block i of (x_2i, x_2i+1) is rotated by angle p * theta_i,
    theta_i = base^(-2i/D), with ``base`` = model.rope_base unless the name sets it (``rope@base=100``).

    Applied per head, so the frequencies are those of the head's width: theta_i =
    base^(-2i/head_dim) for its head_dim/2 blocks (with one head, head_dim = d_model).

    q_m . k_n then depends on m - n only. The angles are formed in float64 from the
    integer positions, so even position ids near 1e5 rotate by the exact angle and
    the equivariance holds to rounding of the final dtype.
    """


    def __init__(self, config: EncodingConfig, *, base: float | None = None):
        super().__init__()
        if config.head_dim % 2:
            raise ValueError(f"rope needs an even head width (d_model / n_heads), got {config.head_dim}")
        base = config.rope_base if base is None else base
        self.register_buffer("theta", rotary_frequencies(config.head_dim, base), persistent=False)

    def rotate(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        complex_dtype = torch.complex128 if x.dtype == torch.float64 else torch.complex64
        # Block (x_2i, x_2i+1) as the complex number x_2i + i x_2i+1: the rotation is one product.
        blocks = torch.view_as_complex(x.unflatten(-1, (-1, 2)))  # (..., T, D/2)
        return torch.view_as_real(blocks * self.phasors(positions, complex_dtype)).flatten(-2)

    def phasors(self, positions: torch.Tensor, dtype: torch.dtype = torch.complex128) -> torch.Tensor:
        """e^{i p theta_i} per position id p, formed in complex128, as ``dtype``. (..., T) -> (..., T, D/2).

        Per id, without data-dependent shapes, so that seeds train side by side under vmap."""
        angles = positions.to(torch.float64)[..., None] * self.theta.to(positions.device)  # (..., T, D/2)
        return torch.polar(torch.ones_like(angles), angles).to(dtype)
