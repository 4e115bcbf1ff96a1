"""The schema of every table the workflow writes: ``core`` and ``spread`` here, each experiment's in its
``lengthgen/experiments/<name>/tables.py``, the studies' in ``lengthgen/studies/judgments/tables.py`` and
``lengthgen/studies/robustness/tables.py``; ``registry`` finds one by name (``python -m lengthgen.tables`` lists
them). This package file runs nothing, so importing a schema module makes it no job's input."""
