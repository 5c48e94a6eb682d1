"""Transfer-curve maths: knots, tangents, monotonicity, tails, the identity, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.interpolate import CubicHermiteSpline, PchipInterpolator

from claimcheck.probing.sampling.curves import NAMED_CURVE_POINTS, TransferCurve, knot_from_percent, named_curve, pchip_tangents


def test_knots_are_natural_logs_of_percent_probabilities() -> None:
    # 100 % -> ln(1) = 0; 1 % -> ln(0.01); a 0 % point is clamped at 1e-9 % -> ln(1e-11).
    assert knot_from_percent(100, 1) == (0.0, math.log(0.01))
    assert knot_from_percent(0, 0) == (math.log(1e-11), math.log(1e-11))


def test_curve_passes_through_every_knot() -> None:
    curve = named_curve("curve-router")
    # Exactly (up to float64 evaluation of the cubic at s = 0 or s = h): 1e-12 absolute.
    np.testing.assert_allclose(curve(curve.xs), curve.ys, rtol=0, atol=1e-12)
    np.testing.assert_allclose(curve.apply_numpy(curve.xs.astype(np.float32)), curve.ys, rtol=0, atol=2e-6)


def test_interior_tangents_match_scipy_pchip_and_ends_are_end_secants() -> None:
    curve = named_curve("curve-router")
    scipy_slopes = PchipInterpolator(curve.xs, curve.ys).derivative()(curve.xs)
    # Same Fritsch-Carlson harmonic mean in the interior: agreement to rounding.
    np.testing.assert_allclose(curve.tangents[1:-1], scipy_slopes[1:-1], rtol=1e-12)
    secants = np.diff(curve.ys) / np.diff(curve.xs)
    assert curve.tangents[0] == pytest.approx(secants[0], rel=1e-15)
    assert curve.tangents[-1] == pytest.approx(secants[-1], rel=1e-15)
    # ... which is where scipy differs (its three-point end rule), as the module documents.
    assert not np.isclose(scipy_slopes[0], secants[0])


def test_evaluation_is_the_hermite_cubic_through_knots_and_tangents() -> None:
    curve = named_curve("curve-router")
    reference = CubicHermiteSpline(curve.xs, curve.ys, curve.tangents)
    x = np.linspace(curve.xs[0], curve.xs[-1], 2001)
    np.testing.assert_allclose(curve(x), reference(x), rtol=0, atol=1e-10)


def test_tangent_is_zero_where_secants_change_sign_or_vanish() -> None:
    xs = np.array([0.0, 1.0, 2.0, 3.0])
    assert pchip_tangents(xs, np.array([0.0, 1.0, 1.0, 2.0]))[1] == 0.0  # flat segment after knot 1
    assert pchip_tangents(xs, np.array([0.0, 1.0, 0.5, 2.0]))[1] == 0.0  # sign change (validation rejects such curves)


@st.composite
def monotone_points(draw: st.DrawFn) -> list[tuple[float, float]]:
    count = draw(st.integers(min_value=2, max_value=7))
    exponents = sorted(draw(st.lists(st.floats(-8, 2), min_size=count, max_size=count, unique=True)))
    xs = [10**e for e in exponents]
    if any(b / a < 1.01 for a, b in zip(xs, xs[1:])):  # keep knots resolvable in float32
        xs = [10 ** (-8 + 10 * i / (count - 1)) for i in range(count)]
    steps = draw(st.lists(st.floats(0, 3), min_size=count, max_size=count))
    ys = np.cumsum(steps) - 9.0  # non-decreasing exponents, flat steps allowed
    return [(x, float(10**y)) for x, y in zip(xs, ys)]


@settings(max_examples=150, deadline=None)
@given(monotone_points())
def test_random_monotone_control_points_give_a_monotone_curve(points: list[tuple[float, float]]) -> None:
    curve = TransferCurve.from_percent_points(points)
    x = np.concatenate([np.linspace(curve.xs[0] - 20, curve.xs[-1] + 5, 4001), curve.xs])
    x.sort()
    y = curve(x)
    # Non-decreasing up to float64 rounding of the cubic (1e-9 of the value range).
    assert np.all(np.diff(y) >= -1e-9 * max(1.0, np.ptp(y)))
    np.testing.assert_allclose(curve(curve.xs), curve.ys, atol=1e-9)
    # The float32 path agrees with the float64 reference up to float32 rounding of x (relative
    # 6e-8, so ~4e-6 at |x| = 60) times the steepest slope, plus rounding of the result.
    fast = curve.apply_numpy(x.astype(np.float32))
    steepest = 1.0 + np.max(np.abs(np.diff(curve.ys) / np.diff(curve.xs)))
    tolerance = 1.2e-7 * max(1.0, np.max(np.abs(x))) * steepest + 1.2e-7 * max(1.0, np.max(np.abs(y)))
    np.testing.assert_allclose(fast, y, rtol=0, atol=4 * tolerance)


def test_low_tail_is_linear_with_slope_at_least_one() -> None:
    curve = named_curve("curve-router")
    x0, y0 = curve.xs[0], curve.ys[0]
    slope = max(curve.tangents[0], 1.0)
    for depth in (1.0, 10.0, 40.0):
        assert curve(x0 - depth) == pytest.approx(y0 - slope * depth, abs=1e-9)
    # A curve whose first segment is shallower than 1 still suppresses the tail at slope 1.
    shallow = TransferCurve.from_percent_points([(1e-4, 1e-2), (100, 100)])
    assert shallow.tangents[0] < 1
    assert shallow(shallow.xs[0] - 5) == pytest.approx(shallow.ys[0] - 5.0, abs=1e-9)


def test_high_tail_is_linear_with_the_top_tangent() -> None:
    curve = TransferCurve.from_percent_points([(1, 2), (50, 60)])
    top = curve.xs[-1]
    assert curve(top + 0.5) == pytest.approx(curve.ys[-1] + curve.tangents[-1] * 0.5, abs=1e-12)


def test_minus_infinity_stays_minus_infinity() -> None:
    curve = named_curve("curve-router")
    x = np.array([-np.inf, -3.0], dtype=np.float32)
    assert np.isneginf(curve(x)[0]) and np.isfinite(curve(x)[1])
    assert np.isneginf(curve.apply_numpy(x)[0])


def test_identity_curve_is_exactly_the_identity() -> None:
    curve = named_curve("curve-id")
    assert curve.is_identity
    rng = np.random.default_rng(0)
    x = np.concatenate([-rng.exponential(5, 10000), [-40.0, -1e-7, 0.0]]).astype(np.float32)
    assert np.array_equal(curve.apply_numpy(x), x)  # bit for bit, not approximately
    assert np.array_equal(curve(x.astype(np.float64)), x.astype(np.float64))


def test_identity_curve_is_exact_in_mlx_too() -> None:
    mx = pytest.importorskip("mlx.core")
    curve = named_curve("curve-id")
    x = -np.random.default_rng(1).exponential(5, (4, 1000)).astype(np.float32)
    assert np.array_equal(np.array(curve.apply(mx.array(x))), x)


def test_mlx_and_numpy_evaluations_agree() -> None:
    mx = pytest.importorskip("mlx.core")
    curve = named_curve("curve-router")
    x = -np.random.default_rng(2).exponential(4, (3, 5000)).astype(np.float32)
    np.testing.assert_allclose(np.array(curve.apply(mx.array(x))), curve(x), rtol=0, atol=2e-5)


def test_router_curve_gates_the_tail_and_opens_the_head() -> None:
    curve = named_curve("curve-router")
    assert curve(math.log(1e-6)) < math.log(1e-6)  # a 1e-4 % token goes down
    assert curve(math.log(0.01)) > math.log(0.01)  # a 1 % token goes up
    assert dict(NAMED_CURVE_POINTS["curve-router"])[9] == 20


@pytest.mark.parametrize(
    ("points", "message"),
    [
        ([(1, 1), (9, 0.5), (100, 100)], r"not monotone: knot \(9%, 0.5%\) is lower than the knot before it \(1%, 1%\)"),
        ([(1, 1), (1, 2)], "same x"),
        ([(0, 1), (1e-10, 2)], "same x after clamping"),
        ([(1, 1)], "at least 2 control points"),
        ([(1, float("nan")), (2, 2)], "finite"),
        ([(1, -1), (2, 2)], "negative"),
    ],
)
def test_invalid_curves_are_rejected_naming_the_problem(points: list[tuple[float, float]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TransferCurve.from_percent_points(points, name="bad")


def test_points_are_sorted_by_x() -> None:
    curve = TransferCurve.from_percent_points([(100, 100), (1, 3), (0.1, 0.3)])
    assert [p[0] for p in curve.points] == [0.1, 1, 100]


def test_unknown_named_curve_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="curve-id, curve-router"):
        named_curve("curve-x")
