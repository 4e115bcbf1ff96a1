"""The robustness study: do the verdicts survive the choices nobody made (init, width, learning rate, training range)?

Each point of ``robustness.points`` is a set of overrides of the config, one choice varied at a time; the
experiments of ``robustness.experiments`` rerun at it with every rule of the workflow, into
``<results_dir>/robustness/<point>`` (``points``, ``workflow/rules/robustness.smk``). The run itself is the default
point: its results are reused, nothing is retrained. Each claim is judged at every point by its one rule
(``lengthgen/studies/judgments/``); ``analysis`` measures the mechanism at each point and ``section`` tells it.
"""

DEFAULT_POINT = "default"  # the run itself, a point of the study
