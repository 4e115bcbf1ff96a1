"""lengthgen: length generalization of attention under different positional encodings.

The importable library behind the Snakemake workflow, in folders named for what they hold, each
importing only from the ones listed before it:

- ``runtime/``: how a job runs (its log and cost, torch's device and kernels) and how every draw is seeded.
- ``task``, ``data``: the fixed-offset retrieval task, and its evaluation sets as tables.
- ``tables/``: deterministic parquet files, and the schema of every table (``python -m lengthgen.tables``).
- ``models/``: the single head and the transformer, their positional encodings, inits and files on disk.
- ``training/``: the training loop every model shares, Adam's step, and whether a model fits its range.
- ``evaluation``: accuracy at every evaluation length.
- ``checks/``: a check, its statistics over seeds and their bootstrap, the shared rules and their history.
- ``science/``: the logit kernel, the dilution law and its rival, the min-norm control, the variants' predictions.
- ``plots/``: what every experiment's figures share.
- ``experiments/``: the catalog, and one folder per experiment with everything about it.
- ``pipeline/``: the workflow's side: the config, and the code each job runs.
- ``studies/``: the confirmation runs, the robustness points, and the drift between two runs.
- ``report/``: RESULTS.md, its pages, its claims table and what it says of the run itself.
"""

__version__ = "0.1.0"
