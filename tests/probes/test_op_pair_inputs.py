"""op_pair's input distributions and its 0/1 bit-identity outputs."""

from __future__ import annotations

import numpy as np
import pytest

from claimcheck.probing.registry import ProbeContext
from probes.ops.op_inputs import distribution, distribution_problem, drawn_from, unary_inputs
from probes.ops.op_pair import op_pair


def _key(seed: int):
    import mlx.core as mx

    return mx.random.key(seed)


def test_uniform_inputs_lie_in_their_range_and_the_default_is_unchanged() -> None:
    with drawn_from(distribution({"dist": "uniform", "low": 2, "high": 3})):
        (x,) = unary_inputs([64, 64], "float32", _key(1))
    values = np.asarray(x)
    assert 2 <= values.min() and values.max() <= 3 and abs(values.mean() - 2.5) < 0.05
    (default,) = unary_inputs([64, 64], "float32", _key(1))
    with drawn_from(distribution({"dist": "normal", "mean": 0, "std": 1})):
        (named,) = unary_inputs([64, 64], "float32", _key(1))
    assert np.array_equal(np.asarray(default), np.asarray(named))  # N(0, 1) is the default, bit for bit
    with drawn_from(distribution({"dist": "normal", "mean": 5, "std": 0.5})):
        (shifted,) = unary_inputs([64, 64], "float32", _key(1))
    assert np.asarray(shifted) == pytest.approx(5 + 0.5 * np.asarray(default), abs=1e-5)


@pytest.mark.parametrize(("inputs", "message"), [
    ({"dist": "beta"}, "`inputs.dist` must be one of normal, uniform; got 'beta'"),
    ({"dist": "uniform", "std": 1}, "`inputs.std` is not a setting of `dist: uniform` (it takes: dist, high, low)"),
    ({"dist": "uniform", "low": 1, "high": 1}, "`inputs` needs low < high"),
    ({"dist": "normal", "std": 0}, "`inputs.std` must be positive"),
    ({"dist": "normal", "mean": "zero"}, "`inputs.mean` must be a finite number"),
    ([1, 2], "`inputs` must be a mapping"),
])
def test_a_bad_distribution_is_one_line(inputs: object, message: str) -> None:
    problem = distribution_problem(inputs)
    assert problem is not None and message in problem


def test_bitwise_outputs_are_zero_one_per_round_and_the_distribution_is_recorded() -> None:
    ctx = ProbeContext(n=4, seed=3)
    same = op_pair(ctx, a="gelu_erf", b="gelu_erf", shape=[8, 32], inputs={"dist": "uniform", "low": -1, "high": 1})
    assert same["bitwise_equal"] == [1.0] * 4 and same["bitwise_differs"] == [0.0] * 4
    assert ctx.info["inputs"] == {"dist": "uniform", "low": -1.0, "high": 1.0}
    other = op_pair(ProbeContext(n=3, seed=3), a="gelu", b="gelu_approx", shape=[8, 32])
    assert other["bitwise_equal"] == [0.0] * 3 and other["bitwise_differs"] == [1.0] * 3
    assert all(m > 0 for m in other["bitwise_mismatch"])
