"""The files a probe's measurement is made of: its module, the modules it imports, the data they name.

An item's content key (:mod:`claimcheck.engine.item_key`) must change when the code or data that
produce its numbers change, or ``--claims-changed`` would carry forward a result the edited code no
longer makes. The probe function's own file is not enough: probes keep their shared schedules,
prompt sets and generation loops in helper modules and YAML files.

What counts, found by reading source (nothing is imported here):

- the probe's module, and every module it imports, transitively, that belongs to the probe's own
  top-level package (``probes``, a user's package) or to claimcheck's measuring layers
  (:data:`MEASURING_PACKAGES`); the rest of claimcheck is covered by its version in the key;
- the packages that enclose a module of the probe's own package (importing ``probes.curves.fork_map``
  runs ``probes/__init__.py`` and ``probes/curves/__init__.py``), so probes grouped by family read
  data kept in their package's ``data/`` folder;
- every data file (not Python) inside the folders of those packages whose file name appears in
  the source of a module reached.

A data file read by a computed name (a glob, a joined path without its name in the source) is not
seen; name the file in the source to make it count.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

#: claimcheck's packages whose code produces a measurement (generation, model loading, the BLAS setup).
MEASURING_PACKAGES = ("claimcheck.probing", "claimcheck.models", "claimcheck.harness")
#: Modules that only re-export (what probes import): a name imported from one counts as the module it
#: comes from, so a probe depends on the code it uses, not on everything the facade gathers.
FACADES = ("claimcheck.api", "claimcheck.api.sampling")
_SKIPPED_FOLDERS = {"__pycache__", ".mypy_cache", ".pytest_cache"}
_CODE_SUFFIXES = {".py", ".pyc", ".pyi", ".so"}


@functools.lru_cache(maxsize=None)
def _package_folder(top: str) -> Path | None:
    """The folder of top-level package ``top``, found without importing anything."""
    module = sys.modules.get(top)
    locations = list(getattr(module, "__path__", []) or []) if module is not None else []
    if not locations:
        try:
            spec = importlib.util.find_spec(top)  # a top-level name: searches sys.path, imports nothing
        except (ImportError, ValueError):
            return None
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


@functools.lru_cache(maxsize=None)
def module_file(name: str) -> Path | None:
    """The source file of module ``name`` inside its package's folder (None: not a source module there)."""
    top, *rest = name.split(".")
    folder = _package_folder(top)
    if folder is None:
        return None
    candidate = folder.joinpath(*rest)
    for path in (candidate / "__init__.py", candidate.with_name(candidate.name + ".py") if rest else None):
        if path is not None and path.is_file():
            return path
    return None


@functools.lru_cache(maxsize=None)
def imported_names(name: str, path: Path) -> tuple[str, ...]:
    """Absolute names of what module ``name`` (at ``path``) imports, anywhere in its source."""
    return tuple(_imports(name, path))


def _imports(name: str, path: Path) -> Iterator[str]:
    try:
        tree = ast.parse(_text(path))
    except SyntaxError:
        return
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".") if package else []
                base_parts = base_parts[: len(base_parts) - (node.level - 1)] if node.level > 1 else base_parts
                base = ".".join(part for part in [*base_parts, node.module or ""] if part)
            else:
                base = node.module or ""
            if base in FACADES:
                homes = _facade_homes(base)
                yield from (homes.get(alias.name, f"{base}.{alias.name}") for alias in node.names)
                continue
            if base:
                yield base
            for alias in node.names:  # ``from package import module`` names a module, not only a symbol
                if base and alias.name != "*":
                    yield f"{base}.{alias.name}"


@functools.lru_cache(maxsize=None)
def _facade_homes(facade: str) -> dict[str, str]:
    """Each name a facade module imports from elsewhere -> the module it comes from (read from its source)."""
    path = module_file(facade)
    homes: dict[str, str] = {}
    if path is None:
        return homes
    try:
        tree = ast.parse(_text(path))
    except SyntaxError:
        return homes
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            homes.update({alias.asname or alias.name: node.module for alias in node.names})
    return homes


def _followed(name: str, roots: tuple[str, ...]) -> bool:
    return any(name == root or name.startswith(root + ".") for root in roots)


@functools.lru_cache(maxsize=None)
def measurement_files(module: str) -> tuple[tuple[str, Path], ...]:
    """Every file the measurement of a probe defined in ``module`` is made of, as (label, path), sorted.

    A label names the file independently of the checkout: a module's dotted name, or a data file's
    path under the package folder it sits in (``probes:data/curve-prompts.yaml``).
    """
    own = module.split(".")[0]
    roots = (own, *MEASURING_PACKAGES)
    reached: dict[str, Path] = {}
    waiting = [module]
    while waiting:
        name = waiting.pop()
        if name in reached or not _followed(name, roots):
            continue
        path = module_file(name)
        if path is None:
            continue
        reached[name] = path
        waiting.extend(imported for imported in imported_names(name, path) if imported not in reached)
        parent = name.rpartition(".")[0]
        if parent and _followed(parent, (own,)) and parent not in reached:
            waiting.append(parent)  # its __init__ runs first; its folder may hold the data the module names
    sources = "\n".join(_text(path) for path in reached.values())
    folders = {path.parent: name if path.name == "__init__.py" else name.rpartition(".")[0] for name, path in reached.items()}
    data = {(f"{package}:{candidate.relative_to(folder).as_posix()}", candidate)
            for folder, package in folders.items() for candidate in _data_files(folder) if candidate.name in sources}
    return tuple(sorted({*reached.items(), *data}))


@functools.lru_cache(maxsize=None)
def _text(path: Path) -> str:
    """A source file's text, read once however many probe modules reach it ("" where unreadable)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _data_files(folder: Path) -> Iterator[Path]:
    """Files that are not Python in ``folder`` and in its sub-folders that are not packages."""
    for entry in sorted(folder.iterdir()) if folder.is_dir() else ():
        if entry.is_file() and entry.suffix not in _CODE_SUFFIXES:
            yield entry
        elif entry.is_dir() and entry.name not in _SKIPPED_FOLDERS and not (entry / "__init__.py").exists():
            yield from (f for f in sorted(entry.rglob("*")) if f.is_file() and f.suffix not in _CODE_SUFFIXES)


@functools.lru_cache(maxsize=None)
def measurement_digest(module: str) -> str:
    """sha256 over the labels and contents of :func:`measurement_files` ("" when none is found).

    Read once per process: a run keys its items on the code it started with.
    """
    files = measurement_files(module)
    if not files:
        return ""
    digest = hashlib.sha256()
    for label, path in files:
        digest.update(label.encode() + b"\0")
        try:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()


def forget() -> None:
    """Drop what was read, so files edited since are read again (tests; a process that outlives an edit)."""
    for cached_function in (_package_folder, module_file, _text, imported_names, measurement_files, measurement_digest,
                            _facade_homes):
        cached_function.cache_clear()
