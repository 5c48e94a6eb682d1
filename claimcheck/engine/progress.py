"""Progress of a running claim item: which look, how many samples, how long so far.

A sequential item can run for minutes without pytest printing anything, which looks like a hang in a
CI log. The runner reports a :class:`Progress` at every look (and the probe may add a note); a sink
shows it. This module holds the value type and the pieces that need no pytest: the terminal board
that decides when to print, and the file channel that carries progress from xdist workers to the
controller (workers' output never reaches the terminal).
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

#: A progress sink: a new state for the running item, or ``None`` once it has finished.
ProgressSink = Callable[["Progress | None"], None]


def ignore_progress(progress: Progress | None) -> None:
    """The sink used when nobody watches (library use, tests)."""


@dataclass(frozen=True)
class Progress:
    """Where one item's sequential run stands.

    Attributes:
        item_id: the claim item.
        look: 1-based index of the look being drawn.
        looks: the plan's number of looks.
        samples: samples (or rounds) measured so far.
        started: when the item started (epoch seconds), so elapsed time stays live between updates.
        note: the probe's own latest message, if any.
    """

    item_id: str
    look: int
    looks: int
    samples: int
    started: float
    note: str = ""

    def line(self, now: float) -> str:
        """One line for a log: ``item: look 2/3, 19 samples, 41 s — note``."""
        text = f"{self.item_id}: look {self.look}/{self.looks}, {self.samples} samples, {max(0.0, now - self.started):.0f} s"
        return f"{text} — {self.note}" if self.note else text

    def to_json(self) -> str:
        return json.dumps({"item_id": self.item_id, "look": self.look, "looks": self.looks,
                           "samples": self.samples, "started": self.started, "note": self.note})

    @classmethod
    def from_json(cls, text: str) -> Progress:
        data = json.loads(text)
        return cls(item_id=str(data["item_id"]), look=int(data["look"]), looks=int(data["looks"]),
                   samples=int(data["samples"]), started=float(data["started"]), note=str(data.get("note", "")))


class ItemProgress:
    """The runner's handle for one item: turns looks and probe notes into :class:`Progress` updates."""

    def __init__(self, item_id: str, sink: ProgressSink, *, clock: Callable[[], float] = time.time) -> None:
        self._sink = sink
        self._state = Progress(item_id=item_id, look=0, looks=0, samples=0, started=clock())

    def look(self, look: int, looks: int, samples: int) -> None:
        """A look is about to be drawn (``look`` 1-based) with ``samples`` already measured."""
        self._state = replace(self._state, look=look, looks=looks, samples=samples)
        self._sink(self._state)

    def note(self, message: str) -> None:
        """The probe's own message (e.g. which stage of a long trace it is in)."""
        self._state = replace(self._state, note=message.strip().splitlines()[0] if message.strip() else "")
        self._sink(self._state)

    def finish(self) -> None:
        self._sink(None)


class ProgressBoard:
    """Decides what to print, given the latest progress of every source (the process, or each worker).

    In a log (not a TTY) each running source gets a line at least every ``interval`` seconds; on a TTY
    the single status line is redrawn on every update. Time comes in as an argument, so the printing
    rule is tested without waiting.
    """

    def __init__(self, write: Callable[[str], None], *, interval: float = 10.0, tty: bool = False) -> None:
        self._write = write
        self.interval = interval
        self.tty = tty
        self._latest: dict[str, Progress] = {}
        self._printed: dict[str, float] = {}
        self._lock = threading.Lock()

    def update(self, source: str, progress: Progress | None, now: float) -> None:
        """Record a source's new state (``None``: its item finished)."""
        with self._lock:
            if progress is None:
                self._latest.pop(source, None)
                self._printed.pop(source, None)
                if self.tty:
                    self._write("\r\033[K")
                return
            if self._latest.get(source) == progress:
                return
            self._latest[source] = progress
            self._printed.setdefault(source, now)  # the first line comes one interval after the start
            if self.tty:
                self._write("\r\033[K  " + self._label(source, progress, now))

    def tick(self, now: float) -> None:
        """Print every source whose last line is ``interval`` old (logs only)."""
        if self.tty:
            return
        with self._lock:
            for source, progress in sorted(self._latest.items()):
                if now - self._printed.get(source, now) >= self.interval:
                    self._write(self._label(source, progress, now) + "\n")
                    self._printed[source] = now

    def sources(self) -> set[str]:
        with self._lock:
            return set(self._latest)

    @staticmethod
    def _label(source: str, progress: Progress, now: float) -> str:
        prefix = f"[{source}] " if source else ""
        return f"claimcheck progress: {prefix}{progress.line(now)}"


class ProgressChannel:
    """A folder of one small file per xdist worker, holding the worker's latest progress.

    A worker replaces its file atomically on every update and removes it when its item finishes; the
    controller reads the folder. Files rather than xdist's channel: xdist forwards only test reports,
    and those exist only once an item has finished.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def writer(self, worker: str) -> ProgressSink:
        target = self.folder / f"{worker}.json"
        temporary = self.folder / f".{worker}.tmp"

        def write(progress: Progress | None) -> None:
            try:
                if progress is None:
                    target.unlink(missing_ok=True)
                    return
                temporary.write_text(progress.to_json(), encoding="utf-8")
                os.replace(temporary, target)
            except OSError:  # progress is a courtesy: never fail an item over it
                pass

        return write

    def read(self) -> dict[str, Progress]:
        """The latest progress of every worker with a running item."""
        found: dict[str, Progress] = {}
        try:
            paths = sorted(self.folder.glob("*.json"))
        except OSError:
            return found
        for path in paths:
            try:
                found[path.stem] = Progress.from_json(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, KeyError):
                continue  # removed or replaced while reading: the next poll sees it
        return found

    def poll_into(self, board: ProgressBoard, now: float) -> None:
        """Bring the board up to date with the folder."""
        current = self.read()
        for source in board.sources() - set(current):
            board.update(source, None, now)
        for source, progress in current.items():
            board.update(source, progress, now)
