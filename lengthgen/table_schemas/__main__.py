"""``python -m lengthgen.table_schemas``: print every table's schema."""
from lengthgen.table_schemas.registry import describe_schemas

print(describe_schemas())
