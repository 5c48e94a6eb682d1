"""One decode step's KV-cache update: concatenation vs mlx-lm's KVCache vs its RotatingKVCache.

A decode step appends one position to every layer's keys and values. Growing the arrays by
concatenation copies the whole cache each step, so its cost rises with the context; mlx-lm's
``KVCache`` preallocates in chunks of ``KVCache.step`` positions and writes the new position in
place; ``RotatingKVCache`` keeps a fixed window and overwrites the oldest position. The three arms
are mlx-lm's own classes (``ConcatenateKVCache``, ``KVCache``, ``RotatingKVCache``), each restored
to the same prefilled context before its timed steps, in ABBA order across rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from claimcheck.api import Output, ProbeContext, ProbeError, Timer, interleaved_order, mlx_core, probe

ARMS = ("concat", "kvcache", "rotating")


@dataclass(frozen=True)
class CacheShape:
    """The per-layer key/value layout: ``[batch, kv_heads, positions, head_dim]`` for ``layers`` layers."""

    batch: int = 1
    kv_heads: int = 8
    head_dim: int = 64
    layers: int = 1
    dtype: str = "float32"


def make_cache(arm: str, window: int) -> Any:
    """A fresh mlx-lm cache object for ``arm``."""
    from mlx_lm.models.cache import ConcatenateKVCache, KVCache, RotatingKVCache

    if arm == "concat":
        return ConcatenateKVCache()
    if arm == "kvcache":
        return KVCache()
    if arm == "rotating":
        return RotatingKVCache(max_size=window)
    raise ValueError(f"unknown cache arm {arm!r}; expected one of {', '.join(ARMS)}")


class StepWorkload:
    """The prefill and the new positions every arm sees: the same arrays in every round."""

    def __init__(self, shape: CacheShape, *, context: int, steps: int, seed: int) -> None:
        mx = mlx_core()
        dtype = getattr(mx, shape.dtype)
        key = mx.random.key(seed)
        kp, ks, kq = mx.random.split(key, 3)
        full = (shape.layers, 2, shape.batch, shape.kv_heads)
        self.prefill = mx.random.normal((*full, context, shape.head_dim), key=kp).astype(dtype)
        self.new = mx.random.normal((steps, *full, 1, shape.head_dim), key=ks).astype(dtype)
        self.query = mx.random.normal((shape.batch, shape.kv_heads, 1, shape.head_dim), key=kq).astype(dtype)
        mx.eval(self.prefill, self.new, self.query)
        self.shape, self.context, self.steps = shape, context, steps

    def prefilled(self, arm: str, window: int) -> list[Any]:
        """One cache per layer holding the ``context`` prefill positions, evaluated (untimed)."""
        mx = mlx_core()
        caches = [make_cache(arm, window) for _ in range(self.shape.layers)]
        for layer, cache in enumerate(caches):
            # Own copies, as a prefill's projections would be: a cache that keeps the array it was
            # given must be the only holder of it, or its first in-place write becomes a copy.
            cache.update_and_fetch(self.prefill[layer, 0] * 1, self.prefill[layer, 1] * 1)
        mx.eval([c.state for c in caches])
        return caches


def run_steps(workload: StepWorkload, caches: list[Any], *, attend: bool, clock: Callable[[], float]) -> tuple[float, list[Any]]:
    """Seconds for ``steps`` decode-step updates, each evaluated before the next (as decode does).

    Nothing fetched in one step is still referenced when the next step updates the cache, as in
    a model's forward pass: a live view of the old buffer would stop MLX from updating it in
    place and turn KVCache's write into a copy. Only the last step's outputs are returned.
    """
    mx = mlx_core()
    scale = workload.shape.head_dim ** -0.5
    outputs: list[Any] = []
    start = clock()
    for step in range(workload.steps):
        outputs = []
        for layer, cache in enumerate(caches):
            fetched = cache.update_and_fetch(workload.new[step, layer, 0], workload.new[step, layer, 1])
            if attend:
                outputs.append(mx.fast.scaled_dot_product_attention(workload.query, *fetched, scale=scale))
            else:
                outputs.extend(fetched)
            del fetched
        mx.eval(outputs)
        if step + 1 < workload.steps:
            outputs = []
    mx.synchronize()
    return clock() - start, outputs


def check_same_cache(workload: StepWorkload, window: int) -> None:
    """Concatenation and KVCache must hold the same keys and values after the steps (a probe error otherwise)."""
    mx = mlx_core()
    clock = Timer().clock
    _, concat = run_steps(workload, workload.prefilled("concat", window), attend=False, clock=clock)
    _, kv = run_steps(workload, workload.prefilled("kvcache", window), attend=False, clock=clock)
    for a, b in zip(concat, kv):
        if a.shape != b.shape or not mx.array_equal(a, b).item():
            raise ProbeError("ConcatenateKVCache and KVCache returned different keys/values for the same steps")


@probe(
    "kv_cache_step",
    outputs={f"{arm}_ms": Output("ms/step", False, f"{arm} arm: one decode step's cache update, all layers") for arm in ARMS},
)
def kv_cache_step(
    ctx: ProbeContext,
    *,
    context: int = 1000,
    steps: int = 8,
    arms: Sequence[str] = ARMS,
    window: int | None = None,
    batch: int = 1,
    kv_heads: int = 8,
    head_dim: int = 64,
    layers: int = 1,
    dtype: str = "float32",
    attend: bool = False,
) -> dict[str, list[float]]:
    """Per-step time of a KV-cache append under concatenation, KVCache and RotatingKVCache, by context.

    Args:
        context: positions in the cache before the timed steps. KVCache grows by a chunk of
            ``KVCache.step`` (256) positions when a step finds it full, once per 256 steps; a
            context whose timed steps cross a multiple of 256 (e.g. 1024) times that growth in
            every round (``info["kvcache_grows"]`` says whether they do).
        steps: decode steps timed per round (each evaluated); the figure is per step.
        arms: which of ``concat``, ``kvcache``, ``rotating`` to run.
        window: the rotating cache's size; by default ``context`` (a full window, overwritten in place).
        batch, kv_heads, head_dim, layers, dtype: the cache layout (``layers`` caches per step).
        attend: also run one query's attention over the fetched keys/values in each step.
    """
    unknown = [a for a in arms if a not in ARMS]
    if unknown or not arms:
        raise ValueError(f"`arms` must be a non-empty subset of {list(ARMS)}, got {list(arms)}")
    if context < 1 or steps < 1:
        raise ValueError(f"`context` and `steps` must be >= 1, got {context} and {steps}")
    size = window or context
    shape = CacheShape(batch=batch, kv_heads=kv_heads, head_dim=head_dim, layers=layers, dtype=dtype)
    workload = StepWorkload(shape, context=context, steps=steps, seed=ctx.seed % 2**32)
    timer = Timer()
    if ctx.look == 0:
        check_same_cache(workload, size)
        for arm in arms:  # warm-up on the exact shapes timed
            run_steps(workload, workload.prefilled(arm, size), attend=attend, clock=timer.clock)
    out: dict[str, list[float]] = {f"{arm}_ms": [] for arm in arms}
    order: list[str] = []
    for round_arms in interleaved_order(list(arms), ctx.n):
        for arm in round_arms:
            caches = workload.prefilled(arm, size)
            seconds, _ = run_steps(workload, caches, attend=attend, clock=timer.clock)
            out[f"{arm}_ms"].append(seconds / steps * 1e3)
            order.append(arm)
    mx = mlx_core()
    ctx.artifacts["order"] = order
    ctx.info.update(
        {"context": context, "steps": steps, "window": size, "layout": [batch, kv_heads, "positions", head_dim],
         "layers": layers, "dtype": dtype, "attend": attend, "kvcache_chunk": _kv_step(),
         "kvcache_grows": _grows(context, steps, _kv_step()),
         "cache_bytes_per_arm": int(workload.prefill.nbytes), "device": str(mx.default_device())}
    )
    return out


def _grows(context: int, steps: int, chunk: int) -> bool:
    """Whether KVCache, prefilled to ``context`` in one block, grows during ``steps`` appends."""
    allocated = -(-context // chunk) * chunk
    return context + steps > allocated


def _kv_step() -> int:
    from mlx_lm.models.cache import KVCache

    return int(KVCache.step)
