"""What the timing protocol itself adds to each timed sample, as a fraction of the sample.

The protocol wraps every sample in two clock reads, a check that the build returned outputs, and a
forced evaluation plus device synchronisation. With nothing left to compute, that wrapper is pure
overhead; this script measures it and sets it against real samples of the pack's cheapest timed
units (a 1000-op chain, a GEMV chain, a decode pass of the tiny synthetic model). Goal: < 1%.

    .venv/bin/python benchmarks/harness_overhead.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from claimcheck.harness.timing import Timer, mlx_core  # noqa: E402


def wrapper_overhead_us(repeats: int = 2000) -> list[float]:
    """Microseconds per Timer.time() around a build whose output is already evaluated."""
    mx = mlx_core()
    done = mx.ones((1,))
    mx.eval(done)
    timer = Timer()
    timer.warm_up(lambda: done, 10)
    outer = []
    for _ in range(repeats):
        start = time.perf_counter()
        timer.time(lambda: done)
        outer.append((time.perf_counter() - start) * 1e6)
    return outer


def sample_ms(label: str) -> list[float]:
    """Durations (ms) of real samples of the pack's cheapest timed units."""
    import probes.decode.bandwidth as bandwidth
    import probes.decode.decode_loop as decode
    from claimcheck.probing.registry import ProbeContext

    ctx = ProbeContext(n=10)
    if label == "op_chain (1000 ops)":
        return [v * 1000 / 1e3 for v in bandwidth.op_chain(ctx, ops=1000)["us_per_op"]]
    if label == "qmv (4 MiB x 16, fp32 scales)":
        out = bandwidth.qmv(ctx, size_mib=4, cycle_mib=64, raw_mib=32, k=2048)
        return [ms * ctx.info["copies"] for ms in out["ms"]]
    if label == "decode pass (tiny llama, 8 tokens)":
        out = decode.decode_arms(ctx, model="synthetic:llama:tiny", variant="fp32", arms=["baseline"], tokens=8, context=16)
        return [ms * 8 for ms in out["baseline_ms"]]
    raise ValueError(label)


def main() -> None:
    overhead = wrapper_overhead_us()
    median_us = statistics.median(overhead)
    p95_us = sorted(overhead)[int(0.95 * len(overhead))]
    print(f"protocol wrapper per sample: median {median_us:.1f} µs, p95 {p95_us:.1f} µs ({len(overhead)} runs)")
    print(f"{'timed unit':<38} {'sample median':>14} {'overhead':>9}")
    for label in ("op_chain (1000 ops)", "qmv (4 MiB x 16, fp32 scales)", "decode pass (tiny llama, 8 tokens)"):
        samples = sample_ms(label)
        median_ms = statistics.median(samples)
        print(f"{label:<38} {median_ms:>11.2f} ms {median_us / 1e3 / median_ms:>8.3%}")


if __name__ == "__main__":
    main()
