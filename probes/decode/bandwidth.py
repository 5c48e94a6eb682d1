"""Bandwidth probes: raw streaming read, quantized/dense GEMV, tiny-op chain, and the lazy-eval trap.

Definitions follow the methods notes (section F): a raw read is an evaluated
``sum()`` of a large buffer; a GEMV figure is weight bytes (packed + scales +
biases for quantized weights) over the time of a chain of GEMVs on distinct
weight copies inside one evaluation, so launch latency is amortised and no copy
is still in cache when it is read again.
"""

from __future__ import annotations

import math
from typing import Any

from claimcheck.api import (
    Output,
    PackPlot,
    ProbeContext,
    Timer,
    check_bandwidth,
    device_buffer,
    gbps,
    host_read_seconds,
    interleaved_order,
    mlx_core,
    probe,
    read_ceiling_gbps,
    reuse,
)


def _random_words(mx: Any, shape: tuple[int, ...]) -> Any:
    """Uniform random uint32 words (two 16-bit draws: ``randint`` goes through float32)."""
    high = mx.random.randint(0, 2**16, shape, dtype=mx.uint32)
    low = mx.random.randint(0, 2**16, shape, dtype=mx.uint32)
    return (high << 16) | low


def quantized_row_bytes(k: int, *, bits: int, group_size: int, scale_bytes: int) -> int:
    """Bytes one output row of a quantized [N, K] weight occupies: packed values + scale + bias per group."""
    if k % group_size or (k * bits) % 32:
        raise ValueError(f"`k`={k} must be a multiple of group_size={group_size} and of {32 // math.gcd(32, bits)}")
    return k * bits // 8 + 2 * (k // group_size) * scale_bytes


def make_weights(
    *,
    size_mib: float,
    k: int,
    arm: str = "quantized",
    bits: int = 4,
    group_size: int = 64,
    scale_dtype: str = "float32",
    dense_dtype: str = "bfloat16",
) -> tuple[tuple[Any, ...], int, str]:
    """One evaluated weight of about ``size_mib`` MiB (rows rounded to a multiple of 8).

    Returns ``(arrays, nbytes, activation_dtype)``: the weight arrays
    (``(w, scales, biases)`` or ``(w,)``), the exact bytes they hold, and the
    dtype the input vector must have.
    """
    mx = mlx_core()

    if arm == "quantized":
        scale = getattr(mx, scale_dtype)
        row = quantized_row_bytes(k, bits=bits, group_size=group_size, scale_bytes=scale.size)
        rows = max(8, round(size_mib * 2**20 / row / 8) * 8)
        w = _random_words(mx, (rows, k * bits // 32))
        scales = (mx.random.normal((rows, k // group_size)) * 1e-2).astype(scale)
        biases = (mx.random.normal((rows, k // group_size)) * 1e-2).astype(scale)
        arrays: tuple[Any, ...] = (w, scales, biases)
        activation = scale_dtype
    elif arm == "dense":
        dtype = getattr(mx, dense_dtype)
        rows = max(8, round(size_mib * 2**20 / (k * dtype.size) / 8) * 8)
        arrays = ((mx.random.normal((rows, k)) * 1e-2).astype(dtype),)
        activation = dense_dtype
    else:
        raise ValueError(f"`arm` must be 'quantized' or 'dense', got {arm!r}")
    mx.eval(*arrays)
    return arrays, sum(a.nbytes for a in arrays), activation


def gemv(x: Any, weight: tuple[Any, ...], *, bits: int, group_size: int) -> Any:
    """x[1, K] times weight[N, K]^T, quantized or dense by the weight's arity."""
    mx = mlx_core()

    if len(weight) == 3:
        w, scales, biases = weight
        return mx.quantized_matmul(x, w, scales, biases, transpose=True, group_size=group_size, bits=bits)
    return x @ weight[0].T


def _weight_chain(
    *, size_mib: float, cycle_mib: float, k: int, arm: str, bits: int, group_size: int, scale_dtype: str, dense_dtype: str
) -> tuple[list[tuple[Any, ...]], int, Any]:
    """Enough distinct copies of one weight to cycle ``cycle_mib`` MiB, plus the input vector (reused per session)."""
    key = ("gemv-chain", size_mib, cycle_mib, k, arm, bits, group_size, scale_dtype, dense_dtype)
    return reuse(key, lambda: _build_weight_chain(
        size_mib=size_mib, cycle_mib=cycle_mib, k=k, arm=arm, bits=bits, group_size=group_size,
        scale_dtype=scale_dtype, dense_dtype=dense_dtype,
    ))


def _build_weight_chain(
    *, size_mib: float, cycle_mib: float, k: int, arm: str, bits: int, group_size: int, scale_dtype: str, dense_dtype: str
) -> tuple[list[tuple[Any, ...]], int, Any]:
    mx = mlx_core()
    copies = max(1, math.ceil(cycle_mib / size_mib))
    weights, nbytes = [], 0
    activation = "float32"
    for _ in range(copies):
        arrays, size, activation = make_weights(
            size_mib=size_mib, k=k, arm=arm, bits=bits, group_size=group_size,
            scale_dtype=scale_dtype, dense_dtype=dense_dtype,
        )
        weights.append(arrays)
        nbytes += size
    x = mx.random.normal((1, k)).astype(getattr(mx, activation))
    mx.eval(x)
    return weights, nbytes, x


@probe(
    "raw_read",
    outputs={
        "gbps": Output("GB/s", True, "MLX sum() over the buffer"),
        "ceiling_gbps": Output("GB/s", True, "numpy integer reduction over a host buffer (independent of MLX)"),
    },
)
def raw_read(ctx: ProbeContext, *, size_mib: int = 256, dtype: str = "bfloat16", ceiling_mib: int = 256) -> dict[str, list[float]]:
    """Raw streaming read: evaluated sum() of a large buffer, with an MLX-independent host read beside it.

    Args:
        size_mib: MiB of the MLX buffer summed for ``gbps``.
        dtype: MLX dtype of that buffer (``bfloat16``, ``float16``, ``float32``, ...).
        ceiling_mib: MiB of the host buffer numpy reads on every core for ``ceiling_gbps``.
    """
    timer = Timer()
    data = device_buffer(size_mib, dtype)
    timer.warm_up(lambda: data.sum())
    out: dict[str, list[float]] = {"gbps": [], "ceiling_gbps": []}
    order = []
    for round_arms in interleaved_order(["device", "host"], ctx.n):
        for arm in round_arms:
            order.append(arm)
            if arm == "device":
                out["gbps"].append(gbps(data.nbytes, timer.time(lambda: data.sum())))
            else:
                host_bytes, host_s = host_read_seconds(ceiling_mib, repeats=1, clock=timer.clock)
                out["ceiling_gbps"].append(gbps(host_bytes, host_s[0]))
    ctx.artifacts["order"] = order
    ctx.info.update({"dtype": dtype, "bytes": int(data.nbytes), "ceiling": f"numpy int64 reduction of {ceiling_mib} MiB"})
    return out


@probe(
    "qmv",
    outputs={
        "gbps": Output("GB/s", True, "weight bytes / GEMV time, copies chained in one evaluation"),
        "raw_gbps": Output("GB/s", True, "raw streaming read measured in the same call, interleaved"),
        "ms": Output("ms", False, "time per GEMV (one matrix)"),
    },
    plot=PackPlot("qmv_bandwidth", "qmv bandwidth vs matrix size", "sweep", outputs=("gbps", "raw_gbps"),
                  reference="raw_gbps", x="size_mib", x_unit="MiB",
                  caption="Mean GEMV bandwidth of each item with its 95% interval against matrix size; the dashed "
                          "line is the raw read measured in the same calls."),
)
def qmv(
    ctx: ProbeContext,
    *,
    size_mib: float = 64,
    bits: int = 4,
    group_size: int = 64,
    scale_dtype: str = "float32",
    arm: str = "quantized",
    dense_dtype: str = "bfloat16",
    k: int = 4096,
    cycle_mib: float = 128,
    raw_mib: int = 256,
    raw_dtype: str = "bfloat16",
) -> dict[str, list[float]]:
    """Decode-shaped GEMV bandwidth (4-bit quantized_matmul or a dense arm) beside the raw read.

    Args:
        size_mib: bytes of one weight matrix (packed + scales + biases when quantized).
        bits: bits per quantized weight, any width ``mx.quantized_matmul`` accepts (e.g. 2, 3, 4, 6, 8).
        group_size: weights sharing one scale and bias (32, 64 or 128); ``k`` must be a multiple of it.
        scale_dtype: dtype of the scales and biases, and of the input vector of the quantized arm.
        arm: "quantized" (``quantized_matmul``) or "dense" (``x @ W.T`` in ``dense_dtype``).
        dense_dtype: dtype of the dense arm's weight and input vector (unused by the quantized arm).
        k: input width; the row count follows from ``size_mib``.
        cycle_mib: distinct copies are chained until this many MiB are read per sample,
            so no copy is still cached when it is read again (keep it above the last-level cache).
        raw_mib, raw_dtype: the raw-read buffer measured between GEMV samples.
    """
    timer = Timer()
    weights, nbytes, x = _weight_chain(
        size_mib=size_mib, cycle_mib=cycle_mib, k=k, arm=arm, bits=bits, group_size=group_size,
        scale_dtype=scale_dtype, dense_dtype=dense_dtype,
    )
    raw = device_buffer(raw_mib, raw_dtype)

    def chain() -> list[Any]:
        return [gemv(x, w, bits=bits, group_size=group_size) for w in weights]

    runs = timer.interleave({"gemv": chain, "raw": lambda: raw.sum()}, ctx.n)
    out = {
        "gbps": [gbps(nbytes, s) for s in runs.samples["gemv"]],
        "raw_gbps": [gbps(raw.nbytes, s) for s in runs.samples["raw"]],
        "ms": [s / len(weights) * 1e3 for s in runs.samples["gemv"]],
    }
    ceiling = max(read_ceiling_gbps(nbytes / 2**20), *out["raw_gbps"])
    check_bandwidth(out["gbps"], ceiling, what=f"{arm} GEMV of {size_mib} MiB")
    ctx.artifacts["order"] = runs.order
    ctx.info.update(
        {
            "arm": arm,
            "matrix_bytes": nbytes // len(weights),
            "copies": len(weights),
            "shape": [int(weights[0][0].shape[0]), k],
            "weight_dtype": f"{bits}-bit/{scale_dtype} scales" if arm == "quantized" else dense_dtype,
            "raw_read": f"{raw_dtype} sum of {raw_mib} MiB",
            "read_ceiling_gbps": ceiling,
        }
    )
    return out


@probe(
    "op_chain",
    outputs={
        "us_per_op": Output("µs", False, "build + evaluate, per op"),
        "build_us_per_op": Output("µs", False, "host graph building, per op"),
        "eval_us_per_op": Output("µs", False, "evaluation (encode + run), per op"),
    },
)
def op_chain(ctx: ProbeContext, *, ops: int = 1000, size: int = 1, dtype: str = "float32") -> dict[str, list[float]]:
    """Cost of one dependent tiny op: a chain of ``ops`` multiplies built and evaluated at once.

    Args:
        ops: multiplies in the chain, each reading the one before; every figure is per op.
        size: elements of the array each op multiplies (at 1, an op's cost is almost all overhead).
        dtype: MLX dtype of that array.
    """
    mx = mlx_core()

    timer = Timer()
    seed = mx.ones((size,), dtype=getattr(mx, dtype))
    mx.eval(seed)

    def chain() -> Any:
        y = seed
        for _ in range(ops):
            y = y * 1.0001
        return y

    timer.warm_up(chain)
    out: dict[str, list[float]] = {"us_per_op": [], "build_us_per_op": [], "eval_us_per_op": []}
    for _ in range(ctx.n):
        built, total = timer.time_split(chain)
        out["us_per_op"].append(total / ops * 1e6)
        out["build_us_per_op"].append(built / ops * 1e6)
        out["eval_us_per_op"].append((total - built) / ops * 1e6)
    ctx.info.update({"ops": ops, "size": size, "dtype": dtype})
    return out


def _drop(outputs: Any) -> None:
    """The deliberate bug: outputs are discarded, so MLX never computes them."""
    del outputs


@probe(
    "lazy_trap",
    outputs={
        "trap_gbps": Output("GB/s", None, "GEMV 'bandwidth' with the outputs dropped before evaluation"),
        "ceiling_gbps": Output("GB/s", True, "best of an MLX sum and a numpy read in the same round"),
    },
)
def lazy_trap(
    ctx: ProbeContext,
    *,
    size_mib: float = 16,
    cycle_mib: float = 64,
    k: int = 4096,
    bits: int = 4,
    group_size: int = 64,
    scale_dtype: str = "float32",
    ceiling_mib: int = 256,
    repeats: int = 100,
    evaluate: bool = False,
) -> dict[str, list[float]]:
    """The wrong way to time a GEMV chain: drop the outputs, never evaluate (bypasses the guard on purpose).

    The reported figure is graph-building time only, so it exceeds any
    physical read bandwidth; the claim that it does is what makes the guard in
    every honest probe worth having. Each sample times ``repeats`` builds of
    the chain, so microsecond jitter averages out. ``evaluate=True`` times the
    same chain honestly (the positive control: its figure cannot exceed the ceiling).

    Args:
        size_mib: MiB of one quantized weight matrix (packed + scales + biases).
        cycle_mib: distinct copies are chained until this many MiB are read per chain, so no copy is still
            cached when it is read again.
        k: input width; the row count follows from ``size_mib``.
        bits, group_size, scale_dtype: the weights' quantization, as ``qmv`` takes it: bits per weight,
            weights per scale and bias (``k`` a multiple of it), dtype of the scales, biases and input vector.
        ceiling_mib: MiB read both by an MLX ``sum()`` and by numpy each sample; the faster is ``ceiling_gbps``.
        repeats: builds of the whole chain per sample; the bytes claimed are the chain's times ``repeats``.
        evaluate: evaluate the chain and time it honestly (the positive control) instead of dropping its outputs.
    """
    trap = Timer() if evaluate else Timer(evaluate=_drop)
    honest = Timer()
    weights, nbytes, x = _weight_chain(
        size_mib=size_mib, cycle_mib=cycle_mib, k=k, arm="quantized", bits=bits, group_size=group_size,
        scale_dtype=scale_dtype, dense_dtype="bfloat16",
    )
    device = device_buffer(ceiling_mib, "float32")
    honest.warm_up(lambda: device.sum())

    def chain() -> list[Any]:
        return [gemv(x, w, bits=bits, group_size=group_size) for _ in range(repeats) for w in weights]

    trap.warm_up(chain)
    out: dict[str, list[float]] = {"trap_gbps": [], "ceiling_gbps": []}
    for _ in range(ctx.n):
        out["trap_gbps"].append(gbps(nbytes * repeats, trap.time(chain)))
        host_bytes, host_s = host_read_seconds(ceiling_mib, repeats=1)
        device_gbps = gbps(device.nbytes, honest.time(lambda: device.sum()))
        out["ceiling_gbps"].append(max(gbps(host_bytes, host_s[0]), device_gbps))
    ctx.info.update({"bytes_claimed_per_sample": nbytes * repeats, "copies": len(weights), "repeats": repeats,
                     "evaluated": evaluate})
    return out
