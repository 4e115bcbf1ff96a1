"""The experiments: ``catalog`` declares them in order and plans which run under a config, ``declaration`` says what
an experiment declares, ``runner`` runs one experiment's analysis job; each ``<name>/`` folder holds one experiment's
analysis and checks, thresholds, table schemas, section text and figures."""
