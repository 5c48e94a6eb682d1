"""A sampled probe: each call returns ``ctx.n`` rolls of a fair die from the item's seeded generator."""

from __future__ import annotations

from claimcheck.api import Output, ProbeContext, probe


@probe("dice", outputs={"roll": Output("pips", True)})
def dice(ctx: ProbeContext, *, sides: int = 6) -> dict[str, list[float]]:
    """Rolls of a fair ``sides``-sided die; the runner asks again until it can decide."""
    return {"roll": [float(ctx.rng.randint(1, sides)) for _ in range(ctx.n)]}
