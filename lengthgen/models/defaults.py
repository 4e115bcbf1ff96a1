"""The defaults of the model settings, as the config schema (``workflow/schemas/config.schema.yaml``) gives them:
the one place they are written, beside the measurements behind them. The model dataclasses
(``head.HeadConfig``, ``transformer.TransformerConfig``) take their defaults from here, so a model built outside the
workflow (a notebook, a test) gets what a config that leaves the setting out gets.

The schema is read once, at import. It is no input of the workflow's jobs: each is given every model setting in
its params (``experiments.families.model_settings``), so the defaults here shape no job's output. No torch: the
dataclasses' defaults are plain values.
"""

from pathlib import Path

import yaml

CONFIG_SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


def schema_defaults(schema: dict, section: str) -> dict:
    """The default of every key of config ``section`` that ``schema`` gives one."""
    properties = schema["properties"][section]["properties"]
    return {key: spec["default"] for key, spec in properties.items() if "default" in spec}


_SCHEMA = yaml.load(CONFIG_SCHEMA.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
MODEL_DEFAULTS = schema_defaults(_SCHEMA, "model")  # every single head's, and the transformer's encoding settings
TRANSFORMER_DEFAULTS = schema_defaults(_SCHEMA, "transformer")  # the transformer's own (its init)
TRAIN_DEFAULTS = schema_defaults(_SCHEMA, "train")  # the training schedule's (training.loop.TrainConfig)
