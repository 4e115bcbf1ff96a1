"""What the encoding registry states, read from ``lengthgen/models/encodings.py`` without importing it.

Snakemake parses the workflow at every start, and the parse needs the registry's names, their
parameters and their descriptions (config checks, the ``{pe}`` wildcard, rule params), not the
encodings themselves; importing ``lengthgen.models.encodings`` would import torch (seconds) for that.
So this module reads the source with ``ast``: ``encodings.py`` stays the single source of truth,
and ``tests/test_encoding_catalog.py`` checks that both give the same answers.

What it reads, for every class decorated ``@register("name")``:

- the first paragraph of its docstring;
- its mechanism properties, class attributes looked up along the method resolution order of the
  classes the module defines (the defaults being ``PositionalEncoding``'s), and whether it draws
  its position ids at random (a class on that order other than ``PositionalEncoding`` defines
  ``sample_positions``), and whether it has a position term at all (such a class defines any
  of the position hooks, ``POSITION_HOOKS``);
- its parameters: the keyword-only arguments of the first ``__init__`` on that order;

and the module constant ``DEFAULT_NOISE_MAX_LENGTH``. The spelling of a name with parameters
(``ENCODING_NAME_PATTERN``, the ``{pe}`` wildcard) and its parser are ``lengthgen/models/names.py``'s, shared with
the model inits.
"""

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lengthgen.models.names import NAME_PATTERN as ENCODING_NAME_PATTERN  # noqa: F401 (the {pe} wildcard)
from lengthgen.models.names import parse_name

ENCODINGS_SOURCE = Path(__file__).with_name("encodings.py")
BASE_CLASS = "PositionalEncoding"
PROPERTIES = ("offset_only", "trained_past_range", "monotone_in_offset")
# The hooks through which an encoding puts positions into the logit (``PositionalEncoding``'s are the identity).
POSITION_HOOKS = ("position_embedding", "rotate", "logit_bias", "sample_positions")


@dataclass(frozen=True)
class CatalogEntry:
    """One registered encoding as the source states it."""

    summary: str
    offset_only: bool
    trained_past_range: bool
    monotone_in_offset: bool
    random_positions: bool
    position_term: bool
    parameters: tuple[str, ...]


@dataclass(frozen=True)
class ClassSource:
    """What the catalog needs of one class definition: its bases, the literal class attributes and
    the methods its own body defines, and its keyword-only ``__init__`` arguments if it has one."""

    node: ast.ClassDef
    bases: tuple[str, ...]
    attributes: dict
    methods: frozenset[str]
    init_parameters: tuple[str, ...] | None


@cache
def parsed_module() -> ast.Module:
    return ast.parse(ENCODINGS_SOURCE.read_text(), filename=str(ENCODINGS_SOURCE))


def module_constant(name: str):
    """The literal value a top-level ``name = ...`` assigns in ``encodings.py``."""
    for statement in parsed_module().body:
        target, value = assignment(statement)
        if target == name:
            return ast.literal_eval(value)
    raise LookupError(f"{ENCODINGS_SOURCE} assigns no {name}")


def assignment(statement: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """(name, value) of ``name = value`` or ``name: type = value``; (None, None) for anything else."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id, statement.value
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
        return statement.target.id, statement.value
    return None, None


def class_source(node: ast.ClassDef) -> ClassSource:
    attributes, methods, init_parameters = {}, set(), None
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods.add(statement.name)
            if statement.name == "__init__":
                init_parameters = tuple(argument.arg for argument in statement.args.kwonlyargs)
        target, value = assignment(statement)
        if target is not None:
            try:
                attributes[target] = ast.literal_eval(value)
            except ValueError:
                pass  # not a literal (a computed attribute): no mechanism property is one
    bases = tuple(base.id for base in node.bases if isinstance(base, ast.Name))
    return ClassSource(node, bases, attributes, frozenset(methods), init_parameters)


@cache
def module_classes() -> dict[str, ClassSource]:
    """Every top-level class of ``encodings.py`` by name."""
    return {node.name: class_source(node) for node in parsed_module().body if isinstance(node, ast.ClassDef)}


def method_resolution_order(name: str) -> list[str]:
    """Python's C3 order of the module's classes from ``name`` (bases defined elsewhere, such as
    ``nn.Module``, are left out: none of them defines what the catalog reads)."""
    classes = module_classes()
    bases = [base for base in classes[name].bases if base in classes]
    return [name] + c3_merge([method_resolution_order(base) for base in bases] + [bases])


def c3_merge(orders: list[list[str]]) -> list[str]:
    merged, orders = [], [list(order) for order in orders if order]
    while orders:
        head = next((order[0] for order in orders if not any(order[0] in other[1:] for other in orders)), None)
        if head is None:
            raise TypeError(f"{ENCODINGS_SOURCE}: no consistent method resolution order for {orders}")
        merged.append(head)
        orders = [rest for rest in ([c for c in order if c != head] for order in orders) if rest]
    return merged


def registered_name(node: ast.ClassDef) -> str | None:
    """``name`` of a ``@register("name")`` decorator, or None for an unregistered class."""
    for decorator in node.decorator_list:
        if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name)
                and decorator.func.id == "register" and decorator.args):
            return ast.literal_eval(decorator.args[0])
    return None


def catalog_entry(name: str) -> CatalogEntry:
    """The registered class ``name`` as ``encodings.encoding_description`` and ``resolve_encoding`` see it."""
    classes = module_classes()
    order = [classes[cls] for cls in method_resolution_order(name)]
    lookup = {prop: next(cls.attributes[prop] for cls in order if prop in cls.attributes) for prop in PROPERTIES}
    draws_positions = next((cls.node.name for cls in order if "sample_positions" in cls.methods), BASE_CLASS) != BASE_CLASS
    position_term = any(cls.methods & set(POSITION_HOOKS) for cls in order if cls.node.name != BASE_CLASS)
    parameters = next((cls.init_parameters for cls in order if cls.init_parameters is not None), ())
    # The first paragraph, whitespace collapsed (get_docstring cleans it as inspect.cleandoc does).
    summary = " ".join((ast.get_docstring(classes[name].node) or "").split("\n\n")[0].split())
    return CatalogEntry(summary=summary, random_positions=draws_positions, position_term=position_term,
                        parameters=parameters, **lookup)


@cache
def encoding_catalog() -> dict[str, CatalogEntry]:
    """Every registered encoding by its registry name, in the order of the source."""
    catalog = {}
    for cls in module_classes().values():
        name = registered_name(cls.node)
        if name is None:
            continue
        if name in catalog:
            raise ValueError(f"positional encoding {name!r} is registered twice")
        catalog[name] = catalog_entry(cls.node.name)
    return catalog


DEFAULT_NOISE_MAX_LENGTH: int = module_constant("DEFAULT_NOISE_MAX_LENGTH")


def resolve_encoding_name(name: str) -> tuple[str, dict[str, float]]:
    """(registered name, parameters) of a name such as ``rope`` or ``rope@base=100``, with the errors
    of ``encodings.resolve_encoding`` (the same parser, ``names.parse_name``, so a config error reads the same either way)."""
    return parse_name(name, "positional encoding", {registered: entry.parameters for registered, entry
                                                     in encoding_catalog().items()})


def has_position_term(name: str) -> bool:
    """Whether the logit of encoding ``name`` depends on positions at all: some class on its order other than
    ``PositionalEncoding`` defines one of ``POSITION_HOOKS`` (NoPE defines none: its head sees a bag of tokens).
    Not part of ``encoding_description``, which states what ``encodings.encoding_description`` does."""
    registered, _ = resolve_encoding_name(name)
    return encoding_catalog()[registered].position_term


def encoding_description(name: str) -> dict:
    """``encodings.encoding_description(name)``, without torch: the first paragraph of the class
    docstring, the three mechanism properties, and whether it draws its position ids at random."""
    registered, _ = resolve_encoding_name(name)
    entry = encoding_catalog()[registered]
    return {
        "summary": entry.summary,
        "offset_only": entry.offset_only,
        "trained_past_range": entry.trained_past_range,
        "monotone_in_offset": entry.monotone_in_offset,
        "random_positions": entry.random_positions,
    }
