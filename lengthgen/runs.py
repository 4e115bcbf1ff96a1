"""The trained models a rule reads, loaded one at a time with a progress line in its log."""

import logging
from collections.abc import Callable, Iterator

from torch import nn

from lengthgen.model import load_head

log = logging.getLogger(__name__)


def load_models(runs: list[dict], paths: list[str],
                load: Callable[[str], nn.Module] = load_head) -> Iterator[tuple[dict, nn.Module]]:
    """Yield (run, model) for each run {pe, seed, offset} and its ``model.pt``, in order, loaded by ``load``
    (the single head's loader by default)."""
    if len(runs) != len(paths):
        raise ValueError(f"{len(runs)} runs but {len(paths)} model files")
    for index, (run, path) in enumerate(zip(runs, paths), start=1):
        log.info("model %d/%d: %s (%s)", index, len(runs), run, path)
        yield run, load(path)
