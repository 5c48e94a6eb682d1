"""Each xdist worker's share of a GPU's memory, so several MLX processes can share one device.

MLX gives every process a memory pool sized for the whole device and keeps freed buffers in a
cache. Eight workers on one H200 each grew such a pool and ended in out-of-memory and illegal
memory access errors in 42 items (docs/gpu.md), so the suite had to run in one process, and the
items that time nothing (curves, numerics, arithmetic) waited on each other. Under
``pytest -n N`` on a GPU each worker now caps its memory at its share of the device
(``fraction / N`` of the memory MLX reports) and its buffer cache at a quarter of that, so an
idle worker does not hold memory a timing item (which runs alone, see
:mod:`claimcheck.engine.exclusive`) needs.

``$CLAIMCHECK_DEVICE_MEMORY`` sets the fraction of the device the workers share (default 0.8), or
``off`` to leave MLX's own limits. On a CPU, and in one process, nothing changes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MEMORY_ENV = "CLAIMCHECK_DEVICE_MEMORY"
DEFAULT_FRACTION = 0.8  # of the device's memory, shared by the workers; the rest for the driver and the timing items' peaks
CACHE_SHARE = 0.25  # of a worker's limit kept as freed buffers


@dataclass(frozen=True)
class MemoryShare:
    """What one worker may use: its memory limit and its cache limit, in bytes."""

    workers: int
    limit: int
    cache: int

    def describe(self) -> str:
        return (f"{self.limit / 2**30:.1f} GiB memory, {self.cache / 2**30:.1f} GiB cache "
                f"(one of {self.workers} workers)")


def worker_share(device_bytes: int, environ: Mapping[str, str]) -> MemoryShare | None:
    """The share of ``device_bytes`` one worker of ``$PYTEST_XDIST_WORKER_COUNT`` takes, or None (one process, or off).

    Raises ValueError naming the variable when ``$CLAIMCHECK_DEVICE_MEMORY`` is not ``off`` or a fraction in (0, 1].
    """
    setting = environ.get(MEMORY_ENV, "").strip().lower()
    if setting == "off":
        return None
    try:
        fraction = float(setting) if setting else DEFAULT_FRACTION
    except ValueError:
        raise ValueError(f"${MEMORY_ENV} is `off` or a fraction of the device in (0, 1], got {setting!r}") from None
    if not 0 < fraction <= 1:
        raise ValueError(f"${MEMORY_ENV} is `off` or a fraction of the device in (0, 1], got {setting!r}")
    try:
        workers = int(environ.get("PYTEST_XDIST_WORKER_COUNT", "") or 1)
    except ValueError:
        workers = 1
    if workers <= 1 or device_bytes <= 0:
        return None
    return _share(device_bytes, fraction, workers)


def share_device_memory(environ: Mapping[str, str] | None = None) -> MemoryShare | None:
    """Apply this worker's share on a GPU (see the module docstring); the share applied, or None."""
    import mlx.core as mx

    if mx.default_device().type == mx.DeviceType.cpu:
        return None
    share = worker_share(_device_bytes(mx), os.environ if environ is None else environ)
    return _apply(mx, share)


def cap_device_memory(fraction: float) -> MemoryShare | None:
    """Cap this process at ``fraction`` of a GPU's memory (a warm-up process beside the run); None on a CPU."""
    import mlx.core as mx

    if mx.default_device().type == mx.DeviceType.cpu:
        return None
    total = _device_bytes(mx)
    return _apply(mx, _share(total, fraction, 1) if total > 0 else None)


def release_device_memory() -> None:
    """Give the device back the buffers this process keeps (a warm-up process between its calls)."""
    import gc

    import mlx.core as mx

    gc.collect()
    mx.clear_cache()


def _share(device_bytes: int, fraction: float, workers: int) -> MemoryShare:
    """``fraction`` of the device split ``workers`` ways, each worker's cache a quarter of its limit."""
    limit = int(device_bytes * fraction / workers)
    return MemoryShare(workers, limit, int(limit * CACHE_SHARE))


def _apply(mx: Any, share: MemoryShare | None) -> MemoryShare | None:
    """Set MLX's memory and cache limits to ``share`` (nothing for None); the share applied."""
    if share is not None:
        mx.set_memory_limit(share.limit)
        mx.set_cache_limit(share.cache)
    return share


def _device_bytes(mx: Any) -> int:
    """The device memory MLX reports (0 where the backend reports none)."""
    try:
        info = dict(mx.device_info())
    except Exception:  # a backend without device_info
        return 0
    return int(info.get("memory_size") or info.get("total_memory") or 0)
