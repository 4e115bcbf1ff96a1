"""Each experiment's RESULTS.md section text, one module per experiment, apart from its computation.

A module defines ``section(tables, checks, settings) -> str``: the section's markdown, from the
experiment's inputs and tables (by name), its checks and its settings. It computes nothing that a
check reads: the numbers it prints come from the tables.
"""
