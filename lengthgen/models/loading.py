"""The trained models a rule reads, loaded one at a time with a progress line in its log."""

import logging
from collections.abc import Callable, Iterator

from torch import nn

from lengthgen.models.head import load_head

log = logging.getLogger(__name__)


def load_models(runs: list[dict], paths: list[str], expected: dict,
                load: Callable[..., nn.Module] = load_head) -> Iterator[tuple[dict, nn.Module]]:
    """Yield (run, model) for each run {pe, seed, offset} and its ``model.pt``, in order, loaded by ``load``
    (the single head's loader by default). Each file must hold a model of the settings ``expected`` (and
    of the run's encoding): see ``checkpoint.load_model``."""
    if len(runs) != len(paths):
        raise ValueError(f"{len(runs)} runs but {len(paths)} model files")
    for index, (run, path) in enumerate(zip(runs, paths), start=1):
        log.info("model %d/%d: %s (%s)", index, len(runs), run, path)
        yield run, load(path, expected={**expected, **({"pe": run["pe"]} if "pe" in run else {})})
