"""Cross-process lock that keeps timing claims alone on the machine.

Timing items take the lock exclusively; every other item takes it shared. So
under ``pytest -n N`` an exclusive item waits until running items finish and
nothing starts beside it. ``fcntl.flock`` locks are released by the kernel when
a process dies, so a killed worker can never leave the suite deadlocked.

``flock`` serves a waiting exclusive request only when no shared holder is left, so processes
that take the lock shared one call after another (the warm-up processes of
:mod:`claimcheck.warm_start`, or several workers) could keep a timing item waiting while
any of them had work. A second lock, the gate, puts a waiting exclusive holder first: a shared
holder passes the gate on its way in, an exclusive one holds the gate while it waits, so no new
shared holder enters once a timing item is waiting.
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
    gate = os.open(path.with_name(path.name + ".gate"), os.O_RDWR | os.O_CREAT, 0o644)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        exclusive = mode == "exclusive"
        fcntl.flock(gate, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        os.close(gate)
