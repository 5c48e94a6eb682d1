"""The inputs each ``op_pair`` family runs its two ops on: seeded arrays of the family's layout.

Both entries of a pair get the same inputs, made here from the claim's ``shape``, ``dtype`` and a
seeded key, evaluated before any timing starts. A user's own entry reuses one of these makers (or
writes its own with the same signature), as :mod:`probes.ops.op_registry` explains.

MLX is imported inside the functions only.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from claimcheck.api import mlx_core

Inputs = tuple[Any, ...]
MakeInputs = Callable[[Sequence[int], str, Any], Inputs]

QUANT_BITS = 4
QUANT_GROUP = 64


@dataclass(frozen=True)
class InputDistribution:
    """How a family's data arrays (``x``; ``q, k, v``) are drawn; weights, scales and biases keep their own.

    ``normal``: ``mean + std * N(0, 1)`` (the default is N(0, 1)); ``uniform``: U(``low``, ``high``).
    """

    dist: str = "normal"
    mean: float = 0.0
    std: float = 1.0
    low: float = 0.0
    high: float = 1.0


DISTRIBUTIONS = ("normal", "uniform")
_KEYS = {"normal": {"dist", "mean", "std"}, "uniform": {"dist", "low", "high"}}
_DISTRIBUTION: contextvars.ContextVar[InputDistribution] = contextvars.ContextVar("op_input_distribution",
                                                                                 default=InputDistribution())


def distribution_problem(inputs: object) -> str | None:
    """Why a claim's ``inputs`` mapping is not a distribution, or None."""
    if not isinstance(inputs, Mapping):
        return f"`inputs` must be a mapping such as {{dist: uniform, low: 0, high: 1}}; got {inputs!r}"
    dist = inputs.get("dist", "normal")
    if dist not in DISTRIBUTIONS:
        return f"`inputs.dist` must be one of {', '.join(DISTRIBUTIONS)}; got {dist!r}"
    extra = sorted(set(inputs) - _KEYS[str(dist)])
    if extra:
        return f"`inputs.{extra[0]}` is not a setting of `dist: {dist}` (it takes: {', '.join(sorted(_KEYS[str(dist)]))})"
    for key in sorted(set(inputs) - {"dist"}):
        value = inputs[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"`inputs.{key}` must be a finite number; got {value!r}"
    if dist == "uniform" and not float(inputs.get("low", 0.0)) < float(inputs.get("high", 1.0)):
        return f"`inputs` needs low < high; got low {inputs.get('low', 0.0)}, high {inputs.get('high', 1.0)}"
    if dist == "normal" and float(inputs.get("std", 1.0)) <= 0:
        return f"`inputs.std` must be positive; got {inputs.get('std')}"
    return None


def distribution(inputs: Mapping[str, Any] | None) -> InputDistribution:
    """The claim's ``inputs`` as a distribution (checked: ValueError naming the setting)."""
    if inputs is None:
        return InputDistribution()
    problem = distribution_problem(inputs)
    if problem:
        raise ValueError(problem)
    numbers = {key: float(value) for key, value in inputs.items() if key != "dist"}
    return InputDistribution(dist=str(inputs.get("dist", "normal")), **numbers)


@contextlib.contextmanager
def drawn_from(chosen: InputDistribution) -> Iterator[None]:
    """Draw the data arrays of every maker called inside from ``chosen``."""
    token = _DISTRIBUTION.set(chosen)
    try:
        yield
    finally:
        _DISTRIBUTION.reset(token)


def data_array(mx: Any, key: Any, shape: Sequence[int], dtype: str, scale: float = 1.0) -> Any:
    """A data array from the current distribution (see :func:`drawn_from`), times ``scale``."""
    chosen = _DISTRIBUTION.get()
    if chosen.dist == "uniform":
        values = mx.random.uniform(chosen.low, chosen.high, tuple(shape), key=key)
    else:
        values = mx.random.normal(tuple(shape), key=key)
        if (chosen.mean, chosen.std) != (0.0, 1.0):
            values = chosen.mean + chosen.std * values
    return (values * scale).astype(getattr(mx, dtype))


def shape_dims(shape: Sequence[int], rank: int, family: str, meaning: str) -> list[int]:
    dims = [int(d) for d in shape]
    if len(dims) != rank or any(d < 1 for d in dims):
        raise ValueError(f"family `{family}` takes shape {meaning}, got {list(shape)}")
    return dims


def normal_array(mx: Any, key: Any, shape: Sequence[int], dtype: str, scale: float = 1.0) -> Any:
    return (mx.random.normal(tuple(shape), key=key) * scale).astype(getattr(mx, dtype))


def evaluated(mx: Any, *arrays: Any) -> Inputs:
    mx.eval(*arrays)
    return tuple(arrays)


def unary_inputs(shape: Sequence[int], dtype: str, key: Any) -> Inputs:
    """``x`` of any shape, standard normal by default (values around the activations' bend)."""
    mx = mlx_core()
    if not shape or any(int(d) < 1 for d in shape):
        raise ValueError(f"family `unary` takes a non-empty shape of positive sizes, got {list(shape)}")
    return evaluated(mx, data_array(mx, key, shape, dtype))


def rms_norm_inputs(shape: Sequence[int], dtype: str, key: Any) -> Inputs:
    """``x [..., dims]`` and a weight near 1 over ``dims``."""
    mx = mlx_core()
    if not shape:
        raise ValueError("family `rms_norm` takes shape [..., dims], got []")
    kx, kw = mx.random.split(key)
    return evaluated(mx, data_array(mx, kx, shape, dtype), (1 + normal_array(mx, kw, [shape[-1]], "float32", 0.1)).astype(getattr(mx, dtype)))


def layer_norm_inputs(shape: Sequence[int], dtype: str, key: Any) -> Inputs:
    """``x [..., dims]`` (offset from zero, so centring matters), a weight near 1 and a bias."""
    mx = mlx_core()
    if not shape:
        raise ValueError("family `layer_norm` takes shape [..., dims], got []")
    kx, kw, kb = mx.random.split(key, 3)
    x = (data_array(mx, kx, shape, "float32") + 0.5).astype(getattr(mx, dtype))
    w = (1 + normal_array(mx, kw, [shape[-1]], "float32", 0.1)).astype(getattr(mx, dtype))
    return evaluated(mx, x, w, normal_array(mx, kb, [shape[-1]], dtype, 0.1))


def attention_inputs(shape: Sequence[int], dtype: str, key: Any) -> Inputs:
    """``q, k, v`` of ``[batch, heads, length, head_dim]``."""
    mx = mlx_core()
    dims = shape_dims(shape, 4, "attention", "[batch, heads, length, head_dim]")
    kq, kk, kv = mx.random.split(key, 3)
    return evaluated(mx, *(data_array(mx, k, dims, dtype) for k in (kq, kk, kv)))


def rope_inputs(shape: Sequence[int], dtype: str, key: Any) -> Inputs:
    """``x [batch, heads, length, head_dim]`` with an even ``head_dim``."""
    mx = mlx_core()
    dims = shape_dims(shape, 4, "rope", "[batch, heads, length, head_dim]")
    if dims[-1] % 2:
        raise ValueError(f"family `rope` needs an even head_dim, got {dims[-1]}")
    return evaluated(mx, data_array(mx, key, dims, dtype))


def matmul_inputs(shape: Sequence[int], dtype: str, key: Any) -> Inputs:
    """``x [m, k]`` and ``w [k, n]`` scaled so that the product stays near unit size."""
    mx = mlx_core()
    m, k, n = shape_dims(shape, 3, "matmul", "[m, k, n]")
    kx, kw = mx.random.split(key)
    return evaluated(mx, data_array(mx, kx, [m, k], dtype), normal_array(mx, kw, [k, n], dtype, 1 / math.sqrt(k)))


@dataclass(frozen=True)
class QuantizedWeight:
    """A weight ``w [n, k]`` drawn for a quantized family, its quantized form and its dequantized copy.

    ``x_key`` is the key left for the family's ``x [m, k]``, so both families draw as they always did.
    """

    m: int
    k: int
    x_key: Any
    w: Any
    packed: Any
    scales: Any
    biases: Any
    dense: Any


def quantized_weight(shape: Sequence[int], dtype: str, key: Any, family: str, bits: int) -> QuantizedWeight:
    """The ``[m, k, n]`` weight of a quantized family, quantized at ``bits`` (group :data:`QUANT_GROUP`)."""
    mx = mlx_core()
    m, k, n = shape_dims(shape, 3, family, "[m, k, n]")
    if k % QUANT_GROUP:
        raise ValueError(f"family `{family}` needs k divisible by {QUANT_GROUP}, got {k}")
    kx, kw = mx.random.split(key)
    w = normal_array(mx, kw, [n, k], dtype, 1 / math.sqrt(k))
    packed, scales, biases = mx.quantize(w, group_size=QUANT_GROUP, bits=bits)
    dense = mx.dequantize(packed, scales, biases, group_size=QUANT_GROUP, bits=bits)
    return QuantizedWeight(m, k, kx, w, packed, scales, biases, dense)


def quantized_linear_inputs(shape: Sequence[int], dtype: str, key: Any) -> Inputs:
    """``x [m, k]``, a 4-bit weight of ``[n, k]`` (packed, scales, biases) and its dequantized copy."""
    mx = mlx_core()
    q = quantized_weight(shape, dtype, key, "quantized_linear", QUANT_BITS)
    return evaluated(mx, data_array(mx, q.x_key, [q.m, q.k], dtype), q.packed, q.scales, q.biases, q.dense)


def qmm_inputs(bits: int) -> MakeInputs:
    """Inputs of the ``qmm<bits>`` family: ``x``, ``w`` quantized at ``bits``, its dequantized copy, ``w``."""

    def make(shape: Sequence[int], dtype: str, key: Any) -> Inputs:
        mx = mlx_core()
        q = quantized_weight(shape, dtype, key, f"qmm{bits}", bits)
        x = data_array(mx, q.x_key, [q.m, q.k], dtype, 1 / math.sqrt(q.k))
        return evaluated(mx, x, q.packed, q.scales, q.biases, q.dense, q.w)

    make.__qualname__ = f"qmm{bits}_inputs"
    return make
