"""``python -m lengthgen.schemas``: print every table's schema."""
from lengthgen.schemas import describe_schemas

print(describe_schemas())
