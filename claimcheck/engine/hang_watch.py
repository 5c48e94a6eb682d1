"""The last backstop for an item stuck in native code, which the SIGALRM hard limit cannot interrupt.

Python runs a signal handler only between bytecodes, so a probe blocked inside a C call that
retries on ``EINTR`` (or a numeric routine that never returns) outlives the item's hard limit.
Nothing in the process can take such a call back; what can be bounded is the run. Two
watchers are armed while an item runs, both a grace period past its hard limit:

* a Python thread, which runs when the stuck call released the GIL (ctypes calls, I/O, most
  blocking C): it hands the item's ``error`` result to ``on_hang`` (the plugin stores it and
  marks the run incomplete), prints one line and ends the process with :data:`EXIT_HUNG`;
* faulthandler's C thread, which runs even when the call holds the GIL: it writes every
  thread's stack to a file under the system's temporary folder and ends the process (exit 1).
  The stored run is then ``running`` with a dead writer, which every reader takes as incomplete.

Running each item in a killable child process would bound it without ending the run, but
would also move every timing measurement, model cache and MLX stream into another process;
a probe that calls code which may hang can do that itself (see the probe contract).
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

#: The exit status of a run ended by a native hang: pytest's "interrupted".
EXIT_HUNG = 2

#: Seconds past the hard limit before the watchers act (the SIGALRM limit gets the first chance).
GRACE_S = 5.0

# faulthandler has one timer per process: arming it per item replaces (and cancelling it ends) a
# timer pytest's own ``faulthandler_timeout`` set.


def _end_process(line: str) -> None:
    stream = sys.__stderr__ or sys.stderr
    try:
        stream.write("\n" + line + "\n")  # after a progress line, on a line of its own
        stream.flush()
    finally:
        os._exit(EXIT_HUNG)


def stacks_file() -> Path:
    """Where faulthandler writes the stacks of a process it ends."""
    return Path(tempfile.gettempdir()) / f"claimcheck-hang-{os.getpid()}.txt"


@contextlib.contextmanager
def watch(limit_s: float, on_hang: Callable[[], str]) -> Iterator[None]:
    """Arm both watchers for ``limit_s + GRACE_S`` seconds while the body runs.

    Args:
        limit_s: the item's hard limit (0 or less: no watch).
        on_hang: called from the watcher thread when the item is stuck; records what it can and
            returns the one line to print before the process ends.
    """
    if limit_s <= 0:
        yield
        return
    after = limit_s + GRACE_S
    finished = threading.Event()

    def expire() -> None:
        if finished.is_set():
            return
        try:
            line = on_hang()
        except BaseException as error:  # noqa: BLE001 - the process ends either way; say why in one line
            line = f"claimcheck: an item hung in native code and could not be recorded ({type(error).__name__}: {error})"
        if not finished.is_set():
            _end_process(line)

    timer = threading.Timer(after, expire)
    timer.daemon = True
    stacks = None
    if threading.current_thread() is threading.main_thread():
        stacks = open(stacks_file(), "w")  # noqa: SIM115 - faulthandler keeps the descriptor until cancelled
        stacks.write(f"claimcheck: an item did not return within {after:g} s (hard limit + {GRACE_S:g} s) and held "
                     "the interpreter; the process was ended. Stacks:\n")
        stacks.flush()
        faulthandler.dump_traceback_later(after + GRACE_S, exit=True, file=stacks)
    timer.start()
    try:
        yield
    finally:
        finished.set()
        timer.cancel()
        if stacks is not None:
            faulthandler.cancel_dump_traceback_later()
            stacks.close()
            Path(stacks.name).unlink(missing_ok=True)
