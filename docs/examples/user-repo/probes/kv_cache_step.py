"""Bytes one decode step appends to the KV cache: this project's own probe, named like a shipped one.

claimcheck later shipped a probe called ``kv_cache_step`` (it times cache appends). This project's
probe of the same name shadows it (a run prints one notice line naming both), and a claim reaches the
shipped one as ``claimcheck:kv_cache_step``.
"""

from __future__ import annotations

from claimcheck.api import Output, ProbeContext, probe

from ._units import KIB


@probe("kv_cache_step", outputs={"bytes": Output("B"), "kib": Output("KiB")}, deterministic=True)
def kv_cache_step(ctx: ProbeContext, *, layers: int, kv_heads: int, head_dim: int,
                  dtype_bytes: int = 2) -> dict[str, list[float]]:
    """Bytes one decode step writes into the cache: K and V of one position in every layer."""
    step = 2 * layers * kv_heads * head_dim * dtype_bytes
    return {"bytes": [float(step)], "kib": [step / KIB]}
