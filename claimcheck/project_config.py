"""The project's own settings: the ``[tool.claimcheck]`` table of ``<rootdir>/pyproject.toml``.

A repository that adopts claimcheck configures it where it configures its other tools, so that
``pytest claims/`` and ``claimcheck validate`` read the same settings. Each setting has a typed
accessor here; a malformed value is one :class:`ProjectConfigError` line naming the file and key.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from claimcheck.errors import ClaimcheckError

PYPROJECT = "pyproject.toml"
TABLE = "tool.claimcheck"


class ProjectConfigError(ClaimcheckError):
    """``[tool.claimcheck]`` cannot be read or holds a value of the wrong type."""


def pyproject_path(rootdir: str | Path) -> Path:
    """Where the project's settings live: ``<rootdir>/pyproject.toml``."""
    return Path(rootdir) / PYPROJECT


def read_tool_table(rootdir: str | Path) -> Mapping[str, Any]:
    """The ``[tool.claimcheck]`` table, empty when there is no pyproject.toml or no such table.

    Raises:
        ProjectConfigError: the file is not valid TOML, or ``tool.claimcheck`` is not a table.
    """
    path = pyproject_path(rootdir)
    if not path.is_file():
        return {}
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ProjectConfigError(f"{path}: not valid TOML: {error}") from None
    table = document.get("tool", {}).get("claimcheck", {})
    if not isinstance(table, dict):
        raise ProjectConfigError(f"{path}: [{TABLE}] must be a table")
    return table


def probe_sources(rootdir: str | Path) -> tuple[str, ...] | None:
    """``[tool.claimcheck] probes``: the probe modules and paths the project names, or None if unset.

    Each entry is a dotted module name (``mypackage.probes``) or a path relative to ``rootdir``
    (a folder of probe files, or one ``.py`` file).

    Raises:
        ProjectConfigError: ``probes`` is not a list of non-empty strings.
    """
    table = read_tool_table(rootdir)
    if "probes" not in table:
        return None
    value = table["probes"]
    if not isinstance(value, list) or not all(isinstance(entry, str) and entry.strip() for entry in value):
        raise ProjectConfigError(f"{pyproject_path(rootdir)}: [{TABLE}] probes must be a list of module names "
                                 f"or paths, got {value!r}")
    return tuple(entry.strip() for entry in value)
