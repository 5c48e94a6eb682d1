"""What each probe parameter means, read from the ``Args:`` section of the probe function's docstring.

A claim author sees a parameter's meaning next to its type and default (``claimcheck probes NAME``,
``docs/probes.md``) without opening the probe's source. ``a, b: text`` documents both names; a
line indented deeper than its name continues the text.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params):\s*$")
_ENTRY = re.compile(r"^(?P<names>[A-Za-z_][\w]*(?:\s*,\s*[A-Za-z_][\w]*)*)\s*(?:\([^)]*\))?:\s*(?P<text>.*)$")
_OTHER = re.compile(r"^[A-Z][A-Za-z ]*:\s*$")


def param_meanings(function: Any) -> dict[str, str]:
    """``param name -> one-paragraph meaning`` from the docstring's ``Args:`` section (empty when it has none)."""
    doc = inspect.getdoc(function) or ""
    meanings: dict[str, str] = {}
    inside, indent, current = False, None, []  # type: ignore[var-annotated]
    names: list[str] = []

    def flush() -> None:
        for name in names:
            meanings[name] = " ".join(" ".join(current).split())

    for line in doc.splitlines():
        if _SECTION.match(line.strip()) and not line.startswith(" "):
            inside = True
            continue
        if not inside:
            continue
        if not line.strip():
            continue
        if not line.startswith(" ") and _OTHER.match(line.strip()):
            break
        depth = len(line) - len(line.lstrip())
        entry = _ENTRY.match(line.strip())
        if entry and (indent is None or depth <= indent):
            flush()
            indent = depth
            names = [n.strip() for n in entry.group("names").split(",")]
            current = [entry.group("text")]
        elif names:
            current.append(line.strip())
    flush()
    return meanings
