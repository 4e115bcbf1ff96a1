"""A trained model on disk: its weights and its config together, so an analysis rebuilds it
from the file alone, whichever model it is (the single head, the transformer)."""

from dataclasses import asdict

import torch
from torch import nn

from lengthgen.tables import atomic_path


def save_model(model: nn.Module, path) -> None:
    """Weights (on the CPU) and ``model.config`` (a dataclass), written atomically."""
    state = {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()}
    with atomic_path(path) as temp:
        torch.save({"config": asdict(model.config), "state_dict": state}, temp)


def load_model(path, model_class: type[nn.Module], config_class: type, device: str | torch.device = "cpu"):
    """The model saved at ``path``, rebuilt as ``model_class(config_class(**config))``, in eval mode."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = model_class(config_class(**checkpoint["config"]))
    model.load_state_dict(checkpoint["state_dict"])
    return model.to(device).eval()
