"""The confirmation study: runs of other configs (other seeds, other vocabularies) in which every claim is judged again.

``runs``: the confirmation runs, each a config layered over the one given; each claim's verdict in each is the
judgments' (``lengthgen/studies/judgments/``).
"""
