"""Seeding: every random draw in the project comes from a generator seeded here.

Seeds are derived from the config's integer seeds and a stream name, so that two
streams (model init, training data, evaluation data) never share draws, and adding
an evaluation length or an offset does not change the draws of the others.
"""

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def derive_seed(*parts: object) -> int:
    """A 63-bit seed that depends on every part, stable across Python runs and machines."""
    text = "/".join(str(part) for part in parts)
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def generator(*parts: object) -> "torch.Generator":
    """A CPU generator seeded from ``parts`` (see ``derive_seed``)."""
    # Imported here, not above: the workflow derives seeds while Snakemake parses it, at every
    # start, and needs no torch for that (every caller of this function has it loaded already).
    import torch

    return torch.Generator().manual_seed(derive_seed(*parts))
