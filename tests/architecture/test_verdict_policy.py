"""A verdict's meaning is decided in one table: no surface spells a verdict name.

The verdict enum names the verdicts; :mod:`claimcheck.outcome.policy` says what each means. Modules
that show findings (the pytest face, JUnit, reports, the docs gate, the CI workflow helpers) read a
finding's treatment and never branch on a verdict themselves, and no module copies a verdict's
name as a bare string.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "claimcheck"
NAMES = frozenset({"holds", "refuted", "inconclusive", "stale", "inconsistent", "not-applicable"})
#: Modules that render findings: they may carry a verdict as data, never branch on a named one.
SURFACES = ("plugin.py", "pytest_plugin", "suite.py", "junit.py", "report/canvas.py", "report/corrections.py",
            "report/html.py", "report/index.py", "report/forest.py", "report/html_claims.py",
            "report/html_history.py", "report/cascade.py", "report/compare.py", "docs_gate", "gate",
            "workflow")


#: The enum itself, and the one table that gives each verdict its words and consequences.
OWNERS = ("verdict.py", "outcome/policy.py")


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).as_posix() not in OWNERS)


def _record_keys(tree: ast.AST) -> set[int]:
    """Strings used as a record's field name (``row["holds"]``, ``row.get("holds")``): data, not a verdict."""
    keys: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            keys.add(id(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
            keys.add(id(node.args[0]))
    return keys


def _is_surface(path: Path) -> bool:
    relative = path.relative_to(PACKAGE).as_posix()
    return any(relative == s or relative.startswith(s.rstrip("/") + "/") for s in SURFACES)


def test_no_module_copies_a_verdict_name_as_a_string() -> None:
    found = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        keys = _record_keys(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES \
                    and id(node) not in keys:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}")
    assert found == [], "spell verdicts through claimcheck.verdict.Verdict:\n" + "\n".join(found)


def test_surfaces_never_branch_on_a_named_verdict() -> None:
    found = []
    for path in filter(_is_surface, _modules()):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Verdict":
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: Verdict.{node.attr}")
    assert found == [], "ask the verdict policy (claimcheck.outcome.policy) instead:\n" + "\n".join(found)
