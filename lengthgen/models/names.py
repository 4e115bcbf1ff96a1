"""Registry names with numeric parameters, ``name@key=value,key=value``: how the config spells a
positional encoding (``rope@base=100``) or a model init (``normal@std=0.02``), parsed by one function.

Torch-free: the workflow checks these names while Snakemake parses it, at every start.
"""

import re

# A registry name, optionally with numeric parameters: also the Snakemake wildcard of the model folders.
NAME_PATTERN = r"[a-z0-9_]+(?:@[a-z_]+=[0-9.e+-]+(?:,[a-z_]+=[0-9.e+-]+)*)?"


def parse_name(name: str, kind: str, registry: dict[str, tuple[str, ...]]) -> tuple[str, dict[str, float]]:
    """(registered name, parameters) of ``name`` in a registry that maps each name to the parameters it
    may set. A clear error, naming the ``kind`` of name (``positional encoding``, ``model init``), says
    what is wrong: the form, an unknown name, an unknown parameter, or a value that is not a number."""
    if not isinstance(name, str) or not re.fullmatch(NAME_PATTERN, name):
        raise ValueError(f"{kind} {name!r} is not of the form name or name@key=value,key=value "
                         "(lower-case names, numeric values)")
    registered, _, arguments = name.partition("@")
    if registered not in registry:
        raise ValueError(f"unknown {kind} {registered!r}; allowed: {', '.join(sorted(registry))}")
    parameters = {}
    for argument in filter(None, arguments.split(",")):
        key, value = argument.split("=")
        if key not in registry[registered]:
            raise ValueError(f"{kind} {name!r}: {registered} has no parameter {key!r} "
                             f"(parameters: {', '.join(registry[registered]) or 'none'})")
        try:
            parameters[key] = float(value)
        except ValueError:
            raise ValueError(f"{kind} {name!r}: {key}={value} is not a number") from None
    return registered, parameters
