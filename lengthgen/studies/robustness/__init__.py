"""The robustness study: do the verdicts survive choices nobody made (init, width, learning rate, training range)?
``points``: the config's overrides, one choice at a time, each rerun into ``<results_dir>/robustness/<point>``; the
run itself is the default point. ``analysis`` measures the mechanism at each point, ``section`` tells it."""

DEFAULT_POINT = "default"  # the run itself, a point of the study
