"""How far a long batched stage has got: ``k/n`` units done and a rough estimate of the time left.

A fork map of 441 branches runs for many minutes inside one probe call; a line that only says
"441 branches" for 18 minutes cannot be told from a hang. :class:`Countdown` turns "one more
unit finished" into a throttled progress message such as
``bisector trace: 212/441 branches, ~3 min left``. The clock is injected, so the messages are
tested without waiting.
"""

from __future__ import annotations

import time
from typing import Callable

Progress = Callable[[str], None]


def time_left(seconds: float) -> str:
    """``~40 s``, ``~3 min``, ``~1.5 h``: a rough duration, rounded to what a log reader needs."""
    if seconds < 90:
        return f"~{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"~{round(seconds / 60)} min"
    return f"~{seconds / 3600:.1f} h"


class Countdown:
    """Report ``done/total`` units of one stage and the time left at the rate so far.

    The estimate is the elapsed time per finished unit times the units left. Batched generation
    admits the longest requests first and finishes short ones in bursts, so it is rough ("~");
    it says that the stage moves and about how long it has to go.

    Args:
        label: the stage, e.g. ``"bisector trace"``.
        unit: what is counted, plural, e.g. ``"branches"``.
        total: how many units the stage has.
        progress: where messages go (the probe's progress note).
        every: the least seconds between two messages (the last unit always reports).
        clock: seconds, monotonic; injected by tests.
    """

    def __init__(self, label: str, unit: str, total: int, progress: Progress, *, every: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.unit, self.total = label, unit, int(total)
        self._progress, self._every, self._clock = progress, float(every), clock
        self.started = clock()
        self.done = 0
        self._last: float | None = None

    def start(self) -> None:
        """Say the stage began (``0/n``) and restart its clock."""
        self.started = self._clock()
        self._last = self.started
        self._progress(f"{self.label}: 0/{self.total} {self.unit}")

    def message(self, now: float) -> str:
        """The line for the current state at time ``now``."""
        text = f"{self.label}: {self.done}/{self.total} {self.unit}"
        if 0 < self.done < self.total:
            left = (now - self.started) / self.done * (self.total - self.done)
            text += f", {time_left(left)} left"
        elif self.done >= self.total:
            text += f", done in {max(0.0, now - self.started):.0f} s"
        return text

    def advance_to(self, done: int) -> None:
        """``done`` units have finished in all; report when ``every`` seconds passed or all are done."""
        self.done = min(int(done), self.total)
        now = self._clock()
        if self.done >= self.total or self._last is None or now - self._last >= self._every:
            self._last = now
            self._progress(self.message(now))
