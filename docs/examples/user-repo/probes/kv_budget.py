"""How many tokens of KV cache fit in a memory budget: this project's own deterministic probe."""

from __future__ import annotations

from claimcheck.api import Output, ProbeContext, probe

from ._units import GIB, KIB


@probe(
    "kv_budget_tokens",
    outputs={"tokens": Output("tokens", True, "cached positions that fit"), "kib_per_token": Output("KiB")},
    deterministic=True,
)
def kv_budget_tokens(ctx: ProbeContext, *, budget_gib: float, layers: int, kv_heads: int, head_dim: int,
                     dtype_bytes: int = 2) -> dict[str, list[float]]:
    """Tokens whose keys and values fit in ``budget_gib``: budget / (2 x layers x kv heads x head dim x bytes)."""
    per_token = 2 * layers * kv_heads * head_dim * dtype_bytes
    return {"tokens": [budget_gib * GIB // per_token], "kib_per_token": [per_token / KIB]}
