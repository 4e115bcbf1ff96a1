"""lengthgen: length generalization of attention under different positional encodings.

The importable library behind the Snakemake workflow. The core, one job per module:

- ``encodings``: the registry of positional encodings, looked up by name.
- ``model``: the single softmax (or linear) attention head, computed from per-token tables.
- ``task``: the fixed-offset retrieval task and its evaluation sets.
- ``data``: the fixed evaluation sets as tables.
- ``seeding``: how every random draw is seeded from config.
- ``training``: the training loop and its per-step curve.
- ``evaluation``: accuracy and target attention at every evaluation length.
- ``runtime``: how torch runs in a job (device, threads, determinism).
- ``kernel``: the exact attention-logit kernel of a trained rotary head.
- ``config``: the workflow config: readable schema errors, derived settings, checks across keys.
- ``jobs``: what every workflow job does first (its log file).
- ``schemas``: every table's schema; ``tables``: atomic, deterministic parquet writes.
- ``runs``: loading the trained models a rule reads.
- ``stats``: means and confidence intervals over seeds.
- ``rules``: every claim's thresholds; ``claims``: checks and verdicts.
- ``report``: RESULTS.md; ``drift``: how far one run's checked numbers moved from another's.

The studies built on it live in ``experiments`` (base, mechanics, shift, prop1, frequency,
linear, multiseed), each with its figure in ``plots``; ``experiments.catalog`` says which of
them a config runs, and why the others are left out.
"""

__version__ = "0.1.0"
