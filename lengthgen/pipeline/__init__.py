"""The workflow's side: the config (schema errors, derived settings) and the code each job runs."""
