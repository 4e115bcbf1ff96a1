"""Shift equivariance on hand-made cases: heads whose logits under a shift are known, and change tables whose
checks can be counted by hand (fast: no trained model, no hypothesis search)."""

import math

import pandas as pd
import torch
from torch import nn

from lengthgen.experiments.shift import analysis as shift


class LinearShiftHead(nn.Module):
    """A fake head: attention logit of key t at shift s is w * (t + s) * token; output logit v is w * s * (v + 1).

    So the largest |attention change| at shift s is |w| * s * max(token), and of the output |w| * s * V.
    Shifts above ``last`` raise IndexError, as a finite learned table does.
    """

    def __init__(self, weight: float = 0.5, vocab: int = 3, last: int = 10**9):
        super().__init__()
        self.weight = nn.Parameter(torch.tensor(weight))
        self.vocab, self.last = vocab, last

    def attention(self, tokens, position_offset=0):
        if position_offset > self.last:
            raise IndexError("past the table")
        positions = torch.arange(tokens.shape[1], dtype=self.weight.dtype) + position_offset
        scores = self.weight * positions * tokens.to(self.weight.dtype)
        return scores, scores.softmax(-1)

    def forward(self, tokens, position_offset=0):
        if position_offset > self.last:
            raise IndexError("past the table")
        values = torch.arange(1, self.vocab + 1, dtype=self.weight.dtype)
        return (self.weight * position_offset * values).expand(tokens.shape[0], -1), None


def test_changes_are_the_largest_logit_moves_against_shift_zero():
    tokens = torch.tensor([[1, 2, 0], [0, 1, 1]])  # largest token 2
    changes = shift.shift_changes(LinearShiftHead(0.5), tokens, [1, 4], dtypes=("float64",))
    # attention: |0.5 * s * token| at most 0.5 * s * 2 = s; output: 0.5 * s * 3 = 1.5 s.
    assert changes["attention_logit_change"].tolist() == [1.0, 4.0]
    assert changes["output_logit_change"].tolist() == [1.5, 6.0]
    # The scale: the largest |logit| at shift 0, 0.5 * position 1 * token 2 = 1.0 (row 0, key 1).
    assert changes["attention_logit_scale"].tolist() == [1.0, 1.0]
    assert changes["length"].tolist() == [3, 3] and changes["shift"].tolist() == [1, 4]
    assert changes["defined"].tolist() == [True, True]
