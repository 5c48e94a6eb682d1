"""op_pair: the op registry, the error measures on known arrays, and the built-in pairs' agreement."""

from __future__ import annotations

import pytest

from claimcheck.errors import ProbeError
from claimcheck.probing.registry import ProbeContext, get_probe
from probes.ops import op_registry
from probes.ops.op_pair import compare_outputs, op_pair, round_order
from probes.ops.op_registry import OpEntry, UnknownOpError, get_op, register_op, registered_ops, unary_inputs


def _plus_quarter(x):
    return x + 0.25


def _identity(x):
    return x * 1


@pytest.fixture
def user_ops():
    """Two ops registered the way a user's own probe module would, removed afterwards."""
    added = [register_op(OpEntry("test_identity", "unary", unary_inputs, _identity)),
             register_op(OpEntry("test_plus_quarter", "unary", unary_inputs, _plus_quarter))]
    yield added
    for entry in added:
        op_registry._OPS.pop(entry.name)


def test_compare_outputs_on_known_arrays():
    import mlx.core as mx

    a = mx.array([1.0, 2.0, 0.0, 0.0])
    b = mx.array([1.0, 2.5, 1e-7, -0.0])
    got = compare_outputs(a, b, rel_floor=1e-6)
    assert got.max_abs_error == pytest.approx(0.5)
    # 0.5 / 2 = 0.25 beats 1e-7 / max(0, 1e-6) = 0.1: the floor keeps the zero element from dominating.
    assert got.max_rel_error == pytest.approx(0.25)
    assert got.bitwise_mismatch == 3  # -0.0 differs from 0.0 in its bits though not in value


def test_compare_outputs_counts_bfloat16_bits():
    import mlx.core as mx

    a = mx.array([1.0, 1.0, 3.0]).astype(mx.bfloat16)
    b = mx.array([1.0, 1.0078125, 3.0]).astype(mx.bfloat16)  # one bf16 ulp above 1.0
    got = compare_outputs(a, b, rel_floor=1e-6)
    assert got.bitwise_mismatch == 1
    assert got.max_abs_error == pytest.approx(0.0078125)


def test_compare_outputs_refuses_different_shapes():
    import mlx.core as mx

    with pytest.raises(ProbeError, match="different shapes"):
        compare_outputs(mx.zeros((2,)), mx.zeros((3,)), rel_floor=1e-6)


def test_unknown_op_has_a_did_you_mean():
    with pytest.raises(UnknownOpError, match=r"unknown op `rms_norm_fats` \(did you mean `rms_norm_fast`\?\)"):
        get_op("rms_norm_fats")


def test_one_name_for_two_functions_is_refused_naming_both(user_ops):
    with pytest.raises(ValueError, match=r"op `test_identity` is registered twice .*_identity and .*_plus_quarter"):
        register_op(OpEntry("test_identity", "unary", unary_inputs, _plus_quarter))
    register_op(OpEntry("test_identity", "unary", unary_inputs, _identity))  # the same function again is fine


def test_ops_of_different_families_cannot_be_paired():
    with pytest.raises(ValueError, match="take different inputs"):
        op_pair(ProbeContext(n=1), a="rms_norm_fast", b="matmul", shape=[4, 8])


def test_a_users_pair_runs_interleaved_with_the_error_it_has(user_ops):
    ctx = ProbeContext(n=4, seed=3)
    out = op_pair(ctx, a="test_identity", b="test_plus_quarter", shape=[8, 64], repeats=2)
    assert all(len(v) == 4 for v in out.values())
    assert ctx.artifacts["order"] == (["a", "b", "b", "a"] + ["b", "a", "a", "b"]) * 2
    # x + 0.25 - x in float32 is 0.25 up to one rounding of x + 0.25 (|x| < 8: ulp <= 1e-6).
    assert all(e == pytest.approx(0.25, abs=1e-6) for e in out["max_abs_error"])
    assert all(m > 256 for m in out["bitwise_mismatch"])  # almost all 512 elements move
    assert all(t > 0 for t in out["a_ms"] + out["b_ms"])


def test_round_order_balances_positions_within_and_across_rounds():
    assert round_order(0, 1) == ["a", "b"] and round_order(1, 1) == ["b", "a"]
    assert round_order(0, 3) == ["a", "b", "b", "a", "a", "b"]
    for index in range(2):
        calls = round_order(index, 4)
        positions = {arm: sum(i for i, name in enumerate(calls) if name == arm) for arm in "ab"}
        assert calls.count("a") == calls.count("b") == 4 and positions["a"] == positions["b"]


def test_rounds_draw_different_inputs_and_reruns_the_same():
    first = op_pair(ProbeContext(n=3, seed=5), a="gelu", b="gelu_approx", shape=[4, 256])
    again = op_pair(ProbeContext(n=3, seed=5), a="gelu", b="gelu_approx", shape=[4, 256])
    assert first["max_abs_error"] == again["max_abs_error"]
    assert len(set(first["max_rel_error"])) == 3


# Pairs that compute the same function: float32 agreement within a tolerance far below any layout
# or formula mistake (a wrong RoPE layout, a missing centring, a wrong scale give errors of order 1).
SAME_FUNCTION = [
    ("rms_norm_reference", "rms_norm_fast", [4, 256], 1e-5),
    ("rms_norm_reference", "rms_norm_reference_compiled", [4, 256], 1e-5),
    ("layer_norm_reference", "layer_norm_fast", [4, 256], 1e-5),
    ("sdpa_reference", "sdpa_fast", [1, 2, 16, 32], 1e-5),
    ("sdpa_reference_causal", "sdpa_fast_causal", [1, 2, 16, 32], 1e-5),
    ("rope_reference", "rope_fast", [1, 2, 16, 32], 1e-4),
    ("rope_reference_traditional", "rope_fast_traditional", [1, 2, 16, 32], 1e-4),
    ("dequantized_matmul", "quantized_matmul", [2, 128, 64], 1e-4),
    ("matmul", "matmul_rows", [4, 64, 32], 1e-5),
    ("gelu", "gelu_erf", [4, 256], 1e-6),
    ("gelu_erf", "gelu_erf_compiled", [4, 256], 1e-6),
    ("softmax_reference", "softmax_precise", [4, 256], 1e-6),
]


@pytest.mark.parametrize(("a", "b", "shape", "tolerance"), SAME_FUNCTION, ids=[f"{a}-{b}" for a, b, _, _ in SAME_FUNCTION])
def test_built_in_pairs_that_compute_the_same_function_agree(a, b, shape, tolerance):
    out = op_pair(ProbeContext(n=2), a=a, b=b, shape=shape)
    assert max(out["max_abs_error"]) <= tolerance


def test_the_two_rope_layouts_disagree():
    # The agreement test above can fail: the halves and pairs layouts are different rotations.
    out = op_pair(ProbeContext(n=1), a="rope_reference", b="rope_fast_traditional", shape=[1, 2, 16, 32])
    assert out["max_abs_error"][0] > 0.1


def test_causal_and_unmasked_attention_disagree():
    out = op_pair(ProbeContext(n=1), a="sdpa_reference", b="sdpa_fast_causal", shape=[1, 2, 16, 32])
    assert out["max_abs_error"][0] > 0.1


def test_gelu_approximations_differ_by_a_small_nonzero_amount():
    out = op_pair(ProbeContext(n=1), a="gelu", b="gelu_approx", shape=[4, 1024])
    assert 0 < out["max_abs_error"][0] < 1e-3  # the tanh form is within ~5e-4 of the exact GELU


def test_shapes_are_checked_per_family():
    with pytest.raises(ValueError, match=r"family `matmul` takes shape \[m, k, n\]"):
        op_pair(ProbeContext(n=1), a="matmul", b="matmul_rows", shape=[4, 8])
    with pytest.raises(ValueError, match="k divisible by 64"):
        op_pair(ProbeContext(n=1), a="quantized_matmul", b="dequantized_matmul", shape=[1, 100, 8])


def test_every_entry_has_a_description_and_the_probe_its_outputs():
    assert all(entry.description for entry in registered_ops().values() if not entry.name.startswith("test_"))
    assert set(get_probe("op_pair").outputs) == {"a_ms", "b_ms", "max_abs_error", "max_rel_error", "bitwise_mismatch",
                                                 "bitwise_equal", "bitwise_differs"}
