"""The studies built on the core: one module per experiment, each mirrored by ``lengthgen.plots.<name>``
and by the ``analyze_<name>`` / ``plot_<name>`` rules. Each measures, checks its claim by the
thresholds of ``lengthgen.rules``, and writes its RESULTS.md section. ``catalog`` lists them
all, with what each needs from the config."""
