"""The report: RESULTS.md, its pages and tables, the first screen, and what it says of the run itself."""
