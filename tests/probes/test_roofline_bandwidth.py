"""Bandwidth probes: byte arithmetic, the lazy-eval guard, and tiny smoke runs of every probe."""

from __future__ import annotations

import pytest

from claimcheck.errors import ProbeError
from claimcheck.harness.timing import Timer, check_bandwidth, gbps, read_ceiling_gbps
from claimcheck.probing.registry import ProbeContext, get_probe
from probes.decode import bandwidth
from probes.decode.bandwidth import gemv, lazy_trap, make_weights, op_chain, qmv, quantized_row_bytes, raw_read


def test_quantized_row_bytes():
    # K=4096, 4-bit: 2048 packed bytes; 64 groups x (scale + bias) x 4 B (fp32) = 512 B; fp16: 256 B.
    assert quantized_row_bytes(4096, bits=4, group_size=64, scale_bytes=4) == 2048 + 512
    assert quantized_row_bytes(4096, bits=4, group_size=64, scale_bytes=2) == 2048 + 256
    assert quantized_row_bytes(2816, bits=8, group_size=32, scale_bytes=2) == 2816 + 88 * 4


def test_quantized_row_bytes_rejects_ragged_groups():
    with pytest.raises(ValueError, match="multiple"):
        quantized_row_bytes(100, bits=4, group_size=64, scale_bytes=2)


def test_made_weights_hold_the_bytes_they_report():
    arrays, nbytes, activation = make_weights(size_mib=1, k=512, bits=4, group_size=64, scale_dtype="float32")
    w, scales, biases = arrays
    rows = w.shape[0]
    assert rows % 8 == 0
    assert nbytes == rows * quantized_row_bytes(512, bits=4, group_size=64, scale_bytes=4)
    assert abs(nbytes - 2**20) <= 8 * quantized_row_bytes(512, bits=4, group_size=64, scale_bytes=4)  # rounded to 8 rows
    assert activation == "float32" and scales.shape == biases.shape == (rows, 8)


def test_quantized_gemv_computes_the_dequantized_product():
    # The probe's GEMV must do real work: compare with an explicit dequantize + matmul.
    import mlx.core as mx

    arrays, _, _ = make_weights(size_mib=0.05, k=256, bits=4, group_size=64, scale_dtype="float32")
    x = mx.random.normal((1, 256))
    got = gemv(x, arrays, bits=4, group_size=64)
    want = x @ mx.dequantize(*arrays, group_size=64, bits=4).T
    assert mx.allclose(got, want, rtol=1e-4, atol=1e-4).item()


def test_raw_read_smoke():
    ctx = ProbeContext(n=2)
    out = raw_read(ctx, size_mib=8, ceiling_mib=8)
    assert set(out) == {"gbps", "ceiling_gbps"}
    assert len(out["gbps"]) == len(out["ceiling_gbps"]) == 2
    assert all(v > 0 for values in out.values() for v in values)
    assert ctx.artifacts["order"] == ["device", "host", "host", "device"]


@pytest.mark.parametrize("arm", ["quantized", "dense"])
def test_qmv_smoke_and_units_agree(arm):
    ctx = ProbeContext(n=2)
    out = qmv(ctx, size_mib=1, cycle_mib=2, k=512, arm=arm, dense_dtype="float32", raw_mib=8)
    assert len(out["gbps"]) == len(out["raw_gbps"]) == len(out["ms"]) == 2
    # GB/s and ms per matrix describe the same timing: bytes per matrix / (ms / 1e3) / 1e9.
    per_matrix = ctx.info["matrix_bytes"]
    for rate, ms in zip(out["gbps"], out["ms"]):
        assert rate == pytest.approx(gbps(per_matrix, ms / 1e3), rel=1e-9)
    assert ctx.info["copies"] == 2
    assert ctx.artifacts["order"] == ["gemv", "raw", "raw", "gemv"]


def test_op_chain_smoke():
    out = op_chain(ProbeContext(n=2), ops=50)
    assert len(out["us_per_op"]) == 2
    for total, built, evaluated in zip(out["us_per_op"], out["build_us_per_op"], out["eval_us_per_op"]):
        assert total == pytest.approx(built + evaluated)
        assert 0 < built < total


def test_lazy_trap_reports_more_than_the_ceiling_and_the_guard_catches_it():
    out = lazy_trap(ProbeContext(n=2), size_mib=1, cycle_mib=4, k=512, ceiling_mib=8)
    assert all(t > c for t, c in zip(out["trap_gbps"], out["ceiling_gbps"]))
    with pytest.raises(ProbeError, match="outputs were not evaluated"):
        check_bandwidth(out["trap_gbps"], max(out["ceiling_gbps"]), what="lazy trap")


def test_a_probe_that_forgets_to_evaluate_is_a_probe_error():
    # The same GEMV chain as qmv, timed by a timer whose evaluation step was forgotten.
    import mlx.core as mx

    weights = [make_weights(size_mib=2, k=512)[0] for _ in range(16)]
    nbytes = sum(a.nbytes for w in weights for a in w)
    x = mx.random.normal((1, 512))
    mx.eval(x)
    forgetful = Timer(evaluate=lambda outputs: None)
    seconds = forgetful.time(lambda: [gemv(x, w, bits=4, group_size=64) for w in weights])
    with pytest.raises(ProbeError, match="outputs were not evaluated"):
        check_bandwidth([gbps(nbytes, seconds)], read_ceiling_gbps(nbytes / 2**20), what="forgetful qmv")


def test_probes_are_registered_with_their_outputs():
    assert set(get_probe("qmv").outputs) == {"gbps", "raw_gbps", "ms"}
    assert set(get_probe("lazy_trap").outputs) == {"trap_gbps", "ceiling_gbps"}
    assert get_probe("raw_read").function is bandwidth.raw_read
