"""A trained model on disk: its weights and its config together, so an analysis rebuilds it
from the file alone, whichever model it is (the single head, the transformer).

Loading checks the file before use: a file that is not a checkpoint, whose weights do not fit
its own config, or whose config differs from what the reader expects raises ``ModelFileError``
naming the file and what differs, instead of being read as if it were the model asked for.
"""

import pickle
from dataclasses import asdict

import torch
from torch import nn

from lengthgen.tables.io import atomic_path

ADVICE = "delete it and rerun to retrain it"


class ModelFileError(ValueError):
    """A model file that cannot be the model its reader expects: unreadable, or of another shape or config."""


def save_model(model: nn.Module, path) -> None:
    """Weights (on the CPU) and ``model.config`` (a dataclass), written atomically."""
    state = {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()}
    # Into an open file: given a path, torch.save names the archive's folder after the file, here the random temp
    # name, so the same weights would give other bytes at every save.
    with atomic_path(path) as temp, open(temp, "wb") as file:
        torch.save({"config": asdict(model.config), "state_dict": state}, file)


def load_model(path, model_class: type[nn.Module], config_class: type, device: str | torch.device = "cpu",
               expected: dict | None = None):
    """The model saved at ``path``, rebuilt as ``model_class(config_class(**config))``, in eval mode.

    ``expected``: config settings the reader's config fixes (``d_model``, ``pe``, ...); a file whose
    config differs in any of them is refused.
    """
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
        config = config_class(**checkpoint["config"])
        state = checkpoint["state_dict"]
    except (OSError, EOFError, RuntimeError, pickle.UnpicklingError, KeyError, TypeError) as error:
        reason = str(error).split("\n")[0].split(". ")[0]  # torch's first sentence; the rest is advice for other cases
        raise ModelFileError(f"{path}: not a saved model ({type(error).__name__}: {reason}); {ADVICE}") from error
    differences = [f"{key} {getattr(config, key)!r} where this config has {value!r}"
                   for key, value in (expected or {}).items() if getattr(config, key) != value]
    if differences:
        raise ModelFileError(f"{path}: a {model_class.__name__} saved under another config: {', '.join(differences)}; {ADVICE}")
    model = model_class(config)
    wanted = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    found = {name: tuple(tensor.shape) for name, tensor in state.items()}
    mismatches = [f"{name} has shape {found.get(name, 'missing')}, expected {shape}"
                  for name, shape in wanted.items() if found.get(name) != shape]
    mismatches += [f"{name} is not a weight of this model" for name in found.keys() - wanted.keys()]
    if mismatches:
        raise ModelFileError(f"{path}: weights do not fit the model's config: {'; '.join(mismatches)}; {ADVICE}")
    model.load_state_dict(state)
    return model.to(device).eval()
