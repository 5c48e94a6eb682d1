"""Probe registry: named functions that measure something and return samples.

A probe is a plain function registered with :func:`probe`. It receives a
:class:`ProbeContext` (how many samples are wanted now, the seed, a place for
artifacts) plus the claim's params as keyword arguments, and returns a mapping
of output name to a list of numbers. Probes come from the project's ``probes/``
folder (or the modules and paths ``[tool.claimcheck] probes`` names) and from
every package registered in the ``claimcheck.probes`` entry point group (the
probes shipped with claimcheck among them), so adding a probe means writing one
registered function. A probe name belongs to one function: a second definition
elsewhere is an error naming both, except that a project's own probe shadows a probe
shipped by an installed package (one notice line names both), so a release that adds a
probe never breaks a repository that already had one of that name. ``<package>:<name>``
(``claimcheck:kv_cache_step``) always reaches the shipped definition.
"""

from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Mapping, Sequence

from claimcheck.errors import ClaimcheckError
from claimcheck.probing.plots import PackPlot
from claimcheck.suggest import did_you_mean

Samples = Mapping[str, Sequence[float]]


@dataclass(frozen=True)
class Output:
    """Metadata for one probe output: its unit and which direction is better."""

    unit: str = ""
    higher_is_better: bool | None = None
    description: str = ""


@dataclass
class ProbeContext:
    """What a probe may use besides its params.

    Attributes:
        n: samples wanted in this call (a probe may return more or fewer; the
            runner counts what came back).
        look: 0-based index of this call's look within the item's sequential run.
        offset: index within the look of this call's first sample. An ``over:`` sweep splits each
            look into two calls per level (forward, then backward), so a probe that derives its
            draws from the look must key sample ``i`` of a call on ``offset + i``: the look's
            draws are then its own in each call, and the same as one call for the whole look.
        looks: how many looks the item's plan has (1: the design comes whole in one call; a
            probe over a fixed prompt selection measures it in groups only when there are more).
        seed: the run seed combined with the item id, stable across runs.
        rng: a ``random.Random`` seeded from ``seed`` for pure-Python choices.
        artifacts: JSON-serialisable evidence the probe wants kept (e.g. a
            trace); saved next to the verdict.
        info: facts about the measurement to record (model variant, BLAS, ...).
        fresh: which cached expensive results to ignore: ``False`` none, a timestamp those
            stored before it (``--claims-fresh`` passes the run's start), ``True`` all; pass it
            on to :func:`claimcheck.engine.cache.cached`.
        progress: callback for a one-line progress message on long probes.
        reads: the outputs the item's check decides on, or ``None`` when unknown (a direct call): a
            probe may leave out work that only other outputs need (:meth:`wants`), returning
            those outputs empty.
    """

    n: int = 1
    look: int = 0
    offset: int = 0
    looks: int = 1
    seed: int = 0
    rng: random.Random = field(default_factory=random.Random)
    artifacts: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    fresh: bool | float = False
    cache_dir: str | None = None
    progress: Callable[[str], None] = lambda message: None
    reads: frozenset[str] | None = None

    def wants(self, *outputs: str) -> bool:
        """Whether any of ``outputs`` is read by the check (always, when what it reads is unknown)."""
        return self.reads is None or any(name in self.reads for name in outputs)


# A probe takes the context and its own keyword parameters; their names and types vary per probe.
ProbeFunction = Callable[..., Samples]
# Whether a probe's items are warmed ahead of the run on a GPU: True (with the item's params), or the params
# to warm an item with (lighter ones that run the same kernels), None to leave that item cold.
WarmUp = bool | Callable[[dict[str, Any]], "dict[str, Any] | None"]
# A probe's own check of one set of params (names a registry holds, values that must agree): problems
# as (param name, one-line message), for ``claimcheck validate`` to place at the param's line.
ParamCheck = Callable[[Mapping[str, Any]], list[tuple[str, str]]]
# Lines a listing shows under a probe: what its name-valued params may be (registered ops, families).
Catalogue = Callable[[], list[str]]


@dataclass(frozen=True)
class RegisteredProbe:
    """A probe with the metadata declared at registration."""

    name: str
    function: ProbeFunction
    outputs: Mapping[str, Output]
    reads_text: bool = False
    deterministic: bool = False
    warm_up: WarmUp = False
    description: str = ""
    module: str = ""
    file: str = ""
    plot: PackPlot | None = None
    example: str = ""
    check_params: ParamCheck | None = None
    catalogue: Catalogue | None = None

    @property
    def source(self) -> str:
        """Where the probe is defined, as ``module (file)``, for messages that name two definitions."""
        module = self.module or getattr(self.function, "__module__", "?")
        return f"{module} ({self.file})" if self.file else module

    def __call__(self, ctx: ProbeContext, **params: Any) -> Samples:
        return self.function(ctx, **params)


class UnknownProbeError(LookupError):
    """Raised for a probe name nobody registered; the message lists what exists."""


class ProbeLoadError(ClaimcheckError):
    """A probe source cannot be found or imported; the message is one line naming it."""


class DuplicateProbeError(ProbeLoadError):
    """Two different functions claim one probe name; the message names both definitions."""


_REGISTRY: dict[str, RegisteredProbe] = {}
# Probes of installed packages (the ``claimcheck.probes`` entry points) by ``<entry name>:<probe name>``.
_QUALIFIED: dict[str, RegisteredProbe] = {}
# Entry point module -> its entry name, filled before those modules are imported.
_PACKAGES: dict[str, str] = {}
# Shadowed probe name -> the notice line naming both definitions.
_SHADOWED: dict[str, tuple[RegisteredProbe, RegisteredProbe]] = {}  # name -> (project's, shipped)
SHIPPED_PREFIX = "claimcheck"


def probe(
    name: str,
    *,
    outputs: Mapping[str, Output] | None = None,
    reads_text: bool = False,
    deterministic: bool = False,
    warm_up: WarmUp = False,
    plot: PackPlot | None = None,
    example: str = "",
    check_params: ParamCheck | None = None,
    catalogue: Catalogue | None = None,
) -> Callable[[ProbeFunction], ProbeFunction]:
    """Register ``function`` as the probe ``name``.

    Args:
        name: the name claims use in ``probe.name``.
        outputs: output name -> :class:`Output`; claims may only read these.
        reads_text: the probe's result depends on generated text, so random
            weight models are refused for it.
        deterministic: one sample decides (arithmetic, header reads).
        warm_up: one sample is cheap and runs every kernel a whole item runs, so on a GPU claimcheck may
            call the probe once ahead of its item in a background process, to compile those kernels
            while other items measure (:mod:`claimcheck.warm_start`); or a function from an item's params
            to the params to warm it with (lighter ones that run the same kernels), None to leave it cold.
        plot: the report's picture of this probe's items (:class:`PackPlot`), if any.
        example: one worked claim in YAML, for the generated probe reference (tested to validate).
        check_params: the probe's own check of a claim's params, run by ``claimcheck validate``
            (e.g. op names against the op registry).
        catalogue: lines the listing shows under the probe (e.g. its registered ops).
    """

    def decorate(function: ProbeFunction) -> ProbeFunction:
        file = _defining_file(function)
        registered = RegisteredProbe(
            name=name,
            function=function,
            outputs=dict(outputs or {}),
            reads_text=reads_text,
            deterministic=deterministic,
            warm_up=warm_up,
            description=(function.__doc__ or "").strip().splitlines()[0] if function.__doc__ else "",
            module=function.__module__,
            file=file,
            plot=plot,
            example=example,
            check_params=check_params,
            catalogue=catalogue,
        )
        package = _package_of(function.__module__)
        if package is not None:
            _QUALIFIED[f"{package}:{name}"] = registered
        existing = _REGISTRY.get(name)
        if existing is not None and _same_definition(existing, function, file):
            return function  # one file imported again or under a second name: the first registration stands
        if existing is not None and _live(existing):
            shadowing = _shadowing(existing, registered)
            if shadowing is None:
                raise DuplicateProbeError(f"probe `{name}` is defined twice: in {existing.source} and in "
                                          f"{function.__module__} ({file or '?'}); rename one of them")
            own, shipped = shadowing
            _SHADOWED[name] = shadowing
            _REGISTRY[name] = own
            return function
        _REGISTRY[name] = registered
        return function

    return decorate


def _package_of(module: str) -> str | None:
    """The entry name of the installed probe package ``module`` belongs to, None for a project's own module."""
    for package, entry in _PACKAGES.items():
        if module == package or module.startswith(f"{package}."):
            return entry
    return None


def source_package(module: str) -> str:
    """The package a probe module was loaded with: its entry point's module (``claimcheck_probes``), else its
    top-level package (a project's ``probes``); a module's files are looked up from there down."""
    entries = [package for package in _PACKAGES if module == package or module.startswith(f"{package}.")]
    return max(entries, key=len) if entries else module.partition(".")[0]


def _shadowing(existing: RegisteredProbe, new: RegisteredProbe) -> tuple[RegisteredProbe, RegisteredProbe] | None:
    """``(project's, shipped)`` when exactly one of two definitions comes from an installed package."""
    old_shipped, new_shipped = _package_of(existing.module) is not None, _package_of(new.module) is not None
    if old_shipped == new_shipped:
        return None
    return (existing, new) if new_shipped else (new, existing)


def shadow_notices() -> list[str]:
    """A line per pair of folders whose probes shadow shipped ones: the probe named when it is one, counted when many.

    A second checkout of a probe package (a worktree run with another checkout's install) shadows every
    shipped probe at once; one line per probe said the same thing dozens of times on every command.
    """
    groups: dict[tuple[str, str, str], list[tuple[RegisteredProbe, RegisteredProbe]]] = {}
    for name in sorted(_SHADOWED):
        if _REGISTRY.get(name) is None:
            continue
        own, shipped = _SHADOWED[name]
        entry = _package_of(shipped.module) or SHIPPED_PREFIX
        groups.setdefault((_folder(own), _folder(shipped), entry), []).append((own, shipped))
    lines = []
    for (own_folder, shipped_folder, entry), pairs in groups.items():
        if len(pairs) == 1:
            (own, shipped), = pairs
            lines.append(f"probe `{own.name}` of this project ({own.source}) shadows the shipped one "
                         f"({shipped.source}); claims reach that one as `{entry}:{own.name}`")
            continue
        names = ", ".join(own.name for own, _ in pairs[:3]) + (", ..." if len(pairs) > 3 else "")
        lines.append(f"{len(pairs)} probes of this project ({own_folder}: {names}) shadow the shipped ones of the "
                     f"same names ({shipped_folder}); claims reach those as `{entry}:NAME`")
    return lines


def _folder(registered: RegisteredProbe) -> str:
    """The folder a probe's file lies in (its module's package when it was not read from a file)."""
    return os.path.dirname(registered.file) if registered.file else registered.module.rpartition(".")[0]


def _defining_file(function: ProbeFunction) -> str:
    """The real path of the file that defines ``function`` ("" when it was not read from a file)."""
    code = getattr(function, "__code__", None)
    filename = getattr(code, "co_filename", "") if code is not None else ""
    return os.path.realpath(filename) if filename and not filename.startswith("<") else ""


def _same_definition(existing: RegisteredProbe, function: ProbeFunction, file: str) -> bool:
    """One function seen twice: the same qualified name in the same file (or module, without files)."""
    return same_definition(existing.function, function)


def same_definition(first: Callable[..., Any], second: Callable[..., Any]) -> bool:
    """Whether two functions are one definition seen twice (one file imported under two names).

    Registries keyed by name (probes here, ops in a probe package's own registry) accept a second
    registration of the same definition and refuse a different function under the same name.
    """
    if getattr(first, "__qualname__", None) != getattr(second, "__qualname__", None):
        return False
    first_file, second_file = _defining_file(first), _defining_file(second)
    if first_file or second_file:
        return first_file == second_file
    return getattr(first, "__module__", None) == getattr(second, "__module__", None)


def definition_source(function: Callable[..., Any]) -> str:
    """``module.qualname`` of ``function``, for messages that name two definitions."""
    return f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', repr(function))}"


def _live(registered: RegisteredProbe) -> bool:
    """Whether the module that registered a probe is still the one imported under its name.

    A project's ``probes`` package replaced by another project's (tests collect several projects
    in one process) leaves stale registrations; a new definition replaces those silently.
    """
    if not registered.file:
        return True
    module = sys.modules.get(registered.module)
    loaded = getattr(module, "__file__", None) if module is not None else None
    return bool(loaded) and os.path.realpath(str(loaded)) == registered.file


def get_probe(name: str) -> RegisteredProbe:
    """Look up a probe (``<package>:<name>`` for an installed package's own), or fail with a did-you-mean."""
    if name in _QUALIFIED:
        return _QUALIFIED[name]
    prefix, _, plain = name.rpartition(":")
    if prefix == SHIPPED_PREFIX and plain in _REGISTRY and plain not in _SHADOWED:
        return _REGISTRY[plain]  # claimcheck's own checkout: its probes/ is the shipped package
    try:
        return _REGISTRY[name]
    except KeyError:
        known = sorted(_REGISTRY)
        hint = did_you_mean(name, known)
        raise UnknownProbeError(f"unknown probe `{name}`{hint}; known probes: {', '.join(known) or 'none'}") from None


def registered_probes() -> dict[str, RegisteredProbe]:
    """A snapshot of the registry, for listings and validation."""
    return dict(_REGISTRY)


ENTRY_POINT_GROUP = "claimcheck.probes"
PROJECT_PACKAGE = "probes"


def load_probe_modules(root: str | None = None, sources: Sequence[str] | None = None) -> list[str]:
    """Import the probe modules so their ``@probe`` registrations run.

    Two kinds of source are imported, in this order:

    - every module of the ``claimcheck.probes`` entry point group (a package stands for all its
      modules); the probes shipped with claimcheck come this way, as ``claimcheck_probes``;
    - the project's own sources: ``sources`` when given (the pytest ini), else ``[tool.claimcheck]
      probes`` in ``<root>/pyproject.toml``, else the folder ``<root>/probes`` if it exists. An entry
      is a folder or ``.py`` file relative to ``root``, or a dotted module name. The folder
      ``<root>/probes`` is imported as the package ``probes`` whether or not it has an
      ``__init__.py``, so its modules may import each other.

    An entry point that is the project's own folder (this repository, installed editable) is
    imported once, under the project's name. A probe package loaded earlier in this process from
    another project's folder is replaced.

    Returns:
        The names of the modules imported.

    Raises:
        ProbeLoadError: a source is missing or fails to import (one line, naming it).
        DuplicateProbeError: two different functions define one probe name.
    """
    from claimcheck import project_config

    project = Path(root).resolve() if root is not None else None
    if sources is None and project is not None:
        sources = project_config.probe_sources(project)
        origin = f"[tool.claimcheck] probes in {project_config.pyproject_path(project)}"
    else:
        origin = "the claims_probes ini option"
    if sources is None:
        sources = [PROJECT_PACKAGE] if project is not None and (project / PROJECT_PACKAGE).is_dir() else []
        origin = f"{project}"
    resolved = [_resolve_source(entry, project, origin) for entry in sources]
    folders = [location for _, location in resolved if location is not None and location.is_dir()]
    entry_dirs = _entry_point_dirs()
    for name, location in resolved:
        if location is not None and location.is_dir():
            _forget_other_folder(name, location)
    imported: list[str] = []
    _PACKAGES.update(_entry_names())
    for module_name, location in entry_dirs.items():
        if location is not None and any(_same_path(location, folder) for folder in folders):
            continue  # the project's own folder: imported below under the project's name
        imported += _import_module_tree(module_name)
    if project is not None and str(project) not in sys.path:
        sys.path.insert(0, str(project))  # project probes may import the project's other modules
    for name, location in resolved:
        if location is None:
            imported += _import_module_tree(name)
        elif location.is_dir():
            imported += _import_folder(name, location)
        else:
            imported.append(_import_file(name, location))
    return imported


def _resolve_source(entry: str, project: Path | None, origin: str) -> tuple[str, Path | None]:
    """A configured entry as (module name, folder or file), the path None for a dotted module name."""
    looks_like_path = "/" in entry or "\\" in entry or entry.endswith(".py")
    candidate = Path(entry) if Path(entry).is_absolute() or project is None else project / entry
    if not looks_like_path and not candidate.exists():
        return entry, None
    if not candidate.exists():
        raise ProbeLoadError(f"probe source `{entry}` (from {origin}): no such file or folder {candidate}")
    path = candidate.resolve()
    try:
        relative = path.relative_to(project) if project is not None else Path(path.name)
    except ValueError:
        relative = Path(path.name)
    parts = [*relative.parent.parts, relative.stem if path.is_file() else relative.name]
    name = ".".join(part.replace("-", "_").replace(".", "_") for part in parts if part)
    return name, path


def _entry_point_dirs() -> dict[str, Path | None]:
    """Each entry point's module -> the folder of its package (None for a plain module), imported later."""
    import importlib.util
    from importlib.metadata import entry_points

    found: dict[str, Path | None] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            spec = importlib.util.find_spec(entry.module)
        except (ImportError, ValueError) as error:
            raise ProbeLoadError(f"entry point `{entry.name} = {entry.value}` ({ENTRY_POINT_GROUP}): "
                                 f"{type(error).__name__}: {error}") from None
        if spec is None:
            raise ProbeLoadError(f"entry point `{entry.name} = {entry.value}` ({ENTRY_POINT_GROUP}): "
                                 f"no module `{entry.module}`")
        locations = list(spec.submodule_search_locations or [])
        found[entry.module] = Path(locations[0]).resolve() if locations else None
    return found


def _entry_names() -> dict[str, str]:
    """Each entry point's module -> its entry name (claimcheck's own probes: ``claimcheck``), the prefix of
    the qualified names ``<entry name>:<probe name>``."""
    from importlib.metadata import entry_points

    return {entry.module: entry.name for entry in entry_points(group=ENTRY_POINT_GROUP)}


def _same_path(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _under(file: str, folder: Path) -> bool:
    return bool(file) and Path(file).is_relative_to(os.path.realpath(folder))


def _forget_other_folder(name: str, folder: Path) -> None:
    """Drop the package ``name`` from ``sys.modules`` if it was imported from another folder earlier.

    One process may collect several projects (tests do): each project's ``probes`` replaces the
    last, and the probes the old modules registered become stale (see :func:`_live`).
    """
    for key in [key for key in sys.modules if key == name or key.startswith(f"{name}.")]:
        paths = [*getattr(sys.modules[key], "__path__", [])] or [getattr(sys.modules[key], "__file__", None) or ""]
        if not any(_under(os.path.realpath(p), folder) for p in paths if p):
            del sys.modules[key]


def _import_module_tree(name: str) -> list[str]:
    """Import module ``name``; for a package also each of its public modules, and those of its public subpackages."""
    import pkgutil

    module = _import(name, None)
    imported = [name]
    for info in sorted(pkgutil.iter_modules(getattr(module, "__path__", [])), key=lambda m: m.name):
        if not info.name.startswith("_"):
            imported += _import_module_tree(f"{name}.{info.name}") if info.ispkg else \
                [_import(f"{name}.{info.name}", None).__name__]
    return imported


def _import_folder(name: str, folder: Path) -> list[str]:
    """Import each public ``*.py`` of ``folder`` as ``<name>.<stem>``, with or without ``__init__.py``, and each
    public subpackage's modules."""
    import importlib.machinery
    import importlib.util

    package = sys.modules.get(name)
    if package is None or not any(_same_path(Path(p), folder) for p in getattr(package, "__path__", [])):
        init = folder / "__init__.py"
        if init.is_file():
            spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
        else:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [str(folder)]
        assert spec is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        if spec.loader is not None:
            _run(lambda: spec.loader.exec_module(package), name, init)  # type: ignore[union-attr]
    return [name, *_import_folder_modules(name, folder)]


def _import_folder_modules(name: str, folder: Path) -> list[str]:
    """Import each public ``*.py`` of ``folder`` as ``<name>.<stem>``, and each public sub-folder with an
    ``__init__.py`` as the subpackage ``<name>.<folder>`` with its own modules (probes grouped by family)."""
    imported: list[str] = []
    entries = [path for path in folder.iterdir() if not path.name.startswith("_")]
    for path in sorted(entries, key=lambda entry: entry.stem):
        if path.suffix == ".py" and path.is_file():
            imported.append(_import(f"{name}.{path.stem}", path).__name__)
        elif path.is_dir() and path.name.isidentifier() and (path / "__init__.py").is_file():
            imported.append(_import(f"{name}.{path.name}", path / "__init__.py").__name__)
            imported += _import_folder_modules(f"{name}.{path.name}", path)
    return imported


def _import_file(name: str, file: Path) -> str:
    """Import one probe file as the module ``name``."""
    import importlib.util

    if name in sys.modules and _same_path(Path(getattr(sys.modules[name], "__file__", "") or "."), file):
        return name
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ProbeLoadError(f"{file}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    _run(lambda: spec.loader.exec_module(module), name, file)  # type: ignore[union-attr]
    return name


def _import(name: str, file: Path | None) -> ModuleType:
    import importlib

    return _run(lambda: importlib.import_module(name), name, file)


def _run(step: Callable[[], Any], name: str, file: Path | None) -> Any:
    """Run one import step; any failure becomes one line naming the module and where it failed."""
    import traceback

    try:
        result = step()
    except DuplicateProbeError:
        sys.modules.pop(name, None)
        raise
    except Exception as error:  # noqa: BLE001 - a broken probe module is the project's input error
        sys.modules.pop(name, None)
        where = str(file) if file is not None else ""
        if isinstance(error, SyntaxError) and error.filename:
            where = f"{error.filename}:{error.lineno}"
        else:
            frames = traceback.extract_tb(error.__traceback__)
            own = [f for f in frames if "importlib" not in f.filename and not f.filename.endswith("claimcheck/probing/registry.py")]
            if own:
                where = f"{own[-1].filename}:{own[-1].lineno}"
        prefix = f"{where}: " if where else ""
        raise ProbeLoadError(f"{prefix}cannot import probe module `{name}`: {type(error).__name__}: "
                             f"{str(error).splitlines()[0] if str(error) else ''}".rstrip(": ")) from None
    return result if result is not None else sys.modules.get(name)
