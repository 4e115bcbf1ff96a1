"""The table of positional encodings, read without importing torch: for every registry name, the module and class
that implement it, what its mechanism is, and the parameters a name may set.

Each family module of ``lengthgen/models/encodings/`` declares its encodings at its top in a literal dict,
``DECLARATIONS`` (``rope.py``: ``{"rope": {"class": "Rotary", "offset_only": True, ...}}``). This module reads
those dicts from the source text, with ``ast.literal_eval``: nothing runs, so the workflow's parse (config checks,
the ``{pe}`` wildcard, the variants' predictions) imports no torch. The model finds each class through this same
table (``encodings.base.ENCODINGS``), so a declaration has one source that both read the same way; a value that is
no literal (``not False``), a missing or unknown key, or a class the module does not define stops the run with a
message naming the encoding and the property. The spelling of a name with parameters (``ENCODING_NAME_PATTERN``, the
``{pe}`` wildcard) and its parser are ``lengthgen/models/names.py``'s, shared with the model inits.
"""

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lengthgen.models.names import NAME_PATTERN as ENCODING_NAME_PATTERN  # noqa: F401 (the {pe} wildcard)
from lengthgen.models.names import parse_name

ENCODINGS_FOLDER = Path(__file__).with_name("encodings")
ENCODINGS_PACKAGE = "lengthgen.models.encodings"
# Modules of the folder that implement no encoding: what every encoding shares.
SHARED_MODULES = ("__init__.py", "base.py")
DECLARATIONS = "DECLARATIONS"
PROPERTIES = ("offset_only", "trained_past_range", "monotone_in_offset")
# The hooks through which an encoding puts positions into the logit (``PositionalEncoding``'s are the identity).
POSITION_HOOKS = ("position_embedding", "rotate", "logit_bias", "sample_positions")
# The randomized encodings' default range of position ids, a constant of their module that the config checks read.
NOISE_MODULE, NOISE_CONSTANT = "randomized.py", "DEFAULT_NOISE_MAX_LENGTH"


class DeclarationError(ValueError):
    """A declaration the table cannot read, or one its class contradicts."""


@dataclass(frozen=True)
class CatalogEntry:
    """One registered encoding as its module declares it. ``summary``: the first paragraph of its class docstring."""

    module: str
    class_name: str
    summary: str
    offset_only: bool
    trained_past_range: bool
    monotone_in_offset: bool
    random_positions: bool = False  # draws its position ids per sequence (``sample_positions``)
    position_term: bool = True  # its logit depends on positions at all (NoPE's does not)
    parameters: tuple[str, ...] = ()  # the keyword-only arguments of its class
    # For an encoding whose logit is a function of the offset alone up to a length and not past it (FIRE with its
    # threshold L fixed): (the parameter whose value is that length, its default); None for the others.
    offset_only_up_to: tuple[str, float] | None = None


# Each declared key, what its value must be, and whether a declaration may leave it out (taking the default above).
KEYS = {"class": (str, False), "parameters": (tuple, True), "offset_only": (bool, False),
        "trained_past_range": (bool, False), "monotone_in_offset": (bool, False),
        "random_positions": (bool, True), "position_term": (bool, True), "offset_only_up_to": (str, True)}


def literal(path: Path, name: str, key: str, node: ast.expr):
    """The value of one declared ``key``, which must be a literal of its type (the workflow runs no code to read it)."""
    kind = KEYS[key][0]
    try:
        value = ast.literal_eval(node)
    except ValueError:
        raise DeclarationError(f"{path}: encoding {name!r}: {key} is written {ast.unparse(node)!r}, an expression; "
                               f"write it as a literal {kind.__name__}") from None
    if not isinstance(value, kind) or (kind is tuple and not all(isinstance(item, str) for item in value)):
        raise DeclarationError(f"{path}: encoding {name!r}: {key} must be a {kind.__name__}"
                               f"{' of parameter names' if kind is tuple else ''}, got {value!r}")
    return value


def declared_entry(path: Path, name: str, node: ast.expr, classes: dict[str, ast.ClassDef]) -> CatalogEntry:
    """The entry of encoding ``name`` from its declaration (a dict display) in the module at ``path``."""
    if not isinstance(node, ast.Dict) or not all(isinstance(key, ast.Constant) for key in node.keys):
        raise DeclarationError(f"{path}: encoding {name!r}: its declaration must be a dict with literal keys")
    declared = {}
    for key_node, value in zip(node.keys, node.values):
        key = key_node.value
        if key not in KEYS:
            raise DeclarationError(f"{path}: encoding {name!r}: unknown key {key!r}; allowed: {', '.join(KEYS)}")
        declared[key] = literal(path, name, key, value)
    missing = [key for key, (_, optional) in KEYS.items() if not optional and key not in declared]
    if missing:
        raise DeclarationError(f"{path}: encoding {name!r} does not declare {', '.join(missing)}")
    class_name = declared.pop("class")
    if class_name not in classes:
        raise DeclarationError(f"{path}: encoding {name!r}: class {class_name!r} is not defined in this module")
    bound = declared.get("offset_only_up_to")
    if bound is not None and (declared["offset_only"] or bound not in declared.get("parameters", ())):
        raise DeclarationError(f"{path}: encoding {name!r}: offset_only_up_to must name one of its parameters "
                               f"({', '.join(declared.get('parameters', ())) or 'none declared'}), and offset_only "
                               f"be False (it holds at every length otherwise), got {bound!r}")
    if bound is not None:
        declared["offset_only_up_to"] = (bound, float(keyword_default(path, classes, class_name, bound)))
    summary = " ".join((ast.get_docstring(classes[class_name]) or "").split("\n\n")[0].split())
    return CatalogEntry(module=f"{ENCODINGS_PACKAGE}.{path.stem}", class_name=class_name, summary=summary, **declared)


def keyword_default(path: Path, classes: dict[str, ast.ClassDef], class_name: str, parameter: str):
    """The literal default of keyword-only ``parameter`` of class ``class_name``'s ``__init__``, inherited from a base
    class of the same module where the class defines none."""
    node = classes[class_name]
    for statement in node.body:
        if isinstance(statement, ast.FunctionDef) and statement.name == "__init__":
            defaults = dict(zip((arg.arg for arg in statement.args.kwonlyargs), statement.args.kw_defaults))
            if defaults.get(parameter) is None:
                raise DeclarationError(f"{path}: {class_name}.__init__ has no default for {parameter!r}")
            return ast.literal_eval(defaults[parameter])
    bases = [base.id for base in node.bases if isinstance(base, ast.Name) and base.id in classes]
    if not bases:
        raise DeclarationError(f"{path}: {class_name} defines no __init__ with parameter {parameter!r}")
    return keyword_default(path, classes, bases[0], parameter)


def module_declarations(path: Path) -> dict[str, CatalogEntry]:
    """The encodings one family module declares, by name; {} for a module that declares none."""
    module = ast.parse(path.read_text(), filename=str(path))
    classes = {node.name: node for node in module.body if isinstance(node, ast.ClassDef)}
    for statement in module.body:
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == DECLARATIONS):
            if not isinstance(statement.value, ast.Dict) or not all(
                    isinstance(key, ast.Constant) and isinstance(key.value, str) for key in statement.value.keys):
                raise DeclarationError(f"{path}: {DECLARATIONS} must be a dict literal keyed by encoding names")
            return {key.value: declared_entry(path, key.value, value, classes)
                    for key, value in zip(statement.value.keys, statement.value.values)}
    return {}


def read_catalog(folder: Path) -> dict[str, CatalogEntry]:
    """Every encoding the family modules of ``folder`` declare, by name, sorted; a name declared twice is refused."""
    catalog, homes = {}, {}
    for path in sorted(folder.glob("*.py")):
        if path.name in SHARED_MODULES:
            continue
        for name, entry in module_declarations(path).items():
            if name in catalog:
                raise DeclarationError(f"positional encoding {name!r} is declared twice: {homes[name]} and {path}")
            catalog[name], homes[name] = entry, path
    return dict(sorted(catalog.items()))


@cache
def encoding_catalog() -> dict[str, CatalogEntry]:
    """Every registered encoding by its registry name, sorted."""
    return read_catalog(ENCODINGS_FOLDER)


def encoding_module(name: str) -> str:
    """The family module (dotted) that declares and implements encoding ``name`` (with or without parameters)."""
    registered, _ = resolve_encoding_name(name)
    return encoding_catalog()[registered].module


def module_constant(path: Path, name: str):
    """The literal value a top-level ``name = ...`` assigns in the module at ``path``."""
    for statement in ast.parse(path.read_text(), filename=str(path)).body:
        if isinstance(statement, ast.Assign) and [getattr(target, "id", None) for target in statement.targets] == [name]:
            return ast.literal_eval(statement.value)
    raise LookupError(f"{path} assigns no {name}")


DEFAULT_NOISE_MAX_LENGTH: int = module_constant(ENCODINGS_FOLDER / NOISE_MODULE, NOISE_CONSTANT)


def resolve_encoding_name(name: str) -> tuple[str, dict[str, float]]:
    """(registered name, parameters) of a name such as ``rope`` or ``rope@base=100``, with the errors
    of ``encodings.resolve_encoding`` (the same parser, ``names.parse_name``, so a config error reads the same either way)."""
    return parse_name(name, "positional encoding", {registered: entry.parameters for registered, entry
                                                     in encoding_catalog().items()})


def has_position_term(name: str) -> bool:
    """Whether the logit of encoding ``name`` depends on positions at all (NoPE's does not: its head sees a bag of
    tokens)."""
    registered, _ = resolve_encoding_name(name)
    return encoding_catalog()[registered].position_term


def encoding_description(name: str) -> dict:
    """What the table states about encoding ``name``, as plain data: the first paragraph of its class docstring, the
    three mechanism properties, whether it draws its position ids at random, and the length up to which it is
    offset only where it is not at every length (``offset_only_up_to``: the value its name gives the bounding
    parameter, else that parameter's default; None for every other encoding)."""
    registered, parameters = resolve_encoding_name(name)
    entry = encoding_catalog()[registered]
    bound = entry.offset_only_up_to
    return {"summary": entry.summary, **{prop: getattr(entry, prop) for prop in (*PROPERTIES, "random_positions")},
            "offset_only_up_to": None if bound is None else parameters.get(bound[0], bound[1])}
