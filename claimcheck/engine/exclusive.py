"""Cross-process lock that keeps timing claims alone on the machine.

Timing items take the lock exclusively; every other item takes it shared. So
under ``pytest -n N`` an exclusive item waits until running items finish and
nothing starts beside it. ``fcntl.flock`` locks are released by the kernel when
a process dies, so a killed worker can never leave the suite deadlocked.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: items run unlocked
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def hold(path: Path, *, mode: str | None) -> Iterator[None]:
    """Hold ``path`` in ``mode`` ("exclusive" or "shared"; None: no lock) for the block."""
    if fcntl is None or mode is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if mode == "exclusive" else fcntl.LOCK_SH)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
