"""Matched random draws: one uniform number per (seed, step), whatever the batch.

Every sampling policy draws its token at step ``t`` of a sequence by inverse
CDF from ``u(seed, t)``. Because ``u`` depends on nothing but the seed and the
step, a sequence gets the same draws alone or inside any batch, and two
policies that produce the same distribution produce the same token.

MLX's ``uniform(shape=(n,))`` is not prefix-stable in ``n`` (the first values
change when ``n`` changes), so the stream is cut into fixed blocks of
:data:`BLOCK` draws, each from its own key: block ``b`` of seed ``s`` uses the
key reached by splitting ``key(s)`` ``b`` times.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

BLOCK = 256


@lru_cache(maxsize=8192)
def _block(seed: int, block: int) -> np.ndarray:
    import mlx.core as mx

    key = mx.random.key(int(seed))
    for _ in range(block):
        key = mx.random.split(key, 2)[1]
    block_key = mx.random.split(key, 2)[0]
    values = mx.random.uniform(shape=(BLOCK,), key=block_key, dtype=mx.float32)
    out = np.array(values, dtype=np.float64)
    out.setflags(write=False)
    return out


def uniform_draw(seed: int, step: int) -> float:
    """The uniform number in [0, 1) that seed ``seed`` uses at step ``step``."""
    if step < 0:
        raise ValueError(f"`step` must be >= 0, got {step}")
    return float(_block(int(seed), step // BLOCK)[step % BLOCK])


def uniform_draws(seeds: Sequence[int], steps: Sequence[int] | int) -> np.ndarray:
    """Vector of ``u(seed_b, step_b)`` for a batch (``steps`` may be one shared step)."""
    if isinstance(steps, int):
        steps = [steps] * len(seeds)
    if len(steps) != len(seeds):
        raise ValueError(f"expected one step per seed, got {len(steps)} steps for {len(seeds)} seeds")
    return np.array([uniform_draw(s, t) for s, t in zip(seeds, steps)], dtype=np.float64)
