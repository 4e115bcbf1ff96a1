"""Learned absolute positions: a learned row per position id, added to the token embedding."""

import torch
from torch import nn

from lengthgen.models.encodings.base import EncodingConfig, PositionalEncoding
from lengthgen.runtime.seeding import generator

# What each encoding's mechanism is (defined in docs/adding-an-encoding.md): read as text by the workflow,
# without importing this module (lengthgen/models/encodings_table.py), so every value is a literal.
DECLARATIONS = {
    "learned": {
        "class": "LearnedAbsolute",
        "offset_only": False,  # row i and row j enter the logit apart
        "trained_past_range": False,  # rows past the longest training sequence
        "monotone_in_offset": False,
    },
}


class LearnedAbsolute(PositionalEncoding):
    """Learned absolute positions (as in BERT and GPT-2): a learned table, row p added to the
    embedding of the token at position p.

    The table stores the rows training reaches (``trained_positions``); rows past them never get
    a gradient, which is what lets the head memorize absolute positions, so they are not stored:
    row p is drawn when read, from its own seeded init N(0, learned_init_std^2), the numbers a
    table of any length would have held there. So evaluating at longer lengths changes no weight.
    A fractional position p (position interpolation) gets the linear interpolation of rows
    floor(p) and floor(p) + 1.
    """


    def __init__(self, config: EncodingConfig):
        super().__init__()
        self.init_seed, self.d_model = config.init_seed, config.d_model
        self.init_std = config.learned_init_std if config.init_std is None else config.init_std
        self.table = nn.Parameter(torch.stack([self.initial_row(p) for p in range(config.trained_positions)]))
        self._untrained_rows: dict[int, torch.Tensor] = {}

    def initial_row(self, position: int) -> torch.Tensor:
        """Row ``position`` at its init: drawn from a generator of its own, so a table's rows do not
        depend on how many there are."""
        return torch.randn(self.d_model, generator=generator("learned_row", self.init_seed, position)) * self.init_std

    def rows(self, positions: torch.Tensor) -> torch.Tensor:
        """Table rows at integer ``positions`` (...) -> (..., D): stored rows, or drawn past them."""
        if float(positions.min()) < 0:
            raise IndexError(f"learned encoding: negative position id {int(positions.min())}")
        stored = len(self.table)
        if int(positions.max()) < stored:
            return self.table[positions]
        drawn_ids = positions[positions >= stored].unique()
        for position in drawn_ids.tolist():
            if position not in self._untrained_rows:
                self._untrained_rows[position] = self.initial_row(position)
        drawn = torch.stack([self._untrained_rows[p] for p in drawn_ids.tolist()]).to(self.table)
        index = torch.where(positions < stored, positions, stored + torch.searchsorted(drawn_ids, positions))
        return torch.cat([self.table, drawn])[index]

    def position_embedding(self, positions: torch.Tensor) -> torch.Tensor:
        if not positions.is_floating_point():
            return self.rows(positions)  # (..., D)
        below = positions.floor()
        fraction = (positions - below).to(self.table.dtype)[..., None]  # (..., 1)
        rows = below.long()
        return self.rows(rows) * (1 - fraction) + self.rows(rows + 1) * fraction  # (..., D)
