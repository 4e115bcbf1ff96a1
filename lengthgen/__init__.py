"""lengthgen: length generalization of attention under different positional encodings.

The importable library behind the Snakemake workflow. The core, one job per module:

- ``encodings``: the registry of positional encodings, looked up by name (with parameters).
- ``model``: the single softmax (or linear) attention head, computed from per-token tables.
- ``length_scaling``: factors of the sequence length on a head's attention logits and position ids.
- ``transformer``: the causal multi-layer, multi-head decoder for the full-sequence task.
- ``checkpoint``: a trained model on disk, weights and config together.
- ``task``: the fixed-offset retrieval task and its evaluation sets.
- ``data``: the fixed evaluation sets as tables.
- ``seeding``: how every random draw is seeded from config.
- ``training``: the training loop every model shares, and its per-step curve.
- ``evaluation``: accuracy at every evaluation length (per position for the transformer).
- ``runtime``: how torch runs in a job (device, threads, determinism).
- ``kernel``: the exact attention-logit kernel of a trained rotary head.
- ``rotary_regression``: the min-norm control: a rotary kernel linear in its parameters, its SGD
  training from zero, and the closed-form min-norm interpolant it converges to.
- ``config``: the workflow config: readable schema errors, derived settings, checks across keys.
- ``jobs``: what every workflow job does first (its log file).
- ``table_schemas``: every table's schema; ``tables``: atomic, deterministic parquet writes.
- ``runs``: loading the trained models a rule reads.
- ``stats``: means and confidence intervals over seeds.
- ``thresholds``: the claim rules several experiments share; ``claims``: structured checks and verdicts.
- ``dilution``: the dilution law's and the ranking account's predictions; ``prediction_errors``: how far they miss.
- ``headlines``: one number per run with its rule, which the multiseed experiment asks of every run.
- ``rule_history``: when each rule was fixed (``docs/rule_history.yaml``, read).
- ``report``, ``results_pages``: RESULTS.md and its pages; ``drift``: how far one run's checked numbers moved.

The experiments live in ``experiments/<name>/``, one folder each with everything about it: its analysis
and checks, its rules (``thresholds.py``), its table schemas, its section text, its figures and its headlines
(docs/adding-an-experiment.md). ``experiments.catalog`` declares them in order (what each reads, its
settings, tables and figures), says which of them a config runs, and why the others are left out. The two
studies that rerun them have a folder each: ``confirmation`` (other configs, and whether each check replicates)
and ``robustness`` (the single-head experiments at each point of a grid of choices).
"""

__version__ = "0.1.0"
