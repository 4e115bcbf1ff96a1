"""lengthgen: length generalization of attention under different positional encodings.

The importable library behind the Snakemake workflow. Each module has one job:

- ``encodings``: the registry of positional encodings, looked up by name.
- ``model``: the single softmax (or linear) attention head.
- ``task``: the fixed-offset retrieval task and its evaluation sets.
- ``seeding``: how every random draw is seeded from config.
- ``training``: the training loop and its per-step curve.
- ``evaluation``: accuracy and target attention at every evaluation length.
- ``tables``: pyarrow schemas and atomic, deterministic file writes.
- ``stats``: means and confidence intervals over seeds.
- ``claims``: the verdict rules that turn measurements into claims.
- ``plots``: the figures.
- ``report``: RESULTS.md.
"""

__version__ = "0.1.0"
