"""Domain arithmetic probes: recompute a doc's derived figures from its own inputs.

Findings docs print derived numbers (floor ms from bytes and bandwidth, fork %
from counts, KV bytes from a model's shape). These probes recompute them with
named params, so a claim can say "the doc's 2.58 ms follows from 0.697 GB at
270 GB/s" without any expression language in YAML. Units are decimal (GB =
1e9 bytes, MB = 1e6) unless the name says GiB/MiB, as in the source docs.
"""

from __future__ import annotations

import math
from typing import Sequence

from claimcheck.probe import Output, ProbeContext, probe

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
    """KV bytes per token: layers x (K,V) x kv heads x head dim x dtype bytes x positions, sliding layers capped."""
    total = kv_bytes(context=context, kv_heads=kv_heads, head_dim=head_dim, full_layers=full_layers,
                     sliding_layers=sliding_layers, window=window, dtype_bytes=dtype_bytes)
    per_position = 2 * kv_heads * head_dim * dtype_bytes * (full_layers + sliding_layers)
    return {"bytes": [total], "kb": [total / 1e3], "mb": [total / 1e6], "gb": [total / 1e9],
            "per_position_kb": [per_position / 1e3]}


@probe("streamed_weight_gb", outputs={"gb": Output("GB"), "gib": Output("GiB")}, deterministic=True)
def streamed_weight_gb(ctx: ProbeContext, *, parts_gib: Sequence[float], expert_gib: float = 0.0,
                       top_k: int = 0, n_experts: int = 1) -> dict[str, list[float]]:
    """Weights streamed per token: GiB components summed, MoE experts scaled by top_k / n_experts."""
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
    """Bandwidth implied by moving ``size`` ``unit`` (GB, GiB, MB, MiB) in ``time_ms``."""
    scale = {"GB": 1e9, "GiB": GIB, "MB": 1e6, "MiB": MIB}
    if unit not in scale:
        raise ValueError(f"unit must be one of {', '.join(scale)}, got {unit!r}")
    return {"gbps": [size * scale[unit] / (time_ms / 1e3) / 1e9]}


@probe("fork_share", outputs={"fork_pct": Output("%"), "remerge_pct": Output("%"), "forks": Output("")},
       deterministic=True)
def fork_share(ctx: ProbeContext, *, genuine_alternatives: int, fork_depths: Sequence[int]) -> dict[str, list[float]]:
    """Fork % = genuine forks (the listed depths) / genuine alternatives; the rest re-merge."""
    forks = len(set(fork_depths))
    if len(fork_depths) != forks:
        raise ValueError("fork_depths lists a depth twice")
    if not 0 < forks <= genuine_alternatives:
        raise ValueError(f"need 0 < forks <= genuine_alternatives, got {forks} and {genuine_alternatives}")
    share = 100.0 * forks / genuine_alternatives
    return {"fork_pct": [share], "remerge_pct": [100.0 - share], "forks": [forks]}


@probe("ratio_of", outputs={"ratio": Output(""), "pct": Output("%"), "pct_change": Output("%"),
                            "log_ratio": Output("")}, deterministic=True)
def ratio_of(ctx: ProbeContext, *, numerator: float, denominator: float) -> dict[str, list[float]]:
    """A ratio printed in a doc (hazard ratio, share of step, speed-up), recomputed from its parts."""
    if denominator == 0:
        raise ValueError("denominator is 0")
    ratio = numerator / denominator
    return {"ratio": [ratio], "pct": [100.0 * ratio], "pct_change": [100.0 * (ratio - 1.0)],
            "log_ratio": [math.log(ratio) if ratio > 0 else float("nan")]}


@probe("difference_of", outputs={"difference": Output("")}, deterministic=True)
def difference_of(ctx: ProbeContext, *, minuend: float, subtrahend: float) -> dict[str, list[float]]:
    """A difference printed in a doc (e.g. an arm's +0.07 ms over baseline), recomputed."""
    return {"difference": [minuend - subtrahend]}


@probe("scaling_mismatch", outputs={"log_factor_gap": Output(""), "factor_a": Output(""), "factor_b": Output("")},
       deterministic=True)
def scaling_mismatch(ctx: ProbeContext, *, a_before: float, a_after: float, b_before: float,
                     b_after: float) -> dict[str, list[float]]:
    """How far two quantities are from scaling by the same factor: ln(fa / fb), 0 when proportional."""
    fa, fb = a_after / a_before, b_after / b_before
    return {"log_factor_gap": [math.log(fa / fb)], "factor_a": [fa], "factor_b": [fb]}
