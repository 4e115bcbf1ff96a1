"""Every claim judged by its one rule in every condition: this run, each confirmation run, each robustness point."""
