"""Domain arithmetic probes: recompute a doc's derived figures from its own inputs.

Findings docs print derived numbers (floor ms from bytes and bandwidth, fork %
from counts, KV bytes from a model's shape). These probes recompute them with
named params, so a claim can say "the doc's 2.58 ms follows from 0.697 GB at
270 GB/s" without any expression language in YAML. Units are decimal (GB =
1e9 bytes, MB = 1e6) unless the name says GiB/MiB, as in the source docs.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

from claimcheck.api import Output, ProbeContext, probe

GIB = 1024**3
MIB = 1024**2


def kv_bytes(*, context: int, kv_heads: int, head_dim: int, full_layers: int, sliding_layers: int = 0,
             window: int | None = None, dtype_bytes: int = 2) -> int:
    """Bytes of K and V read for one decoded token attending over ``context`` positions."""
    per_position = 2 * kv_heads * head_dim * dtype_bytes
    sliding_span = min(context, window) if window else context
    return per_position * (full_layers * context + sliding_layers * sliding_span)


@probe(
    "kv_bytes_per_token",
    outputs={
        "bytes": Output("B"), "kb": Output("KB"), "mb": Output("MB"), "gb": Output("GB"),
        "per_position_kb": Output("KB"),
    },
    deterministic=True,
)
def kv_bytes_per_token(ctx: ProbeContext, *, context: int, kv_heads: int, head_dim: int, full_layers: int,
                       sliding_layers: int = 0, window: int | None = None, dtype_bytes: int = 2) -> dict[str, list[float]]:
    """KV bytes per token: layers x (K,V) x kv heads x head dim x dtype bytes x positions, sliding layers capped.

    Args:
        context: positions (tokens) the decoded token attends over.
        kv_heads: key/value heads per layer (the KV heads, fewer than the query heads under GQA).
        head_dim: elements per head.
        full_layers: layers with full attention: each reads all ``context`` positions.
        sliding_layers: layers with sliding-window attention: each reads at most ``window`` positions.
        window: the sliding layers' window, in positions; ``None`` (or 0): they read the whole context.
        dtype_bytes: bytes per cached element (2 for float16/bfloat16, 4 for float32).
    """
    total = kv_bytes(context=context, kv_heads=kv_heads, head_dim=head_dim, full_layers=full_layers,
                     sliding_layers=sliding_layers, window=window, dtype_bytes=dtype_bytes)
    per_position = 2 * kv_heads * head_dim * dtype_bytes * (full_layers + sliding_layers)
    return {"bytes": [total], "kb": [total / 1e3], "mb": [total / 1e6], "gb": [total / 1e9],
            "per_position_kb": [per_position / 1e3]}


@probe("streamed_weight_gb", outputs={"gb": Output("GB"), "gib": Output("GiB")}, deterministic=True)
def streamed_weight_gb(ctx: ProbeContext, *, parts_gib: Sequence[float], expert_gib: float = 0.0,
                       top_k: int = 0, n_experts: int = 1) -> dict[str, list[float]]:
    """Weights streamed per token: GiB components summed, MoE experts scaled by top_k / n_experts.

    Args:
        parts_gib: weights every token reads (attention, dense layers, head), in GiB, summed.
        expert_gib: all experts' weights together, in GiB; a token reads ``top_k / n_experts`` of it.
        top_k: experts each token uses (``0 <= top_k <= n_experts``).
        n_experts: experts in total (at least 1).
    """
    if n_experts < 1 or top_k < 0 or top_k > n_experts:
        raise ValueError(f"need 0 <= top_k <= n_experts, got top_k={top_k}, n_experts={n_experts}")
    gib = float(sum(parts_gib)) + expert_gib * top_k / n_experts
    return {"gb": [gib * GIB / 1e9], "gib": [gib]}


@probe(
    "roofline_arithmetic",
    outputs={
        "bytes_gb": Output("GB"), "floor_ms": Output("ms"), "ceiling_tok_s": Output("tok/s"),
        "pct_of_roofline": Output("%"), "measured_tok_s": Output("tok/s"),
    },
    deterministic=True,
)
def roofline_arithmetic(ctx: ProbeContext, *, weights_gb: float, floor_gbps: float, ceiling_gbps: float,
                        kv_mb: float = 0.0, measured_ms: float | None = None,
                        floor_ms: float | None = None) -> dict[str, list[float]]:
    """Floor ms = bytes / achievable bandwidth; ceiling tok/s = raw bandwidth / bytes; % = floor / measured.

    ``floor_ms`` lets a claim use the floor as the doc printed it (rounded) for
    the percentage, as the doc itself did.

    Args:
        weights_gb: weight bytes read per decoded token, in GB (1e9 bytes).
        floor_gbps: the achievable bandwidth, in GB/s: the floor is the bytes over it.
        ceiling_gbps: the raw bandwidth, in GB/s: ``ceiling_tok_s`` is it over the bytes.
        kv_mb: KV-cache bytes read per token, in MB (1e6 bytes), added to the weights.
        measured_ms: the measured time per token, in ms; without it there is no
            ``pct_of_roofline`` nor ``measured_tok_s``.
        floor_ms: the floor as the doc printed it, in ms, used for the percentage instead of the computed one.
    """
    bytes_gb = weights_gb + kv_mb / 1e3
    floor = bytes_gb / floor_gbps * 1e3
    out = {"bytes_gb": [bytes_gb], "floor_ms": [floor], "ceiling_tok_s": [ceiling_gbps / bytes_gb]}
    if measured_ms is not None:
        out["pct_of_roofline"] = [100.0 * (floor_ms if floor_ms is not None else floor) / measured_ms]
        out["measured_tok_s"] = [1e3 / measured_ms]
    return out


@probe("implied_bandwidth", outputs={"gbps": Output("GB/s")}, deterministic=True)
def implied_bandwidth(ctx: ProbeContext, *, size: float, unit: str, time_ms: float) -> dict[str, list[float]]:
    """Bandwidth implied by moving ``size`` ``unit`` (GB, GiB, MB, MiB) in ``time_ms``.

    Args:
        size: the amount moved, in ``unit``.
        unit: ``GB`` or ``MB`` (decimal: 1e9, 1e6 bytes) or ``GiB`` or ``MiB`` (binary: 2**30, 2**20 bytes).
        time_ms: the time it took, in ms.
    """
    scale = {"GB": 1e9, "GiB": GIB, "MB": 1e6, "MiB": MIB}
    if unit not in scale:
        raise ValueError(f"unit must be one of {', '.join(scale)}, got {unit!r}")
    return {"gbps": [size * scale[unit] / (time_ms / 1e3) / 1e9]}


@probe("fork_share", outputs={"fork_pct": Output("%"), "remerge_pct": Output("%"), "forks": Output(""),
                              "first_fork": Output("position"), "deepest_fork": Output("position"),
                              "longest_gap": Output("positions")},
       deterministic=True)
def fork_share(ctx: ProbeContext, *, genuine_alternatives: int, fork_depths: Sequence[int],
               traced_to: int | None = None) -> dict[str, list[float]]:
    """Fork % = genuine forks (the listed depths) / genuine alternatives; the rest re-merge.

    Also the first and deepest fork, and the longest run of traced positions without a fork
    (from position 0 to ``traced_to``, the last position the trace can branch at: a reference of
    N tokens is traced while 12 tokens remain after the branch, so up to N - 13).

    Args:
        genuine_alternatives: genuine alternatives traced (positions whose rank-2 probability reaches
            the genuine cut, as ``bisector_trace`` counts them): the fork %'s denominator; at least the forks.
        fork_depths: positions of the alternatives that forked (did not re-merge), each once.
        traced_to: the last position the trace can branch at (not before the deepest fork);
            ``None``: the deepest fork, so the longest gap ends there.
    """
    forks = len(set(fork_depths))
    if len(fork_depths) != forks:
        raise ValueError("fork_depths lists a depth twice")
    if not 0 < forks <= genuine_alternatives:
        raise ValueError(f"need 0 < forks <= genuine_alternatives, got {forks} and {genuine_alternatives}")
    depths = sorted(fork_depths)
    end = depths[-1] if traced_to is None else traced_to
    if end < depths[-1]:
        raise ValueError(f"traced_to {traced_to} lies before the deepest fork {depths[-1]}")
    bounds = [-1, *depths, end + 1]
    gap = max(after - before - 1 for before, after in zip(bounds, bounds[1:]))
    share = 100.0 * forks / genuine_alternatives
    return {"fork_pct": [share], "remerge_pct": [100.0 - share], "forks": [forks], "first_fork": [depths[0]],
            "deepest_fork": [depths[-1]], "longest_gap": [gap]}


def _total(value: float | Sequence[float]) -> float:
    """A number, or the sum of a list of signed terms."""
    if isinstance(value, (int, float)):
        return float(value)
    return float(sum(value))


@probe("ratio_of", outputs={"ratio": Output(""), "pct": Output("%"), "pct_change": Output("%"),
                            "log_ratio": Output("")}, deterministic=True)
def ratio_of(ctx: ProbeContext, *, numerator: float | Sequence[float],
             denominator: float | Sequence[float]) -> dict[str, list[float]]:
    """A ratio printed in a doc (hazard ratio, share of step, speed-up), recomputed from its parts.

    Either side may be a list of signed terms, summed (``[3.6, -1.2, -1.7]``: a net saving from
    the doc's own decomposition), so a claim names the printed inputs rather than a sum done by hand.

    Args:
        numerator: the top: a number or a list of signed terms, summed.
        denominator: the bottom, written as ``numerator``; it may not total 0.
    """
    top, bottom = _total(numerator), _total(denominator)
    if bottom == 0:
        raise ValueError("denominator is 0")
    ratio = top / bottom
    out = {"ratio": [ratio], "pct": [100.0 * ratio], "pct_change": [100.0 * (ratio - 1.0)]}
    if ratio > 0:  # a net change can be negative; it has no log
        out["log_ratio"] = [math.log(ratio)]
    return out


@probe("difference_of", outputs={"difference": Output("")}, deterministic=True)
def difference_of(ctx: ProbeContext, *, minuend: float, subtrahend: float) -> dict[str, list[float]]:
    """A difference printed in a doc (e.g. an arm's +0.07 ms over baseline), recomputed.

    Args:
        minuend: the figure subtracted from (the arm's ms); ``difference`` is ``minuend - subtrahend``.
        subtrahend: the figure subtracted (the baseline's ms).
    """
    return {"difference": [minuend - subtrahend]}


@probe("scaling_mismatch", outputs={"log_factor_gap": Output(""), "factor_a": Output(""), "factor_b": Output("")},
       deterministic=True)
def scaling_mismatch(ctx: ProbeContext, *, a_before: float, a_after: float, b_before: float,
                     b_after: float) -> dict[str, list[float]]:
    """How far two quantities are from scaling by the same factor: ln(fa / fb), 0 when proportional.

    Args:
        a_before, a_after: quantity A before and after the change; ``factor_a = a_after / a_before``.
        b_before, b_after: quantity B before and after the same change; ``factor_b = b_after / b_before``.
    """
    fa, fb = a_after / a_before, b_after / b_before
    return {"log_factor_gap": [math.log(fa / fb)], "factor_a": [fa], "factor_b": [fb]}


@probe("sum_of", outputs={"total": Output("")}, deterministic=True)
def sum_of(ctx: ProbeContext, *, terms: Sequence[float]) -> dict[str, list[float]]:
    """A total a doc prints beside its parts (GPU + host + read = wall), recomputed.

    Args:
        terms: the parts as printed (signed numbers), summed.
    """
    return {"total": [float(sum(terms))]}


@probe("product_of", outputs={"product": Output("")}, deterministic=True)
def product_of(ctx: ProbeContext, *, factors: Sequence[float], scale: float = 1.0) -> dict[str, list[float]]:
    """A product a doc prints (dispatches x µs per dispatch), recomputed; ``scale`` converts units.

    Args:
        factors: the numbers multiplied, as printed.
        scale: a constant the product is multiplied by to convert units (``1e-3``: µs to ms); in a
            reading it is taken exactly, not as a printed figure.
    """
    return {"product": [math.prod(factors) * scale]}


# The arithmetic a reading can name: each takes the reading's inputs as its keyword params.
ARITHMETIC = {
    "ratio_of": ratio_of, "difference_of": difference_of, "implied_bandwidth": implied_bandwidth,
    "roofline_arithmetic": roofline_arithmetic, "streamed_weight_gb": streamed_weight_gb,
    "kv_bytes_per_token": kv_bytes_per_token, "sum_of": sum_of, "product_of": product_of,
}
READING_OUTPUTS = {
    "ratio": Output(""), "pct": Output("%"), "pct_change": Output("%"), "log_ratio": Output(""),
    "difference": Output(""), "gbps": Output("GB/s"), "bytes_gb": Output("GB"), "floor_ms": Output("ms"),
    "ceiling_tok_s": Output("tok/s"), "pct_of_roofline": Output("%"), "measured_tok_s": Output("tok/s"),
    "gb": Output("GB"), "gib": Output("GiB"), "bytes": Output("B"), "kb": Output("KB"), "mb": Output("MB"),
    "per_position_kb": Output("KB"), "total": Output(""), "product": Output(""),
}


# Params that are not printed figures (unit conversions, labels, counts of items): read exactly.
NOT_PRINTED = frozenset({"scale", "unit", "top_k", "n_experts", "window", "dtype_bytes"})


def printed(value: Any) -> tuple[float, float]:
    """A printed number and half a unit of its last printed digit.

    Integers are exact (counts, shapes, bytes); ``2.58`` is ±0.005. YAML drops trailing zeros,
    so a figure printed as ``2.570`` is written as the string ``"2.570"`` to keep its precision.
    A range the source prints as one figure (``"21.5–22.3"``, an en dash) is its midpoint, spanning
    both ends and their rounding.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {value!r}")
    if isinstance(value, int):
        return float(value), 0.0
    if isinstance(value, str) and "\u2013" in value:
        (low, low_half), (high, high_half) = (printed(end) for end in value.split("\u2013", 1))
        if high < low:
            raise ValueError(f"range {value!r} runs downwards")
        return (low + high) / 2, (high - low) / 2 + max(low_half, high_half)
    text = value.strip() if isinstance(value, str) else repr(float(value))
    number = float(text)
    if "e" in text.lower() or "." not in text:
        return number, 0.0
    decimals = len(text.split(".", 1)[1])
    return number, 0.5 * 10.0 ** -decimals


def _reading_inputs(inputs: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[tuple[str, int | None], float]]]:
    """The reading's inputs as numbers, and every (input, list index) that carries printed rounding."""
    values: dict[str, Any] = {}
    rounded: list[tuple[tuple[str, int | None], float]] = []
    for name, raw in inputs.items():
        if name in NOT_PRINTED:
            values[name] = raw
        elif isinstance(raw, (list, tuple)):
            terms = [printed(term) for term in raw]
            values[name] = [term for term, _ in terms]
            rounded += [((name, i), half) for i, (_, half) in enumerate(terms) if half]
        elif isinstance(raw, (int, float, str)) and not isinstance(raw, bool):
            number, half = printed(raw)
            values[name] = number
            if half:
                rounded.append(((name, None), half))
        else:
            values[name] = raw
    return values, rounded


MAX_ROUNDED_INPUTS = 12  # 4096 corners at most


def reading_span(of: str, ctx: ProbeContext, inputs: dict[str, Any]) -> dict[str, list[float]]:
    """Each output's value on the printed inputs, then its lowest and highest over their printed precision.

    The arithmetic is monotone in each input over so small a box, so the extremes lie at its corners.
    """
    values, rounded = _reading_inputs(inputs)
    central = ARITHMETIC[of](ctx, **values)
    if not rounded:
        return {name: list(out) for name, out in central.items()}
    if len(rounded) > MAX_ROUNDED_INPUTS:
        raise ValueError(f"a reading has {len(rounded)} rounded inputs; at most {MAX_ROUNDED_INPUTS}")
    lows = {name: float(out[0]) for name, out in central.items()}
    highs = dict(lows)
    for corner in itertools.product((-1.0, 1.0), repeat=len(rounded)):
        shifted: dict[str, Any] = {k: list(v) if isinstance(v, list) else v for k, v in values.items()}
        for sign, ((name, index), half) in zip(corner, rounded):
            if index is None:
                shifted[name] = shifted[name] + sign * half
            else:
                shifted[name][index] = shifted[name][index] + sign * half
        try:
            out = ARITHMETIC[of](ctx, **shifted)
        except (ValueError, ZeroDivisionError):
            continue  # a corner outside the arithmetic's domain bounds nothing
        for name, got in out.items():
            if name in lows:
                lows[name], highs[name] = min(lows[name], float(got[0])), max(highs[name], float(got[0]))
    # rounded to 12 decimals: a span end at 0 stays 0, not the 1e-15 of float cancellation
    return {name: [float(out[0]), round(lows[name], 12), round(highs[name], 12)] if highs[name] > lows[name]
            else [float(out[0])] for name, out in central.items()}


@probe("readings", outputs=READING_OUTPUTS, deterministic=True)
def readings(ctx: ProbeContext, *, of: str, reading: str,
             inputs: dict[str, dict[str, Any]]) -> dict[str, list[float]]:
    """One reading of a figure the source derives from inputs it prints in several places.

    A claim sweeps ``reading`` with ``check.over`` (one value per reading, each a key of
    ``inputs``); ``of`` names the arithmetic, which receives that reading's inputs as its params.
    A reading is an interval: each output is the value its printed inputs give, then (when an
    input is rounded) the lowest and highest value their printed precision allows, half a unit of
    each input's last digit (:func:`printed`). The ``exact`` rule then says which readings meet
    the printed figure.

    Args:
        of: the arithmetic the inputs go to: ``ratio_of``, ``difference_of``, ``implied_bandwidth``,
            ``roofline_arithmetic``, ``streamed_weight_gb``, ``kv_bytes_per_token``, ``sum_of`` or ``product_of``.
        reading: which entry of ``inputs`` this item computes (swept with ``check.over``).
        inputs: reading name -> that reading's params for ``of``, numbers as printed (``"2.570"``, a
            string, keeps its trailing zero; ``"21.5–22.3"`` is a range); ``scale``, ``unit``,
            ``top_k``, ``n_experts``, ``window`` and ``dtype_bytes`` are taken exactly.
    """
    if of not in ARITHMETIC:
        raise ValueError(f"`of` must be one of {', '.join(sorted(ARITHMETIC))}, got {of!r}")
    if reading not in inputs:
        raise ValueError(f"reading {reading!r} has no entry in `inputs` (it has: {', '.join(map(repr, inputs))})")
    ctx.artifacts.setdefault("readings", {})[reading] = dict(inputs[reading])
    spans = reading_span(of, ctx, inputs[reading])
    ctx.artifacts.setdefault("reading_spans", {})[reading] = {name: out[1:] for name, out in spans.items()
                                                              if len(out) == 3}
    return spans
