"""Which lengthgen source files a workflow script runs, found by reading its imports, and their fingerprints.

Rules list these files' fingerprints (``fingerprints``: path and content digest) as params, so that editing a
module reruns exactly the jobs that run it (and what follows from them), and nothing else. The imports are read
with ``ast``, not executed, so this costs milliseconds at workflow start and imports nothing heavy.

A package's ``__init__.py`` counts when something is imported from it by name
(``from lengthgen.plots import save_figure``), and when a submodule is imported through it and it
runs something (``lengthgen/studies/robustness/__init__.py`` defines a name, which runs with any import of
``lengthgen.studies.robustness.tables``); a package that is a docstring only (``lengthgen.experiments``) is no
input of any job.
"""

import ast
import hashlib
from functools import cache
from pathlib import Path

from lengthgen.models.encodings_table import encoding_module  # read from the source text: no torch

PACKAGE = "lengthgen"
# Files a module reads when it is imported, which no import statement shows: inputs of every job that runs it.
# (lengthgen/models/defaults.py reads the config schema's defaults, but no job's output depends on them: a job is
# given every model setting, defaults filled in, in its params; tests/test_families.py holds that. So an edit to the
# schema reruns no model job.)
READ_AT_IMPORT = {"lengthgen/checks/rule_history.py": ("docs/rule_history.yaml",)}
DIGEST_LENGTH = 16  # hex digits of SHA-256: 64 bits, no chance collision between two versions of a file


def _module_file(root: Path, dotted: str) -> Path | None:
    """The file of module ``dotted`` (dotted, as ``lengthgen.models.head``) below ``root``, or None if it is no module."""
    path = root.joinpath(*dotted.split("."))
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return None


@cache
def runs_something(path: Path) -> bool:
    """Whether the module is more than a docstring and dunder names (``__version__``): loading one that is not runs
    nothing a job's outputs could depend on. A module of constants (an experiment's thresholds) runs something."""
    for node in ast.parse(path.read_text(), filename=str(path)).body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        dunder = isinstance(node, ast.Assign) and all(isinstance(target, ast.Name) and target.id.startswith("__")
                                                      for target in node.targets)
        if not (docstring or dunder):
            return True
    return False


def _packages_run(root: Path, dotted: str) -> set[Path]:
    """The ``__init__.py`` files that importing ``dotted`` runs on the way, those that run something."""
    parts = dotted.split(".")
    packages = (root.joinpath(*parts[:end], "__init__.py") for end in range(1, len(parts)))
    return {package for package in packages if package.is_file() and runs_something(package)}


@cache  # the closures of every script and experiment module share most modules: parse each file once a start
def _imported_files(root: Path, source: Path) -> frozenset[Path]:
    """The lengthgen files that ``source`` imports directly."""
    found = set()
    for node in ast.walk(ast.parse(source.read_text(), filename=str(source))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = []
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                names.append(submodule if _module_file(root, submodule) else node.module)
        else:
            continue
        for name in names:
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                path = _module_file(root, name)
                if path is not None and name != PACKAGE:
                    found |= {path, *_packages_run(root, name)}
    return frozenset(found)


@cache
def lengthgen_files(root: Path, script: Path) -> tuple[Path, ...]:
    """Every lengthgen file ``script`` runs, directly or through other lengthgen modules, and every file those
    modules read when imported (``READ_AT_IMPORT``), sorted.

    ``root`` is the folder that holds the ``lengthgen`` package.
    """
    seen, pending = set(), [Path(script)]
    while pending:
        for path in _imported_files(root, pending.pop()) - seen:
            seen.add(path)
            pending.append(path)
    read = {root / data for path in seen for data in READ_AT_IMPORT.get(path.relative_to(root).as_posix(), ())}
    return tuple(sorted(seen | read))


@cache  # the same files are fingerprinted for many rules and every module of the workflow
def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:DIGEST_LENGTH]


def fingerprints(root: Path, files) -> tuple[str, ...]:
    """Each of ``files`` as ``path@digest``, sorted: its path relative to ``root`` and the first ``DIGEST_LENGTH`` hex
    digits of its content's SHA-256. Snakemake records a job's params and reruns the job when one changes."""
    return tuple(f"{Path(path).relative_to(root).as_posix()}@{_digest(Path(path))}" for path in sorted(files))


def encoding_sources(root: Path, names) -> list[Path]:
    """The lengthgen files a job loads to build the encodings ``names`` (registry names, with or without parameters):
    each one's family module, which the registry imports by name when the encoding is built (``importlib``: no
    import statement shows it), and what that module imports. Rules that build an encoding list these besides their
    script's files, so that editing or adding one encoding reruns the jobs of that encoding and of no other."""
    return _with_imports(root, (_module_file(root, encoding_module(name)) for name in names))


def schema_sources(root: Path, names) -> list[Path]:
    """The lengthgen files a job runs to get the schemas ``names``: each one's module, and what that imports."""
    from lengthgen.tables.registry import module_file, schema_named_module  # pyarrow: only where schemas are asked

    return _with_imports(root, (module_file(schema_named_module(name)) for name in names))


def _with_imports(root: Path, modules) -> list[Path]:
    """Each of the module files ``modules``, loaded by name at run time, and every lengthgen file it imports, sorted."""
    return sorted({path for module in modules for path in (module, *lengthgen_files(root, module))})
