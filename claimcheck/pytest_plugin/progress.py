"""Shows running items' progress in pytest's output, in one process and under xdist.

In one process the runner's updates go straight to a :class:`ProgressBoard`; under xdist each worker
writes them to a :class:`ProgressChannel` folder that the controller polls. A daemon thread ticks
the board, so a long look still prints a line every interval. Lines go to a duplicate of the
terminal's file descriptor taken before any test runs: while an item runs, pytest captures the
process's own stdout and stderr.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from claimcheck.engine.progress import Progress, ProgressBoard, ProgressChannel, ProgressSink, ignore_progress

CHANNEL = "claimcheck_progress_channel"
POLL_SECONDS = 0.5


class ProgressReporter:
    """The progress plugin object: owns the board, the channel and the ticking thread."""

    def __init__(self, config: pytest.Config, interval: float) -> None:
        self.config = config
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._fd: int | None = None
        self._column_after_last_line = -1
        self._owned_channel: Path | None = None
        self.channel: ProgressChannel | None = None
        self.board: ProgressBoard | None = None
        workerinput = getattr(config, "workerinput", None)
        if interval <= 0:
            self.sink: ProgressSink = ignore_progress
        elif workerinput is not None:
            folder = workerinput.get(CHANNEL)
            self.sink = ProgressChannel(Path(folder)).writer(str(workerinput.get("workerid", "gw"))) if folder else ignore_progress
        else:
            self._fd = os.dup(sys.__stdout__.fileno()) if sys.__stdout__ is not None else None
            tty = self._fd is not None and os.isatty(self._fd)
            self.board = ProgressBoard(self._write, interval=interval, tty=tty)
            self.sink = self._local

    def _write(self, text: str) -> None:
        if self._fd is None:
            return
        column = self._terminal_column()
        if not text.startswith("\r") and column and column != self._column_after_last_line:
            text = "\n" + text  # pytest's own line (a file name, dots) is still open
        self._column_after_last_line = column
        try:
            os.write(self._fd, text.encode("utf-8", "replace"))
        except OSError:
            pass

    def _terminal_column(self) -> int:
        """Where pytest's terminal writer believes its line ends (0: at a line start).

        Our lines bypass that writer, so a column unchanged since our last line means nothing of
        pytest's was written in between and no extra line break is needed.
        """
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        writer = getattr(reporter, "_tw", None)
        return int(getattr(writer, "width_of_current_line", 0) or 0)

    def _local(self, progress: Progress | None) -> None:
        assert self.board is not None
        self.board.update("", progress, time.time())

    def start(self) -> None:
        """Start ticking (controller or single process only)."""
        if self.board is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="claimcheck-progress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        assert self.board is not None
        while not self._stop.wait(POLL_SECONDS):
            now = time.time()
            if self.channel is not None:
                self.channel.poll_into(self.board, now)
            self.board.tick(now)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: create the channel folder on the first worker and tell every worker where it is."""
        if self.board is None:
            return
        if self.channel is None:
            self._owned_channel = Path(tempfile.mkdtemp(prefix="claimcheck-progress-"))
            self.channel = ProgressChannel(self._owned_channel)
        node.workerinput[CHANNEL] = str(self.channel.folder)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.start()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._owned_channel is not None:
            shutil.rmtree(self._owned_channel, ignore_errors=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def install(config: pytest.Config, interval: float) -> ProgressSink:
    """Register the progress plugin for this run and return the sink the runner reports to."""
    reporter = ProgressReporter(config, interval)
    config.pluginmanager.register(reporter, "claimcheck-progress")
    return reporter.sink
