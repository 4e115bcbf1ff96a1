"""The studies built on the core: one module per experiment (its analysis and checks), with its
section text in ``lengthgen.prose.<name>`` and its figures in ``lengthgen.plots.<name>``.
``declaration`` says what an experiment declares, ``catalog`` declares them all and plans which
run under a config, and ``runner`` runs one experiment's analysis job."""
