"""The confirmation study: runs of other configs that test whether a config's verdicts replicate.

``runs``: the confirmation runs, each a config layered over the one given, and the files that hold the claims'
rules (``RULE_FILES``); ``replication``: each check compared across runs, and why one does not replicate;
``tables``: the replication table's schema; ``section`` and ``figures``: its section text and figure.
"""
