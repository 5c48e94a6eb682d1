"""Synthetic probes with known truth, for end-to-end runs of every decision rule."""

from __future__ import annotations

import random

from claimcheck.api import Output, ProbeContext, probe


def _rng(ctx: ProbeContext) -> random.Random:
    return random.Random(ctx.seed * 1_000 + ctx.look)


@probe("normal", outputs={"x": Output("")})
def normal(ctx: ProbeContext, *, mean: float, sd: float = 1.0) -> dict[str, list[float]]:
    """Independent normal samples."""
    rng = _rng(ctx)
    return {"x": [rng.gauss(mean, sd) for _ in range(ctx.n)]}


@probe("two_arms", outputs={"a": Output("ms"), "b": Output("ms")})
def two_arms(ctx: ProbeContext, *, mean_a: float, mean_b: float, sd: float = 1.0) -> dict[str, list[float]]:
    """Two interleaved arms with their own means."""
    rng = _rng(ctx)
    return {"a": [rng.gauss(mean_a, sd) for _ in range(ctx.n)], "b": [rng.gauss(mean_b, sd) for _ in range(ctx.n)]}


@probe("three_arms", outputs={"first": Output(""), "second": Output(""), "third": Output("")})
def three_arms(ctx: ProbeContext, *, means: list[float], sd: float = 1.0) -> dict[str, list[float]]:
    """Three arms for ordering claims."""
    rng = _rng(ctx)
    names = ("first", "second", "third")
    return {name: [rng.gauss(mean, sd) for _ in range(ctx.n)] for name, mean in zip(names, means)}


@probe("bernoulli", outputs={"hit": Output("")})
def bernoulli(ctx: ProbeContext, *, p: float) -> dict[str, list[float]]:
    """0/1 events with rate p."""
    rng = _rng(ctx)
    return {"hit": [1.0 if rng.random() < p else 0.0 for _ in range(ctx.n)]}


@probe("trend", outputs={"x": Output("GB/s")})
def trend(ctx: ProbeContext, *, size: float, slope: float, sd: float = 1.0) -> dict[str, list[float]]:
    """Samples whose mean is slope x size (for monotone claims over `size`)."""
    rng = _rng(ctx)
    return {"x": [rng.gauss(slope * size, sd) for _ in range(ctx.n)]}


@probe("constant", outputs={"value": Output("")}, deterministic=True)
def constant(ctx: ProbeContext, *, value: float) -> dict[str, list[float]]:
    """A computed figure (for exact claims)."""
    return {"value": [value]}


@probe("broken", outputs={"x": Output("")})
def broken(ctx: ProbeContext, *, mode: str = "raise") -> dict[str, list[float]]:
    """A probe that fails in a chosen way."""
    if mode == "raise":
        raise RuntimeError("device lost\nsecond line that must not be shown")
    if mode == "nan":
        return {"x": [float("nan")] * ctx.n}
    if mode == "missing":
        return {"y": [1.0] * ctx.n}
    return {"x": "not numbers"}  # type: ignore[dict-item]
