"""``python -m lengthgen.tables``: print every table's schema."""
from lengthgen.tables.registry import describe_schemas

print(describe_schemas())
