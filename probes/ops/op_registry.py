"""Named MLX ops and compositions that ``op_pair`` compares, each with the inputs it runs on.

A claim names two entries (``a`` and ``b``); both run on the same generated inputs, so the two
entries must share an input ``family`` (the inputs' layout and what ``shape`` means). Nothing is
evaluated from strings: an entry is a Python function registered here or by a user's own probe
module with :func:`register_op`::

    from claimcheck_probes.ops.op_registry import OpEntry, register_op, rms_norm_inputs
    register_op(OpEntry("my_norm", "rms_norm", rms_norm_inputs, my_norm, "my RMSNorm"))

Families (what ``shape`` means):
    ``unary``: any shape; one array ``x``.
    ``rms_norm`` / ``layer_norm``: ``[..., dims]``; ``x`` plus weight (and bias) of ``dims``.
    ``attention``: ``[batch, heads, length, head_dim]``; ``q, k, v`` of that shape.
    ``rope``: ``[batch, heads, length, head_dim]``; ``x`` of that shape, rotated over all of ``head_dim``.
    ``matmul``: ``[m, k, n]``; ``x [m, k]`` and ``w [k, n]``.
    ``quantized_linear``: ``[m, k, n]``; ``x [m, k]``, a 4-bit (group 64) weight ``[n, k]`` and its
        dequantized dense copy (made with the inputs, so the dense arm times only its matmul).
    ``qmm4`` / ``qmm8``: ``[m, k, n]``; as MLX's own quantized-matmul tests draw them: ``x [m, k]``
        and ``w [n, k]`` both standard normal over ``sqrt(k)``, ``w`` quantized at 4 or 8 bits (group
        64), with its dequantized copy and the original weight.

The input makers live in :mod:`probes.ops.op_inputs` (and are importable from here too). MLX is
imported inside the functions only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from claimcheck.api import definition_source, did_you_mean, mlx_core, same_definition
from .op_inputs import (
    QUANT_BITS,
    QUANT_GROUP,
    MakeInputs,
    attention_inputs,
    layer_norm_inputs,
    matmul_inputs,
    qmm_inputs,
    quantized_linear_inputs,
    rms_norm_inputs,
    rope_inputs,
    unary_inputs,
)

NORM_EPS = 1e-5
ROPE_BASE = 10000.0


@dataclass(frozen=True)
class OpEntry:
    """One comparable op: its name, its input family, how to make its inputs, and the op itself.

    Attributes:
        name: what claims write in ``a`` / ``b``.
        family: entries of one family take the same inputs and may be paired.
        make_inputs: ``(shape, dtype name, mlx random key) -> evaluated input arrays``.
        fn: ``(*inputs) -> one array`` (lazy; the probe evaluates it).
        description: one line for listings.
    """

    name: str
    family: str
    make_inputs: MakeInputs
    fn: Callable[..., Any]
    description: str = ""


class UnknownOpError(LookupError):
    """An op name nobody registered; the message lists the known ones."""


_OPS: dict[str, OpEntry] = {}


def register_op(entry: OpEntry) -> OpEntry:
    """Add ``entry``; the same name for a different function is an error naming both.

    The same definition seen again (its module re-imported, or one file imported under two names:
    ``claimcheck.probing.registry.same_definition``, the rule probes follow) replaces it.
    """
    existing = _OPS.get(entry.name)
    if existing is not None and not same_definition(existing.fn, entry.fn):
        raise ValueError(
            f"op `{entry.name}` is registered twice ({definition_source(existing.fn)} and {definition_source(entry.fn)})"
        )
    _OPS[entry.name] = entry
    return entry


def get_op(name: str) -> OpEntry:
    """The entry called ``name``, or an error with a did-you-mean and the known names."""
    try:
        return _OPS[name]
    except KeyError:
        known = sorted(_OPS)
        hint = did_you_mean(name, known)
        raise UnknownOpError(f"unknown op `{name}`{hint}; known ops: {', '.join(known)}") from None


def registered_ops() -> dict[str, OpEntry]:
    """A snapshot of the registry."""
    return dict(_OPS)


# --- ops -------------------------------------------------------------------------------------


def _compiled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``mx.compile(fn)``, built on first call (so importing this module imports no MLX)."""
    holder: list[Callable[..., Any]] = []

    def call(*inputs: Any) -> Any:
        if not holder:
            holder.append(mlx_core().compile(fn))
        return holder[0](*inputs)

    call.__qualname__ = f"compiled_{fn.__qualname__}"
    return call


def gelu_erf(x: Any) -> Any:
    """The exact GELU written out, as in MLX's compile guide: ``x * (1 + erf(x / sqrt 2)) / 2``."""
    mx = mlx_core()
    return x * (1 + mx.erf(x / math.sqrt(2))) / 2


def _nn() -> Any:
    mlx_core()
    import mlx.nn as nn

    return nn


def gelu(x: Any) -> Any:
    return _nn().gelu(x)


def gelu_approx(x: Any) -> Any:
    return _nn().gelu_approx(x)


def gelu_fast_approx(x: Any) -> Any:
    return _nn().gelu_fast_approx(x)


def softmax(x: Any) -> Any:
    return mlx_core().softmax(x, axis=-1)


def softmax_precise(x: Any) -> Any:
    return mlx_core().softmax(x, axis=-1, precise=True)


def softmax_reference(x: Any) -> Any:
    """Max-subtracted softmax in float32, cast back to the input dtype."""
    mx = mlx_core()
    z = x.astype(mx.float32)
    e = mx.exp(z - z.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype)


def rms_norm_fast(x: Any, w: Any) -> Any:
    return mlx_core().fast.rms_norm(x, w, NORM_EPS)


def rms_norm_reference(x: Any, w: Any) -> Any:
    """``x / sqrt(mean(x^2) + eps) * w`` in float32, cast back to the input dtype."""
    mx = mlx_core()
    z = x.astype(mx.float32)
    normed = z * mx.rsqrt(mx.mean(z * z, axis=-1, keepdims=True) + NORM_EPS)
    return (normed * w.astype(mx.float32)).astype(x.dtype)


def layer_norm_fast(x: Any, w: Any, b: Any) -> Any:
    return mlx_core().fast.layer_norm(x, w, b, NORM_EPS)


def layer_norm_reference(x: Any, w: Any, b: Any) -> Any:
    """``(x - mean) / sqrt(var + eps) * w + b`` in float32, cast back to the input dtype."""
    mx = mlx_core()
    z = x.astype(mx.float32)
    mean = mx.mean(z, axis=-1, keepdims=True)
    var = mx.var(z, axis=-1, keepdims=True)
    return ((z - mean) * mx.rsqrt(var + NORM_EPS) * w.astype(mx.float32) + b.astype(mx.float32)).astype(x.dtype)


def sdpa_fast(q: Any, k: Any, v: Any) -> Any:
    return mlx_core().fast.scaled_dot_product_attention(q, k, v, scale=q.shape[-1] ** -0.5)


def sdpa_fast_causal(q: Any, k: Any, v: Any) -> Any:
    return mlx_core().fast.scaled_dot_product_attention(q, k, v, scale=q.shape[-1] ** -0.5, mask="causal")


def _attention_reference(q: Any, k: Any, v: Any, causal: bool) -> Any:
    mx = mlx_core()
    scores = (q * q.shape[-1] ** -0.5) @ k.swapaxes(-1, -2)
    if causal:
        lq, lk = q.shape[-2], k.shape[-2]
        allowed = mx.arange(lq)[:, None] + (lk - lq) >= mx.arange(lk)[None]
        scores = mx.where(allowed, scores, mx.array(-float("inf"), scores.dtype))
    return mx.softmax(scores, axis=-1, precise=True) @ v


def sdpa_reference(q: Any, k: Any, v: Any) -> Any:
    """``softmax(q k^T / sqrt(d)) v`` with ordinary ops (softmax accumulated in float32)."""
    return _attention_reference(q, k, v, causal=False)


def sdpa_reference_causal(q: Any, k: Any, v: Any) -> Any:
    """The reference attention with a causal mask (query ``i`` sees keys ``<= i``)."""
    return _attention_reference(q, k, v, causal=True)


def rope_fast(x: Any) -> Any:
    return mlx_core().fast.rope(x, x.shape[-1], traditional=False, base=ROPE_BASE, scale=1.0, offset=0)


def rope_fast_traditional(x: Any) -> Any:
    return mlx_core().fast.rope(x, x.shape[-1], traditional=True, base=ROPE_BASE, scale=1.0, offset=0)


def _rope_reference(x: Any, traditional: bool) -> Any:
    mx = mlx_core()
    dims, length = x.shape[-1], x.shape[-2]
    theta = mx.power(ROPE_BASE, -mx.arange(0, dims, 2, dtype=mx.float32) / dims)
    angles = mx.arange(length, dtype=mx.float32)[:, None] * theta[None]
    cos, sin = mx.cos(angles), mx.sin(angles)
    z = x.astype(mx.float32)
    if traditional:  # rotate adjacent pairs (x0, x1), (x2, x3), ...
        x1, x2 = z[..., 0::2], z[..., 1::2]
        rotated = mx.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1).reshape(z.shape)
    else:  # rotate the two halves (x_i, x_{i + d/2})
        x1, x2 = z[..., : dims // 2], z[..., dims // 2 :]
        rotated = mx.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
    return rotated.astype(x.dtype)


def rope_reference(x: Any) -> Any:
    """RoPE over the two halves of ``head_dim`` (mlx-lm's default layout), in float32."""
    return _rope_reference(x, traditional=False)


def rope_reference_traditional(x: Any) -> Any:
    """RoPE over adjacent pairs (the ``traditional`` layout), in float32."""
    return _rope_reference(x, traditional=True)


def matmul(x: Any, w: Any) -> Any:
    return x @ w


def matmul_rows(x: Any, w: Any) -> Any:
    """The same product one row at a time (as separate decode steps would), rows stacked back."""
    return mlx_core().concatenate([x[i : i + 1] @ w for i in range(x.shape[0])], axis=0)


def quantized_matmul(x: Any, packed: Any, scales: Any, biases: Any, dense: Any) -> Any:
    return mlx_core().quantized_matmul(x, packed, scales, biases, transpose=True, group_size=QUANT_GROUP, bits=QUANT_BITS)


def dequantized_matmul(x: Any, packed: Any, scales: Any, biases: Any, dense: Any) -> Any:
    """``x @ W^T`` on the dequantized weight (made with the inputs: only the matmul is timed)."""
    return x @ dense.T


def _qmm_ops(bits: int) -> tuple[OpEntry, ...]:
    """The quantized product, the dense product on the dequantized weight, and on the original weight."""
    family, make = f"qmm{bits}", qmm_inputs(bits)

    def quantized(x: Any, packed: Any, scales: Any, biases: Any, dense: Any, w: Any) -> Any:
        return mlx_core().quantized_matmul(x, packed, scales, biases, transpose=True, group_size=QUANT_GROUP, bits=bits)

    def dequantized(x: Any, packed: Any, scales: Any, biases: Any, dense: Any, w: Any) -> Any:
        return x @ dense.T

    def original(x: Any, packed: Any, scales: Any, biases: Any, dense: Any, w: Any) -> Any:
        return x @ w.T

    for fn, role in ((quantized, "quantized"), (dequantized, "dequantized"), (original, "original")):
        fn.__qualname__ = f"{family}_{role}"
    return (
        OpEntry(f"{family}_quantized", family, make, quantized, f"mx.quantized_matmul, {bits}-bit group {QUANT_GROUP}"),
        OpEntry(f"{family}_dequantized", family, make, dequantized, f"dense x @ W^T on the dequantized {bits}-bit weight"),
        OpEntry(f"{family}_original", family, make, original, "dense x @ W^T on the original (unquantized) weight"),
    )


def silu(x: Any) -> Any:
    """``x * sigmoid(x)``: GELU's sigmoid form with 1 in place of 1.702."""
    return _nn().silu(x)


def _in_bfloat16(x: Any) -> Any:
    return x.astype(mlx_core().bfloat16)


def rms_norm_reference_bf16(x: Any, w: Any) -> Any:
    """The reference RMSNorm computed throughout in bfloat16 (a precision loss the probe must see)."""
    mx = mlx_core()
    z = _in_bfloat16(x)
    normed = z * mx.rsqrt(mx.mean(z * z, axis=-1, keepdims=True) + NORM_EPS)
    return (normed * _in_bfloat16(w)).astype(x.dtype)


def layer_norm_reference_bf16(x: Any, w: Any, b: Any) -> Any:
    """The reference LayerNorm computed throughout in bfloat16 (a precision loss the probe must see)."""
    mx = mlx_core()
    z = _in_bfloat16(x)
    mean = mx.mean(z, axis=-1, keepdims=True)
    var = mx.var(z, axis=-1, keepdims=True)
    return ((z - mean) * mx.rsqrt(var + NORM_EPS) * _in_bfloat16(w) + _in_bfloat16(b)).astype(x.dtype)


for _entry in (
    OpEntry("gelu", "unary", unary_inputs, gelu, "mlx.nn.gelu (exact, erf)"),
    OpEntry("gelu_approx", "unary", unary_inputs, gelu_approx, "mlx.nn.gelu_approx (tanh approximation)"),
    OpEntry("gelu_fast_approx", "unary", unary_inputs, gelu_fast_approx, "mlx.nn.gelu_fast_approx (sigmoid approximation)"),
    OpEntry("gelu_erf", "unary", unary_inputs, gelu_erf, "exact GELU written out with mx.erf, uncompiled"),
    OpEntry("gelu_erf_compiled", "unary", unary_inputs, _compiled(gelu_erf), "the same GELU under mx.compile"),
    OpEntry("softmax", "unary", unary_inputs, softmax, "mx.softmax over the last axis"),
    OpEntry("softmax_precise", "unary", unary_inputs, softmax_precise, "mx.softmax(precise=True): float32 accumulation"),
    OpEntry("softmax_reference", "unary", unary_inputs, softmax_reference, "max-subtracted exp / sum in float32"),
    OpEntry("rms_norm_fast", "rms_norm", rms_norm_inputs, rms_norm_fast, "mx.fast.rms_norm"),
    OpEntry("rms_norm_reference", "rms_norm", rms_norm_inputs, rms_norm_reference, "RMSNorm with ordinary ops in float32"),
    OpEntry("rms_norm_reference_compiled", "rms_norm", rms_norm_inputs, _compiled(rms_norm_reference), "the reference RMSNorm under mx.compile"),
    OpEntry("layer_norm_fast", "layer_norm", layer_norm_inputs, layer_norm_fast, "mx.fast.layer_norm"),
    OpEntry("layer_norm_reference", "layer_norm", layer_norm_inputs, layer_norm_reference, "LayerNorm with ordinary ops in float32"),
    OpEntry("sdpa_fast", "attention", attention_inputs, sdpa_fast, "mx.fast.scaled_dot_product_attention, no mask"),
    OpEntry("sdpa_reference", "attention", attention_inputs, sdpa_reference, "softmax(q k^T / sqrt d) v with ordinary ops"),
    OpEntry("sdpa_fast_causal", "attention", attention_inputs, sdpa_fast_causal, "fast SDPA with mask='causal'"),
    OpEntry("sdpa_reference_causal", "attention", attention_inputs, sdpa_reference_causal, "reference attention, causal mask"),
    OpEntry("rope_fast", "rope", rope_inputs, rope_fast, "mx.fast.rope, halves layout"),
    OpEntry("rope_reference", "rope", rope_inputs, rope_reference, "RoPE with cos/sin tables, halves layout"),
    OpEntry("rope_fast_traditional", "rope", rope_inputs, rope_fast_traditional, "mx.fast.rope(traditional=True)"),
    OpEntry("rope_reference_traditional", "rope", rope_inputs, rope_reference_traditional, "RoPE with cos/sin tables, pairs layout"),
    OpEntry("matmul", "matmul", matmul_inputs, matmul, "x @ w, all rows in one product"),
    OpEntry("matmul_rows", "matmul", matmul_inputs, matmul_rows, "x @ w one row at a time, concatenated"),
    OpEntry("quantized_matmul", "quantized_linear", quantized_linear_inputs, quantized_matmul, "mx.quantized_matmul, 4-bit group 64"),
    OpEntry("dequantized_matmul", "quantized_linear", quantized_linear_inputs, dequantized_matmul, "dense x @ W^T on the dequantized weight"),
    OpEntry("silu", "unary", unary_inputs, silu, "mlx.nn.silu: x * sigmoid(x)"),
    OpEntry("rms_norm_reference_bf16", "rms_norm", rms_norm_inputs, rms_norm_reference_bf16, "the reference RMSNorm in bfloat16 throughout"),
    OpEntry("layer_norm_reference_bf16", "layer_norm", layer_norm_inputs, layer_norm_reference_bf16, "the reference LayerNorm in bfloat16 throughout"),
    OpEntry("layer_norm_reference_compiled", "layer_norm", layer_norm_inputs, _compiled(layer_norm_reference), "the reference LayerNorm under mx.compile"),
    *_qmm_ops(4),
    *_qmm_ops(8),
):
    register_op(_entry)
