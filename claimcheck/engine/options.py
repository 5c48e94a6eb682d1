"""The run's command-line options, checked once before anything runs.

A value no claim could use (an alpha of 0.7, a negative budget scale, a store path that is a
folder) would otherwise surface as an ``error`` verdict on every item, or as a traceback at
the end of the run. Each bad value is one line naming the option, what it got and what it
takes, raised as a pytest usage error (exit 4).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dataclasses import dataclass

from claimcheck.engine.progress import ProgressSink, ignore_progress

if TYPE_CHECKING:  # pragma: no cover
    from claimcheck.engine.result import ItemResult

#: The largest alpha a decision may use: the claim schema's bound (``check.alpha`` in (0, 0.5)).
MAX_ALPHA = 0.5


class OptionError(ValueError):
    """One bad command-line value; ``str()`` is the line shown to the user."""


def _finite(name: str, value: Any) -> float:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise OptionError(f"{name} {value!r}: expected a finite number")
    return float(value)


def _open_unit(name: str, value: Any) -> None:
    """An error rate: strictly between 0 and the schema's 0.5 (a level above it decides nothing)."""
    if value is None:
        return
    number = _finite(name, value)
    if not 0.0 < number < MAX_ALPHA:
        raise OptionError(f"{name} {value:g}: expected an error rate in (0, {MAX_ALPHA:g}), as a claim's check.alpha")


def _positive(name: str, value: Any, *, zero: bool = False) -> None:
    number = _finite(name, value)
    if number < 0 or (number == 0 and not zero):
        wanted = "a number >= 0" if zero else "a number > 0"
        raise OptionError(f"{name} {value:g}: expected {wanted}")


def _file_path(name: str, value: Any) -> None:
    """A file to write: not an existing folder, and its folder (if it exists) not a file."""
    if not value:
        return
    path = Path(str(value))
    if path.is_dir():
        raise OptionError(f"{name} {path}: is a folder; name a file (e.g. {path / 'claimcheck.sqlite'})")
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise OptionError(f"{name} {path}: {parent} is a file, not a folder")


def _folder_path(name: str, value: Any) -> None:
    """A folder to write into: not an existing file, nor below one."""
    if not value:
        return
    path = Path(str(value))
    blocking = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise OptionError(f"{name} {path}: {blocking} is a file, not a folder")


#: option -> its check; every value pytest parsed is looked at once.
CHECKS: dict[str, Callable[[str, Any], None]] = {
    "--claims-alpha": _open_unit,
    "--claims-family-alpha": _open_unit,
    "--claims-budget-scale": _positive,
    "--claims-cv-bound": _positive,
    "--claims-progress": lambda name, value: _positive(name, value, zero=True),
    "--claims-warm-start": lambda name, value: None if value is None else _positive(name, value, zero=True),
    "--claims-store": _file_path,
    "--claims-reports": _folder_path,
}


def option_problems(getoption: Callable[[str], Any]) -> list[str]:
    """Every bad option value, one line each (``claimcheck: --claims-alpha 0.7: ...``)."""
    problems = []
    for name, check in CHECKS.items():
        try:
            check(name, getoption(name))
        except OptionError as error:
            problems.append(f"claimcheck: {error}")
    return problems


@dataclass(frozen=True)
class RunOptions:
    """Run-wide settings that come from the command line, as each item reads them.

    Kept in this light module (no statistics, no MLX) so that configuring pytest stays cheap.
    """

    alpha: float | None = None  # overrides each claim's alpha when set
    seed: int = 0
    budget_scale: float = 1.0
    fresh: bool | float = False  # a timestamp: cached results stored before it are ignored
    cache_dir: str | None = None
    cv_bound: float = 0.10
    progress: ProgressSink = ignore_progress  # each item's looks, for the terminal
    # an item stuck in native code past its hard limit: stores its `error` result and returns the line to
    # print before the process ends (see claimcheck.engine.hang_watch)
    on_hang: Callable[[ItemResult], str] | None = None
