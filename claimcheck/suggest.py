"""The "did you mean" hint every unknown-name message carries, worded one way everywhere."""

from __future__ import annotations

import difflib
from typing import Iterable


def closest(name: object, known: Iterable[str]) -> str | None:
    """The known name most like ``name``, or None when none is close enough to suggest."""
    found = difflib.get_close_matches(str(name), list(known), n=1)
    return found[0] if found else None


def did_you_mean(name: object, known: Iterable[str]) -> str:
    """`` (did you mean `x`?)`` for the closest known name, or an empty string."""
    match = closest(name, known)
    return f" (did you mean `{match}`?)" if match is not None else ""
