"""lengthgen: length generalization of attention under different positional encodings.

The importable library behind the Snakemake workflow. Each module has one job:

- ``encodings``: the registry of positional encodings, looked up by name.
- ``model``: the single softmax (or linear) attention head.
- ``task``: the fixed-offset retrieval task and its evaluation sets.
- ``data``: the fixed evaluation sets as tables.
- ``seeding``: how every random draw is seeded from config.
- ``training``: the training loop and its per-step curve.
- ``evaluation``: accuracy and target attention at every evaluation length.
- ``config``: checks of the workflow config beyond its JSON schema.
- ``jobs``: what every workflow job does first (log file, threads).
- ``tables``: pyarrow schemas and atomic, deterministic file writes; ``schemas`` lists them.
- ``stats``: means and confidence intervals over seeds.
- ``claims``: verdicts, and the base experiment's checks.
- experiments: ``base``, ``mechanics``, ``shift``, ``dilution`` (prop1, on ``kernel``),
  ``frequency`` (on ``kernel``), ``linear_control``, ``multiseed``.
- ``plots``: the figures, one module per experiment.
- ``report``: RESULTS.md.
"""

__version__ = "0.1.0"
