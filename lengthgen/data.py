"""The fixed evaluation sets as tables, and back to tensors."""

import numpy as np
import pandas as pd
import torch

from lengthgen.task import make_eval_set


def eval_set_frame(seed: int, offset: int, lengths: list[int], n_samples: int, vocab_size: int) -> pd.DataFrame:
    """The evaluation sequences of one offset at every length, one row per sequence."""
    frames = []
    for length in lengths:
        tokens, targets = make_eval_set(seed, offset, length, n_samples, vocab_size)
        frames.append(pd.DataFrame({
            "offset": offset, "length": length, "sample": np.arange(n_samples),
            "tokens": list(tokens.numpy()), "target": targets.numpy(),
        }))
    return pd.concat(frames, ignore_index=True)


def eval_sets_from_frame(frame: pd.DataFrame) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
    """{length: (tokens (N, length), targets (N,))} from an ``eval_set`` table."""
    sets = {}
    for length, group in frame.groupby("length", sort=True):
        tokens = torch.from_numpy(np.stack(group["tokens"].to_numpy()).astype(np.int64))
        sets[int(length)] = (tokens, torch.from_numpy(group["target"].to_numpy().astype(np.int64)))
    return sets
