"""Print every table schema of the workflow: ``python -m lengthgen.schemas``.

Experiment modules register their schemas when imported, so this imports them all.
"""

from lengthgen import dilution, frequency, linear_control, mechanics, multiseed, shift  # noqa: F401
from lengthgen.tables import SCHEMAS


def describe_schemas() -> str:
    return "\n".join(f"{kind}: " + ", ".join(f"{field.name} ({field.type})" for field in schema)
                     for kind, schema in SCHEMAS.items())


if __name__ == "__main__":
    print(describe_schemas())
