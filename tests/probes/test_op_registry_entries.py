"""The quantized-matmul families and the low-precision references that claims' controls rely on."""

from __future__ import annotations

import pytest

from claimcheck.probing.registry import ProbeContext
from probes.ops.op_pair import op_pair
from probes.ops.op_registry import get_op


@pytest.mark.parametrize("bits", [4, 8])
def test_qmm_family_makes_the_test_shaped_inputs(bits):
    import mlx.core as mx
    import numpy as np

    entry = get_op(f"qmm{bits}_quantized")
    x, packed, scales, biases, dense, w = entry.make_inputs([3, 128, 16], "float32", mx.random.key(0))
    assert (x.shape, w.shape, dense.shape) == ((3, 128), (16, 128), (16, 128))
    assert scales.shape == (16, 2) and scales.dtype == mx.float32
    # Both sides are drawn as N(0, 1) / sqrt(k): their standard deviation is near 1 / sqrt(128) = 0.088.
    assert 0.06 < float(np.asarray(w).std()) < 0.12 and 0.05 < float(np.asarray(x).std()) < 0.13
    for role in ("quantized", "dequantized", "original"):
        out = get_op(f"qmm{bits}_{role}").fn(x, packed, scales, biases, dense, w)
        assert out.shape == (3, 16) and out.dtype == mx.float32


def test_qmm_family_refuses_k_off_the_group():
    import mlx.core as mx

    with pytest.raises(ValueError, match="family `qmm4` needs k divisible by 64, got 100"):
        get_op("qmm4_quantized").make_inputs([2, 100, 8], "float32", mx.random.key(0))


def test_quantization_error_grows_as_bits_fall():
    """Against the original weight, 4-bit rounding errs more than 8-bit, and neither is exact."""
    four = op_pair(ProbeContext(n=1, seed=1), a="qmm4_original", b="qmm4_dequantized", shape=[8, 256, 64])
    eight = op_pair(ProbeContext(n=1, seed=1), a="qmm8_original", b="qmm8_dequantized", shape=[8, 256, 64])
    assert four["max_abs_error"][0] > 4 * eight["max_abs_error"][0] > 0


@pytest.mark.parametrize("reference, low", [("rms_norm_reference", "rms_norm_reference_bf16"),
                                            ("layer_norm_reference", "layer_norm_reference_bf16")])
def test_bfloat16_references_lose_precision_on_float32_inputs(reference, low):
    out = op_pair(ProbeContext(n=1, seed=2), a=reference, b=low, shape=[4, 256], dtype="float32")
    # bfloat16 keeps 8 bits of mantissa: outputs near 1-4 round by up to about 1e-2.
    assert 1e-4 < out["max_abs_error"][0] < 0.2


def test_compiled_layer_norm_is_the_same_family_as_the_reference():
    assert get_op("layer_norm_reference_compiled").family == get_op("layer_norm_reference").family == "layer_norm"


def test_silu_is_far_from_gelu():
    out = op_pair(ProbeContext(n=1, seed=4), a="gelu", b="silu", shape=[4, 1024])
    assert out["max_abs_error"][0] > 0.05
