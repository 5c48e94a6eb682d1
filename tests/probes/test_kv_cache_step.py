"""kv_cache_step: mlx-lm's three caches on one workload, the growth arithmetic, and the same-cache guard."""

from __future__ import annotations

import pytest

from claimcheck.errors import ProbeError
from claimcheck.harness.timing import Timer
from claimcheck.probing.registry import ProbeContext, get_probe
from probes.decode import kv_cache_step as module
from probes.decode.kv_cache_step import CacheShape, StepWorkload, _grows, check_same_cache, kv_cache_step, run_steps

SMALL = CacheShape(batch=1, kv_heads=2, head_dim=8, layers=2)


def test_growth_is_flagged_only_when_the_steps_cross_a_chunk():
    assert _grows(1000, 8, 256) is False  # 1024 positions allocated, 1008 used
    assert _grows(1024, 8, 256) is True  # full after the prefill: the first step grows it
    assert _grows(1020, 4, 256) is False
    assert _grows(1020, 5, 256) is True


def test_concatenation_and_kvcache_return_the_same_keys_and_the_rotating_cache_its_window():
    import mlx.core as mx

    workload = StepWorkload(SMALL, context=20, steps=3, seed=1)
    clock = Timer().clock
    _, concat = run_steps(workload, workload.prefilled("concat", 20), attend=False, clock=clock)
    _, kv = run_steps(workload, workload.prefilled("kvcache", 20), attend=False, clock=clock)
    _, rotating = run_steps(workload, workload.prefilled("rotating", 10), attend=False, clock=clock)
    assert len(concat) == len(kv) == 2 * SMALL.layers  # keys and values per layer
    assert concat[0].shape == (1, 2, 23, 8)
    assert all(mx.array_equal(a, b).item() for a, b in zip(concat, kv))
    assert rotating[0].shape == (1, 2, 10, 8)
    # The newest position is in the rotating window too (written in place at its cursor).
    newest = workload.new[2, 0, 0]
    assert any(mx.array_equal(rotating[0][..., i : i + 1, :], newest).item() for i in range(10))


def test_attending_returns_one_output_per_layer():
    workload = StepWorkload(SMALL, context=8, steps=2, seed=2)
    _, out = run_steps(workload, workload.prefilled("kvcache", 8), attend=True, clock=Timer().clock)
    assert len(out) == SMALL.layers and out[0].shape == (1, 2, 1, 8)


def test_a_cache_that_stores_something_else_is_a_probe_error(monkeypatch):
    from mlx_lm.models.cache import KVCache

    class Doubling(KVCache):
        def update_and_fetch(self, keys, values):
            return super().update_and_fetch(keys * 2, values)

    real = module.make_cache
    monkeypatch.setattr(module, "make_cache", lambda arm, window: Doubling() if arm == "kvcache" else real(arm, window))
    with pytest.raises(ProbeError, match="different keys/values"):
        check_same_cache(StepWorkload(SMALL, context=8, steps=2, seed=3), 8)


def test_probe_smoke_interleaves_the_arms():
    ctx = ProbeContext(n=2)
    out = kv_cache_step(ctx, context=40, steps=2, kv_heads=2, head_dim=8, layers=2)
    assert set(out) == {"concat_ms", "kvcache_ms", "rotating_ms"}
    assert all(len(v) == 2 and all(t > 0 for t in v) for v in out.values())
    assert ctx.artifacts["order"] == ["concat", "kvcache", "rotating", "rotating", "kvcache", "concat"]
    assert ctx.info["window"] == 40 and ctx.info["kvcache_grows"] is False


def test_arms_are_checked():
    with pytest.raises(ValueError, match="subset"):
        kv_cache_step(ProbeContext(n=1), context=8, arms=["concat", "paged"])
    assert set(get_probe("kv_cache_step").outputs) == {"concat_ms", "kvcache_ms", "rotating_ms"}
