"""Measurement protocol shared by every timing probe.

MLX is lazy: an array that is never evaluated is never computed, so a clock
stopped before evaluation measures graph building, not work. Every timed
sample here therefore (1) runs after a warm-up on the exact shapes it times
(MLX's GPU backends compile kernels on first use), (2) evaluates every output
and waits for the device (``mx.eval`` then ``mx.synchronize``) before the clock
stops, and (3) is kept, not summarised. Comparisons interleave their arms in a
recorded ABBA order so that drift (thermal, other load) hits every arm alike.

A bandwidth figure above the read ceiling measured in the same session cannot
be physical; :func:`check_bandwidth` turns it into a :class:`ProbeError`.

The clock and the evaluator are injectable so the protocol is testable without
MLX; MLX and numpy are imported only inside the functions that use them.
"""

from __future__ import annotations

import os
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from claimcheck.errors import ProbeError

Clock = Callable[[], float]
Evaluate = Callable[[Any], None]
Build = Callable[[], Any]

NOT_EVALUATED = "outputs were not evaluated"


def mlx_core() -> Any:
    """``mlx.core``, imported only after CPU matrix products are routed to a fast BLAS.

    The BLAS binding is fixed when ``mlx.core`` is first imported, so every
    probe imports MLX through here.
    """
    if "mlx.core" not in sys.modules:
        from claimcheck.harness.blas import ensure_fast_blas

        ensure_fast_blas()
    import mlx.core as mx

    return mx


def mlx_evaluate(outputs: Any) -> None:
    """Compute every array in ``outputs`` (nested lists/dicts allowed) and wait for the device."""
    mx = mlx_core()
    mx.eval(outputs)
    mx.synchronize()


def gbps(nbytes: float, seconds: float) -> float:
    """Decimal gigabytes per second (1 GB = 1e9 bytes, as bandwidth is quoted)."""
    if seconds <= 0:
        raise ValueError(f"`seconds` must be positive, got {seconds!r}")
    if nbytes < 0:
        raise ValueError(f"`nbytes` must be non-negative, got {nbytes!r}")
    return nbytes / seconds / 1e9


def interleaved_order(arms: Sequence[str], rounds: int) -> list[list[str]]:
    """ABBA order: even rounds run ``arms`` forward, odd rounds backward.

    Over any two consecutive rounds every arm sits at the same mean position,
    so a linear drift adds the same amount to each arm.
    """
    if len(set(arms)) != len(arms):
        raise ValueError(f"arm names must be distinct, got {list(arms)}")
    if rounds < 0:
        raise ValueError(f"`rounds` must be >= 0, got {rounds}")
    forward = list(arms)
    return [forward if r % 2 == 0 else forward[::-1] for r in range(rounds)]


@dataclass
class Interleaved:
    """Samples of several arms measured in one interleaved run.

    Attributes:
        samples: arm -> seconds per round, index ``i`` of every arm is round ``i``
            (so arms can be compared pairwise).
        order: the arms in the order they actually ran, flattened over rounds.
    """

    samples: dict[str, list[float]]
    order: list[str] = field(default_factory=list)

    def paired_differences(self, arm: str, reference: str) -> list[float]:
        """``arm - reference`` per round (the pairs the interleaving made comparable)."""
        return [a - b for a, b in zip(self.samples[arm], self.samples[reference], strict=True)]

    def position_adjusted(self) -> Interleaved:
        """The same run with each round position's fitted effect removed (:mod:`claimcheck.harness.position`).

        ABBA keeps a position effect from biasing any arm; this also keeps it from widening
        the paired intervals, so it costs no power either.
        """
        from claimcheck.harness.position import position_adjusted

        return Interleaved(position_adjusted(self.samples, self.order).samples, list(self.order))


@dataclass
class Timer:
    """Times "build then evaluate" units of work under the protocol.

    Args:
        clock: seconds as a float; ``time.perf_counter`` unless a test injects one.
        evaluate: forces the outputs returned by a build; MLX's eval+synchronize
            unless a test injects one.
    """

    clock: Clock = time.perf_counter
    evaluate: Evaluate = mlx_evaluate

    def time(self, build: Build) -> float:
        """Seconds to build the graph and evaluate everything ``build`` returns.

        ``build`` must return its outputs: a build that returns ``None`` has
        nothing the timer could force, which is how lazy-eval bugs start.
        """
        start = self.clock()
        outputs = build()
        if outputs is None:
            raise ProbeError(f"{NOT_EVALUATED}: the timed function returned no outputs to evaluate")
        self.evaluate(outputs)
        return self.clock() - start

    def time_split(self, build: Build) -> tuple[float, float]:
        """``(build seconds, total seconds)`` of one unit: host graph building vs the whole."""
        start = self.clock()
        outputs = build()
        built = self.clock()
        if outputs is None:
            raise ProbeError(f"{NOT_EVALUATED}: the timed function returned no outputs to evaluate")
        self.evaluate(outputs)
        return built - start, self.clock() - start

    def warm_up(self, build: Build, times: int = 1) -> None:
        """Run ``build`` untimed on the exact shapes that will be timed."""
        for _ in range(times):
            outputs = build()
            if outputs is not None:
                self.evaluate(outputs)

    def sample(self, build: Build, n: int, *, warmup: int = 1) -> list[float]:
        """``n`` timed samples of ``build`` after ``warmup`` untimed runs."""
        self.warm_up(build, warmup)
        return [self.time(build) for _ in range(n)]

    def interleave(self, arms: Mapping[str, Build], rounds: int, *, warmup: int = 1) -> Interleaved:
        """Time every arm once per round in ABBA order, after warming each arm up."""
        for build in arms.values():
            self.warm_up(build, warmup)
        result = Interleaved(samples={name: [] for name in arms})
        for round_arms in interleaved_order(list(arms), rounds):
            for name in round_arms:
                result.samples[name].append(self.time(arms[name]))
                result.order.append(name)
        return result


def check_bandwidth(values: Sequence[float], ceiling_gbps: float, *, what: str, slack: float = 1.0) -> None:
    """Refuse bandwidth figures that exceed the ceiling measured in this session.

    Such a figure means work was skipped (an output never evaluated), not that
    the kernel beat physics; it must surface as a probe error, never a result.

    Args:
        values: GB/s samples to check.
        ceiling_gbps: the best read bandwidth measured in the same session.
        what: names the figure in the error message.
        slack: tolerated factor over the ceiling (1.0: none).
    """
    if ceiling_gbps <= 0:
        raise ProbeError(f"read ceiling must be positive, got {ceiling_gbps!r}")
    limit = ceiling_gbps * slack
    worst = max(values, default=0.0)
    if worst > limit:
        raise ProbeError(
            f"{NOT_EVALUATED}: {what} reported {worst:.3g} GB/s, above the {ceiling_gbps:.3g} GB/s "
            "read ceiling measured in this session"
        )


def spin(milliseconds: float, clock: Clock = time.perf_counter) -> None:
    """Busy-wait on the host (not sleep: the thread must stay on the CPU, as real host work would)."""
    end = clock() + milliseconds / 1e3
    while clock() < end:
        pass


# --- session buffers and the read ceiling ------------------------------------------------


def reuse(key: Any, factory: Callable[[], Any]) -> Any:
    """Build-once values (evaluated weights, buffers) shared by the calls of one session.

    The runner calls a probe once per sequential look; rebuilding hundreds of
    MiB of random weights each time would cost more than the measurement. The
    last :data:`REUSE_KEEP` values are kept.
    """
    if key in _REUSED:
        _REUSED.move_to_end(key)
        return _REUSED[key]
    value = factory()
    _REUSED[key] = value
    while len(_REUSED) > REUSE_KEEP:
        _REUSED.popitem(last=False)
    return value


def forget_reused() -> None:
    """Drop every value kept by :func:`reuse` (frees their memory)."""
    _REUSED.clear()


_REUSED: OrderedDict[Any, Any] = OrderedDict()
REUSE_KEEP = 4


def host_read_seconds(size_mib: float = 256, *, repeats: int = 3, clock: Clock = time.perf_counter) -> tuple[int, list[float]]:
    """Seconds for numpy to read a host buffer ``repeats`` times, on every core: an MLX-independent read.

    On the CPU backend MLX's reductions are compute-bound (a few GB/s), far
    below what memory delivers, so a ceiling taken from MLX alone would be too
    low; a numpy integer reduction is memory-bound. It runs one chunk per core
    (numpy releases the GIL inside reductions) because a multi-threaded BLAS
    GEMV reads with every core too.
    """
    import numpy as np

    threads = max(1, os.cpu_count() or 1)

    def fill() -> Any:
        data = np.ones(max(threads, int(size_mib * 2**20) // 8), dtype=np.int64)
        np.add.reduce(data)  # warm-up: page faults
        return data

    data = reuse(("host_buffer", size_mib), fill)
    chunks = np.array_split(data, threads)
    pool = _host_pool(threads)
    seconds = []
    for _ in range(repeats):
        start = clock()
        list(pool.map(np.add.reduce, chunks))
        seconds.append(clock() - start)
    return data.nbytes, seconds


def _host_pool(threads: int) -> Any:
    """One thread pool per thread count, kept for the session (thread start-up is not a read)."""
    from concurrent.futures import ThreadPoolExecutor

    if threads not in _POOLS:
        _POOLS[threads] = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="claimcheck-read")
    return _POOLS[threads]


_POOLS: dict[int, Any] = {}


def device_read_seconds(
    size_mib: float = 256, dtype: str = "bfloat16", *, repeats: int = 3, timer: Timer | None = None
) -> tuple[int, list[float]]:
    """Seconds for MLX to ``sum()`` a device buffer: the doc's raw streaming read."""
    data = device_buffer(size_mib, dtype)
    timer = timer or Timer()
    return data.nbytes, timer.sample(lambda: data.sum(), repeats, warmup=1)


def device_buffer(size_mib: float, dtype: str) -> Any:
    """An evaluated MLX buffer of ``size_mib`` MiB, kept for the session by :func:`reuse`."""
    mx = mlx_core()

    def fill() -> Any:
        mx_dtype = getattr(mx, dtype)
        count = int(size_mib * 2**20) // mx_dtype.size
        cols = 4096 if count % 4096 == 0 else 1  # 2-D: one arange of > 2**31 elements is refused
        row = (mx.arange(cols, dtype=mx.uint32) % 251).astype(mx_dtype)
        data = mx.zeros((count // cols, cols), dtype=mx_dtype) + row  # materialised, not a broadcast view
        mlx_evaluate(data)
        return data

    return reuse(("device_buffer", size_mib, dtype, str(mx.default_device())), fill)


_CEILINGS: dict[tuple[float, str], float] = {}


def read_ceiling_gbps(size_mib: float = 256, *, fresh: bool = False) -> float:
    """Best read bandwidth this session can show over ``size_mib`` MiB, from two independent readers.

    The larger of a numpy host read (all cores) and an MLX ``sum()``, each the
    best of three, over a buffer of ``size_mib`` MiB. Pass the working set of
    the figure being guarded: a working set that fits in cache is read faster
    than memory, and its ceiling must be measured at the same size. Measured
    once per process per size and device, so every probe in a session is
    guarded against the same figure.
    """
    mx = mlx_core()
    size_mib = max(1.0, float(size_mib))
    key = (size_mib, str(mx.default_device()))
    if fresh or key not in _CEILINGS:
        repeats = max(3, min(50, round(64 / size_mib)))  # small buffers: more tries, thread start-up is noisy
        host_bytes, host_s = host_read_seconds(size_mib, repeats=repeats)
        dev_bytes, dev_s = device_read_seconds(size_mib, "float32", repeats=repeats)
        _CEILINGS[key] = max(gbps(host_bytes, min(host_s)), gbps(dev_bytes, min(dev_s)))
    return _CEILINGS[key]
