"""How many threads the BLAS may use: chosen once per process from the cores that are free at start.

On a machine shared with other work, a BLAS that runs a thread per core collapses: its threads
wait for each other at every small GEMM while the other work holds a core, so a SmolLM2 batch-64
decode step took 1,251 ms with 2 OpenBLAS threads beside other work, against 502 ms with one
thread and 334-390 ms with two on a quiet machine. The ``auto`` policy counts the cores this
process may run on (:func:`os.sched_getaffinity`) and subtracts the ones already busy: the larger
of the busy share ``/proc/stat`` shows over a quarter second (the 1-minute load average where it
cannot be read) and the threads runnable right now (``/proc/loadavg``, read a few times, median,
this process excluded). A half-busy core counts as busy, because one thread too few
costs about 1.4x on a quiet machine while one too many costs 2.5x beside a busy loop. Under
``pytest -n N`` (``$PYTEST_XDIST_WORKER_COUNT``) each worker takes its share of the cores, at least
one: two workers that each measured the other idle at start would otherwise run four threads on
two cores (a batch-64 step took 4.2 s once with 2 threads beside two busy loops, 0.4-0.7 s with 1).

``$CLAIMCHECK_BLAS_THREADS`` overrides it: a positive number fixes the count, ``auto`` is the
default, ``library`` leaves the library's own choice. Thread variables the environment already
sets (``OPENBLAS_NUM_THREADS`` ...) win over ``auto`` too. The policy and the count go into the
machine fingerprint, so results measured under different policies can be told apart.
"""

from __future__ import annotations

import ctypes
import math
import os
import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable

THREADS_ENV = "CLAIMCHECK_BLAS_THREADS"
#: the variables BLAS libraries and OpenMP read for their thread count when they load
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
_SETTERS = ("openblas_set_num_threads", "MKL_Set_Num_Threads", "bli_thread_set_num_threads")
_BUSY_SLACK = 0.25  # busy >= n - 0.25 counts as n busy cores (the cheaper mistake is one thread too few)


@dataclass(frozen=True)
class ThreadChoice:
    """The thread count chosen for the BLAS and why.

    Attributes:
        policy: ``"auto"``, ``"fixed"`` (``$CLAIMCHECK_BLAS_THREADS=N``), ``"environment"`` (a
            thread variable was already set) or ``"library"`` (left to the library).
        threads: the count chosen, or ``None`` under ``"library"``.
        cores: cores this process may run on.
        busy: cores judged busy with other work at the choice (``auto`` only).
        workers: pytest-xdist workers sharing the cores (1 outside ``pytest -n``).
    """

    policy: str
    threads: int | None
    cores: int
    busy: float = 0.0
    workers: int = 1

    def describe(self) -> str:
        if self.policy == "auto":
            shared = f", shared by {self.workers} pytest workers" if self.workers > 1 else ""
            return f"auto: {self.threads} of {self.cores} cores ({self.busy:.1f} busy at start{shared})"
        if self.threads is None:
            return f"{self.policy}: the library's own count"
        return f"{self.policy}: {self.threads} of {self.cores} cores"


def cores_available() -> int:
    """Cores this process may run on (its affinity mask; all cores where that cannot be read)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def runnable_others(read: Callable[[], str] | None = None, *, reads: int = 5, pause: float = 0.02) -> float:
    """Threads runnable right now besides this one: the median over ``reads`` reads of ``/proc/loadavg``."""

    def from_proc() -> str:
        with open("/proc/loadavg", encoding="ascii") as handle:
            return handle.read()

    reader = read or from_proc
    counts = []
    for index in range(reads):
        try:
            running = int(reader().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return 0.0
        counts.append(max(0, running - 1))  # the reading thread itself is running
        if index < reads - 1 and pause > 0:
            time.sleep(pause)
    return float(statistics.median(counts))


def _cpu_times(read: Callable[[], str], cpus: set[int] | None) -> tuple[int, int]:
    """(total, idle) jiffies over the ``cpuN`` lines of ``/proc/stat`` for ``cpus`` (all when None)."""
    total = idle = 0
    for line in read().splitlines():
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu" or (cpus is not None and int(name[3:]) not in cpus):
            continue
        values = [int(v) for v in fields[:8]]  # guest time is already counted in user time
        total += sum(values)
        idle += values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    return total, idle


def busy_measured(read: Callable[[], str] | None = None, *, window: float = 0.25,
                  sleep: Callable[[], None] | None = None) -> float | None:
    """Cores kept busy by other work over the last ``window`` seconds, from ``/proc/stat`` (None where unreadable).

    This process sleeps through the window, so what was busy was the rest of the machine. Unlike the
    1-minute load average it has no memory: a run that ended a few seconds ago does not count.
    """

    def from_proc() -> str:
        with open("/proc/stat", encoding="ascii") as handle:
            return handle.read()

    reader = read or from_proc
    try:
        cpus: set[int] | None = set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = None
    try:
        total_before, idle_before = _cpu_times(reader, cpus)
        (sleep or (lambda: time.sleep(window)))()
        total_after, idle_after = _cpu_times(reader, cpus)
    except (OSError, ValueError, IndexError):
        return None
    elapsed = total_after - total_before
    if elapsed <= 0:
        return None
    share_busy = 1.0 - (idle_after - idle_before) / elapsed
    return max(0.0, share_busy) * (len(cpus) if cpus else cores_available())


def busy_cores(measured: Callable[[], float | None] | None = None, runnable: Callable[[], float] | None = None,
               load: Callable[[], tuple[float, float, float]] | None = None) -> float:
    """Cores other work keeps busy: the larger of what ``/proc/stat`` shows over a quarter second and the threads runnable now.

    Where ``/proc/stat`` cannot be read (macOS), the 1-minute load average stands in for the
    measured share. The load average is not read where the measurement exists: it still counts,
    for about a minute, work that has just ended (a run started right after another chose one
    BLAS thread of two on a quiet machine, 22% slower).
    """
    share = (measured or busy_measured)()
    if share is None:
        try:
            share = float((load or os.getloadavg)()[0])
        except (AttributeError, OSError):
            share = 0.0
    return max(float(share), (runnable or runnable_others)())


def auto_threads(cores: int, busy: float, workers: int = 1) -> int:
    """Threads for ``cores`` of which ``busy`` are taken, shared by ``workers`` processes: at least one."""
    taken = math.floor(busy + _BUSY_SLACK)
    return max(1, min(cores // max(1, workers), cores - taken))


def xdist_workers(environ: Mapping[str, str]) -> int:
    """How many pytest-xdist workers share this machine (1 outside ``pytest -n``, or when unreadable)."""
    value = environ.get("PYTEST_XDIST_WORKER_COUNT", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else 1


def choose_threads(environ: dict[str, str] | None = None, *, cores: int | None = None,
                   busy: Callable[[], float] | None = None) -> ThreadChoice:
    """The thread policy of this process, from ``$CLAIMCHECK_BLAS_THREADS`` and the load at start."""
    env = os.environ if environ is None else environ
    cores = cores_available() if cores is None else cores
    requested = env.get(THREADS_ENV, "auto").strip().lower() or "auto"
    if requested == "library":
        return ThreadChoice("library", None, cores)
    if requested != "auto":
        try:
            count = int(requested)
        except ValueError:
            raise ValueError(f"${THREADS_ENV} must be a positive number, `auto` or `library`; got {requested!r}") from None
        if count < 1:
            raise ValueError(f"${THREADS_ENV} must be a positive number, `auto` or `library`; got {requested!r}")
        return ThreadChoice("fixed", count, cores)
    for name in THREAD_VARIABLES:
        value = env.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return ThreadChoice("environment", int(value), cores)
    taken = (busy or busy_cores)()
    workers = xdist_workers(env)
    return ThreadChoice("auto", auto_threads(cores, taken, workers), cores, round(taken, 2), workers)


def export(choice: ThreadChoice, environ: dict[str, str] | None = None) -> None:
    """Set the thread variables for libraries not loaded yet (those the environment set are kept)."""
    env = os.environ if environ is None else environ
    if choice.threads is None:
        return
    for name in THREAD_VARIABLES:
        env.setdefault(name, str(choice.threads))


def apply_to_library(library: str, threads: int | None) -> bool:
    """Set a loaded BLAS's thread count through its own call; True when the library has one."""
    if not library or threads is None or library == "Accelerate":
        return False
    try:
        handle = ctypes.CDLL(library)
    except OSError:
        return False
    for name in _SETTERS:
        setter = getattr(handle, name, None)
        if setter is not None:
            setter.argtypes = [ctypes.c_int]
            setter(int(threads))
            return True
    return False


def apply_to_numpy(threads: int | None) -> bool:
    """Limit numpy's own BLAS too, through threadpoolctl where it is installed; True when applied."""
    if threads is None:
        return False
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-not-found]  # optional
    except ImportError:
        return False
    threadpool_limits(limits=int(threads), user_api="blas")
    return True
