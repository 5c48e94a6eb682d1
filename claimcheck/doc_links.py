"""Where a doc the tool points to lives: ``docs/NAME`` in a checkout, ``claimcheck/docs/NAME`` in an installed wheel.

A message that says "see docs/statistics.md" is useless to someone who installed the package: the
wheel ships the Markdown docs as the package ``claimcheck.docs``, and :func:`doc_path` gives the
file that exists here, so every link the tool prints resolves.
"""

from __future__ import annotations

from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent / "docs"
_INSTALLED = Path(__file__).resolve().parent / "docs"


def doc_path(name: str) -> Path:
    """The file of doc ``name`` (``statistics.md``): the checkout's, else the installed package's."""
    for folder in (_CHECKOUT, _INSTALLED):
        candidate = folder / name
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"doc {name} is neither in {_CHECKOUT} nor in {_INSTALLED}")


def doc_link(name: str) -> str:
    """``docs/NAME`` as a path that exists on this machine (for messages and ``--help``)."""
    try:
        return str(doc_path(name))
    except FileNotFoundError:
        return f"docs/{name}"
