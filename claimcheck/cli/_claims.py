"""``claimcheck validate``: every problem of the claim files before anything runs (``new`` is in ``_new``)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Sequence

from claimcheck.errors import ClaimcheckError

from ._base import FAILED, OK, UsageError, _fail


def _loader() -> ModuleType:
    """The claim loader, imported only by the commands that read claim files."""
    from claimcheck.claims import loader

    return loader


def _load_probes(root: str, sources: Sequence[str] | None = None) -> None:
    from claimcheck.probing.registry import load_probe_modules

    try:
        load_probe_modules(root, sources)
    except Exception as error:  # noqa: BLE001 - a broken probe module is an input error, shown in one line
        raise UsageError(f"cannot import the probes under {root}: {type(error).__name__}: {error}") from None
    from claimcheck.probing.registry import shadow_notices

    for notice in shadow_notices():
        print(f"claimcheck: {notice}", file=sys.stderr)


def ini_probe_sources(root: str) -> tuple[str, list[str]] | None:
    """The pytest ini option ``claims_probes`` that ``pytest`` run from ``root`` reads, with its rootdir.

    The plugin passes this option to the probe loader ahead of ``[tool.claimcheck] probes``, so
    validate must read it the same way: from the config file pytest itself picks (pytest's own
    search, so pytest.ini, pyproject.toml, tox.ini and setup.cfg rank as they do for pytest),
    relative to that file's folder, which becomes pytest's rootdir. ``None``: unset or empty.
    """
    folder = Path(root).resolve()
    search: Callable[..., Any]
    try:
        from _pytest.config.findpaths import locate_config  # the search pytest runs; no public twin
        search = locate_config
    except ImportError:  # the light lint environment (pre-commit) has no pytest
        search = _locate_config_without_pytest
    try:
        found = search(folder, [folder])
    except Exception as error:  # noqa: BLE001 - a malformed config file is an input error, shown in one line
        raise UsageError(f"cannot read pytest's configuration above {folder}: {' '.join(str(error).split())}") from None
    rootdir, inifile, options = found[0], found[1], found[2]
    raw = options.get("claims_probes")
    value = getattr(raw, "value", raw)  # pytest 9 wraps each value with its origin
    if isinstance(value, str):
        entries = shlex.split(value)
    elif isinstance(value, list) and all(isinstance(entry, str) for entry in value):
        entries = list(value)
    elif value is None:
        return None
    else:
        raise UsageError(f"{inifile}: claims_probes must be a list of probe sources, got {value!r}")
    return (str(rootdir), entries) if entries and rootdir is not None else None


def _locate_config_without_pytest(folder: Path, _args: object) -> tuple[Path | None, Path | None, dict[str, object]]:
    """pytest's config search for the one option validate needs, where pytest is not installed.

    The same files in the same order, nearest folder first: ``pytest.ini`` (``[pytest]``),
    ``pyproject.toml`` (``[tool.pytest.ini_options]``), ``tox.ini`` (``[pytest]``), ``setup.cfg``
    (``[tool:pytest]``); the first that configures pytest decides.
    """
    import configparser
    import tomllib

    for base in (folder, *folder.parents):
        for name, section in (("pytest.ini", "pytest"), ("pyproject.toml", None), ("tox.ini", "pytest"),
                              ("setup.cfg", "tool:pytest")):
            path = base / name
            if not path.is_file():
                continue
            if section is None:
                table = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("pytest", {})
                if "ini_options" in table:
                    return base, path, dict(table["ini_options"])
                continue
            parser = configparser.ConfigParser(interpolation=None)
            parser.read(path, encoding="utf-8")
            if parser.has_section(section) or name == "pytest.ini":
                return base, path, dict(parser[section]) if parser.has_section(section) else {}
    return None, None, {}


def _claims_tree(root: str, paths: Sequence[str]) -> list[Path]:
    """The claims folders premises may live in: ``<root>/claims`` and any ``claims`` folder above a path."""
    tree = [Path(root) / "claims"]
    for raw in paths:
        tree += [parent for parent in Path(raw).resolve().parents if parent.name == "claims"]
    return sorted({folder.resolve() for folder in tree if folder.is_dir()})


def _project_probes_hint(root: str, paths: Sequence[str]) -> str | None:
    """A hint when ``root`` holds no project probes: the usual cause of "unknown probe" outside the project root."""
    from claimcheck import project_config

    folder = Path(root).resolve()
    try:
        configured = project_config.probe_sources(folder) is not None or ini_probe_sources(root) is not None
    except (ClaimcheckError, UsageError):
        configured = True  # a malformed setting has its own error
    if configured or (folder / "probes").is_dir():
        return None
    inside = all(Path(raw).resolve().is_relative_to(folder) for raw in paths)
    if inside and any((folder / name).is_file() for name in ("pyproject.toml", "pytest.ini")):
        return None  # a project root that uses only installed probes: the probe name itself is wrong
    folders = {folder for raw in paths for folder in (Path(raw).resolve(), *Path(raw).resolve().parents)}
    projects = sorted(folder.parent for folder in folders if folder.name == "claims" and (
        (folder.parent / "probes").is_dir() or (folder.parent / "pyproject.toml").is_file()))
    where = f"; the claims look like they belong to {projects[0]}: pass --root {projects[0]}" if projects else \
        ": run from the project root or pass --root PROJECT"
    return f"hint: {folder} has no probes/ folder and no [tool.claimcheck] probes{where}"


def _alias_problems(root: str) -> list[str]:
    """The project's model alias table, checked like the claims (``file:line: field: problem``)."""
    from claimcheck.models import aliases

    try:
        aliases.read_aliases(root)
    except ClaimcheckError as error:
        return [str(error)]
    return []


def _unknown_model(root: str) -> Callable[[str], str | None]:
    """``name -> None`` when the model registry, the project's aliases, a path or a Hugging Face id could name it."""
    from claimcheck.models import aliases, local, registered_models
    from claimcheck.suggest import did_you_mean

    known = registered_models()
    try:
        named = aliases.read_aliases(root)
    except ClaimcheckError:
        named = {}  # a malformed alias table has its own error

    def unknown(name: str) -> str | None:
        if name in known or name in named or any(k.endswith(":") and name.startswith(k) for k in known):
            return None
        if name.startswith((".", "/", "~")) or local.looks_like_hf_id(name):
            return None
        return did_you_mean(name, sorted(known) + sorted(named))

    return unknown


def _every_problem(errors: list[str], paths: Sequence[str], args: argparse.Namespace) -> list[str]:
    """The loader's problems with those of :mod:`claimcheck.claims.checks`, each once, in file and line order."""
    import re

    from claimcheck.claims import checks

    probes = None
    if not args.no_probes:
        from claimcheck.probing.registry import registered_probes

        probes = registered_probes()
    found = list(dict.fromkeys([*errors, *checks.validate_problems(paths, _unknown_model(args.root), probes)]))

    def where(line: str) -> tuple[str, int]:
        match = re.match(r"(.*?):(\d+):", line)
        return (match.group(1), int(match.group(2))) if match else (line, 0)

    return sorted(found, key=where)


def cmd_validate(args: argparse.Namespace) -> int:
    paths = args.paths or ["claims"]
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        return _fail(f"validate: no such file or folder: {', '.join(missing)}")
    files = list(_loader().iter_claim_files(paths))
    if not files:
        given = ", ".join(paths)
        return _fail(f"validate: nothing to validate: no claim files (.yaml, .yml) in {given}")
    for path in paths:
        if Path(path).is_file() and not any(file == Path(path) for file in files):
            print(f"validate: skipped {path}: not a claim file (.yaml, .yml)", file=sys.stderr)
    if not args.no_probes:
        ini = ini_probe_sources(args.root)  # as the plugin: the ini option first, then [tool.claimcheck] probes
        if ini is None:
            _load_probes(args.root)
        else:
            _load_probes(*ini)
    errors, drafts = _loader().validate_paths(paths, probes=not args.no_probes, tree=_claims_tree(args.root, paths))
    errors = _every_problem(errors, paths, args)
    errors += _alias_problems(args.root)
    for error in errors:
        print(error)
    for draft in drafts:
        print(f"{draft.path}:{draft.line}: draft `{draft.id}` is not run until completed: missing "
              f"{', '.join(draft.missing)}")
    if errors:
        hint = _project_probes_hint(args.root, paths) if any("unknown probe" in e for e in errors) else None
        if hint:
            print(hint, file=sys.stderr)
        print(f"{len(errors)} problem(s) in {len(files)} file(s)", file=sys.stderr)
        return FAILED
    print(f"{len(files)} claim file(s) valid" + (f", {len(drafts)} draft(s)" if drafts else ""))
    return OK
