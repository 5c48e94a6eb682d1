"""Which docs the gate reads, and how strictly: ``[tool.claimcheck.docs]`` in ``pyproject.toml``.

Findings docs quote measured figures and must account for every one of them; operational docs
(how CI runs, how a probe works) quote setup constants and timings that no claim checks, so they
are not gated unless listed::

    [tool.claimcheck.docs]
    paths = ["docs/findings", "README.md"]   # what `claimcheck docs` gates when given no path
    strict = ["docs/findings"]               # always gated as with --strict: every figure verified or marked

Without the table the gate reads ``docs`` and holds nothing to full coverage.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from claimcheck.project_config import ProjectConfigError, read_tool_table

DEFAULT_PATHS = ("docs",)


@dataclass(frozen=True)
class DocsConfig:
    """The gated paths and the strict ones (relative to the project root)."""

    paths: tuple[str, ...] = DEFAULT_PATHS
    strict: tuple[str, ...] = ()

    def is_strict(self, doc: Path) -> bool:
        """Whether ``doc`` lies under a strict path: every figure must be verified or marked."""
        resolved = doc.resolve()
        for entry in self.strict:
            root = Path(entry).resolve()
            if resolved == root or root in resolved.parents:
                return True
        return False


def _strings(table: dict[str, object], key: str, where: str) -> tuple[str, ...] | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ProjectConfigError(f"{where}: [tool.claimcheck.docs] {key}: expected a list of paths, got {value!r}")
    return tuple(value)


def read_config(rootdir: str | Path = ".") -> DocsConfig:
    """``[tool.claimcheck.docs]`` of ``rootdir/pyproject.toml``; the defaults without it.

    Raises:
        ProjectConfigError: the table or one of its keys has the wrong type (one line naming the key).
    """
    where = str(Path(rootdir) / "pyproject.toml")
    table = read_tool_table(rootdir).get("docs", {})
    if not isinstance(table, dict):
        raise ProjectConfigError(f"{where}: [tool.claimcheck.docs] must be a table")
    unknown = sorted(set(table) - {"paths", "strict"})
    if unknown:
        raise ProjectConfigError(f"{where}: [tool.claimcheck.docs] {unknown[0]}: unknown key (expected paths, strict)")
    return DocsConfig(_strings(table, "paths", where) or DEFAULT_PATHS, _strings(table, "strict", where) or ())
