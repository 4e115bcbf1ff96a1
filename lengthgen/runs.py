"""The trained models a rule reads, loaded one at a time with a progress line in its log."""

import logging
from collections.abc import Iterator

from lengthgen.model import AttentionHead, load_head

log = logging.getLogger(__name__)


def load_models(runs: list[dict], paths: list[str], head: dict) -> Iterator[tuple[dict, AttentionHead]]:
    """Yield (run, model) for each run {pe, seed, offset} and its ``model.pt``, in order; each file
    must hold a head of the settings ``head`` (and of the run's encoding), see ``model.load_head``."""
    if len(runs) != len(paths):
        raise ValueError(f"{len(runs)} runs but {len(paths)} model files")
    for index, (run, path) in enumerate(zip(runs, paths), start=1):
        log.info("model %d/%d: %s (%s)", index, len(runs), run, path)
        yield run, load_head(path, expected={**head, **({"pe": run["pe"]} if "pe" in run else {})})
