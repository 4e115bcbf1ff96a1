"""Checks and verdicts: a check row, its statistics over seeds and their bootstrap, the shared rules
and when each rule was fixed."""
