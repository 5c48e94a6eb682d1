"""moe_gather: every arm computes the same expert MLP, and the probe runs at tiny shapes."""

from __future__ import annotations

import pytest

from claimcheck.probing.registry import ProbeContext
from probes.decode.moe import _layer_weights, expert_layer, moe_gather

TINY = dict(hidden=128, expert=64, n_experts=8, top_k=2, scale_dtype="float32")


def test_gather_dense_and_merged_arms_compute_the_same_numbers():
    # The arms are only comparable if they do the same math on the same bytes.
    import mlx.core as mx

    chosen = [1, 5]
    layer = _layer_weights(128, 64, 8, chosen, bits=4, group_size=64, scale_dtype="float32")
    x = mx.random.normal((1, 128))
    idx = mx.array([chosen], dtype=mx.uint32)
    results = {arm: expert_layer(mx, arm, x, layer, idx, expert=64, bits=4, group_size=64) for arm in ("gather", "dense", "merged")}
    assert results["gather"].shape == (1, 128)
    # fp32 accumulations in different orders: 1e-4 relative is ~1000 ulps, far below a wrong expert's error.
    for arm in ("dense", "merged"):
        assert mx.allclose(results[arm], results["gather"], rtol=1e-4, atol=1e-5).item(), arm


def test_repeated_arm_uses_one_expert_top_k_times():
    import mlx.core as mx

    layer = _layer_weights(128, 64, 8, [3, 6], bits=4, group_size=64, scale_dtype="float32")
    x = mx.random.normal((1, 128))
    one = expert_layer(mx, "gather", x, layer, mx.array([[3]], dtype=mx.uint32), expert=64, bits=4, group_size=64)
    repeated = expert_layer(mx, "repeated", x, layer, mx.array([[3, 3]], dtype=mx.uint32), expert=64, bits=4, group_size=64)
    assert mx.allclose(repeated, 2 * one, rtol=1e-5, atol=1e-5).item()


def test_smoke_all_arms():
    ctx = ProbeContext(n=2)
    out = moe_gather(ctx, **TINY, layers=2)
    for arm in ("gather", "repeated", "dense", "merged"):
        assert len(out[f"{arm}_ms"]) == 2 and len(out[f"{arm}_gbps"]) == 2
    # nominal bytes: 2 layers x 2 experts x 3 matrices of 64x128 4-bit weights, fp32 scales+biases per 64.
    per_matrix = 64 * 128 // 2 + 64 * 2 * 2 * 4
    assert ctx.info["bytes_per_layer"] == 2 * 3 * per_matrix
    assert ctx.artifacts["order"] == ["gather", "repeated", "dense", "merged", "merged", "dense", "repeated", "gather"]


def test_arms_subset_and_validation():
    out = moe_gather(ProbeContext(n=1), **TINY, arms=["gather", "dense"])
    assert set(out) == {"gather_ms", "gather_gbps", "dense_ms", "dense_gbps"}
    with pytest.raises(ValueError, match="arms"):
        moe_gather(ProbeContext(n=1), **TINY, arms=["gather", "sparse"])
