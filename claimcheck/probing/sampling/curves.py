"""Log-probability transfer curves: a monotone cubic map applied to next-token log-probs.

A curve is drawn as control points ``(x_pct, y_pct)`` in percent probability.
Each point maps to the knot ``(ln(x_pct/100), ln(y_pct/100))`` (percentages
clamped at 1e-9 first), and a monotone cubic Hermite interpolant runs through
the knots. Sampling then draws from ``softmax(curve(logprobs))``.

Tangents follow Fritsch-Carlson (the PCHIP rule): interior tangents are the
weighted harmonic mean of the neighbouring secants (0 where the secants change
sign or one is 0). The end tangents are the end secants themselves.
``scipy.interpolate.PchipInterpolator`` uses a three-point end formula instead;
we keep the end-secant rule because it is the one the original sampler used, so
the same control points give the same distribution. The interior knots agree
with scipy exactly (the tests check this).

Outside the knots the curve is linear: below the lowest knot with slope
``max(m_0, 1)`` so the deep tail stays at least as suppressed as it was, above
the highest knot with the top tangent.

The interpolant is stored as ``y = x + delta(x)`` where ``delta`` is the
Hermite interpolant of ``y_k - x_k`` with tangents ``m_k - 1``. That is the same
cubic, but the identity curve then maps every log-prob to itself bit for bit,
so the identity control really is plain temperature-1 sampling, not an
approximation of it. This module is pure numpy; :meth:`TransferCurve.apply`
evaluates on MLX arrays and imports MLX only when called.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

PCT_FLOOR = 1e-9


def knot_from_percent(x_pct: float, y_pct: float) -> tuple[float, float]:
    """Map one control point in percent probability to natural-log coordinates."""
    return (math.log(max(float(x_pct), PCT_FLOOR) / 100.0), math.log(max(float(y_pct), PCT_FLOOR) / 100.0))


def pchip_tangents(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Fritsch-Carlson tangents with end tangents equal to the end secants.

    Args:
        xs: strictly increasing knot abscissae (length >= 2).
        ys: knot ordinates, non-decreasing.

    Returns:
        The tangent at each knot.
    """
    h = np.diff(xs)
    d = np.diff(ys) / h
    m = np.empty_like(xs)
    m[0] = d[0]
    m[-1] = d[-1]
    for i in range(1, len(xs) - 1):
        d_prev, d_next = d[i - 1], d[i]
        if d_prev == 0.0 or d_next == 0.0 or (d_prev > 0) != (d_next > 0):
            m[i] = 0.0
            continue
        w1 = 2.0 * h[i] + h[i - 1]
        w2 = h[i] + 2.0 * h[i - 1]
        m[i] = (w1 + w2) / (w1 / d_prev + w2 / d_next)
    return m


@dataclass(frozen=True)
class TransferCurve:
    """A validated monotone transfer curve over natural-log probabilities.

    Build with :meth:`from_percent_points`; the constructor expects knots that
    are already validated.

    Attributes:
        name: a label for reports.
        points: the control points as given, in percent, sorted by x.
        xs, ys: the knots in natural-log coordinates.
        tangents: the Hermite tangent at each knot.
    """

    name: str
    points: tuple[tuple[float, float], ...]
    xs: np.ndarray = field(repr=False)
    ys: np.ndarray = field(repr=False)
    tangents: np.ndarray = field(repr=False)

    @classmethod
    def from_percent_points(cls, points: Iterable[Sequence[float]], *, name: str = "curve") -> "TransferCurve":
        """Validate control points and build the curve.

        Raises:
            ValueError: fewer than 2 points, a non-finite value, two points with
                the same x (after the 1e-9 % clamp), or a knot whose y is lower
                than the knot before it (the curve would not be monotone). The
                message names the offending knot.
        """
        raw = [tuple(float(v) for v in p) for p in points]
        for index, point in enumerate(raw):
            if len(point) != 2 or not all(math.isfinite(v) for v in point):
                raise ValueError(f"curve `{name}`: point {index} must be two finite numbers (x_pct, y_pct), got {point!r}")
            if point[0] < 0 or point[1] < 0:
                raise ValueError(f"curve `{name}`: point {index} {point!r} has a negative percentage")
        if len(raw) < 2:
            raise ValueError(f"curve `{name}`: expected at least 2 control points, got {len(raw)}")
        ordered = sorted(((x, y) for x, y in raw), key=lambda p: p[0])  # pairs now: each point has two
        knots = [knot_from_percent(*p) for p in ordered]
        for (p_prev, k_prev), (p_next, k_next) in zip(zip(ordered, knots), zip(ordered[1:], knots[1:])):
            if k_next[0] <= k_prev[0]:
                raise ValueError(
                    f"curve `{name}`: knots ({p_prev[0]:g}%, {p_prev[1]:g}%) and ({p_next[0]:g}%, {p_next[1]:g}%) "
                    f"have the same x after clamping at {PCT_FLOOR:g}%"
                )
            if k_next[1] < k_prev[1]:
                raise ValueError(
                    f"curve `{name}` is not monotone: knot ({p_next[0]:g}%, {p_next[1]:g}%) is lower than "
                    f"the knot before it ({p_prev[0]:g}%, {p_prev[1]:g}%)"
                )
        xs = np.array([k[0] for k in knots], dtype=np.float64)
        ys = np.array([k[1] for k in knots], dtype=np.float64)
        return cls(name=name, points=tuple(ordered), xs=xs, ys=ys, tangents=pchip_tangents(xs, ys))

    @property
    def is_identity(self) -> bool:
        """True when every knot lies on ``y = x`` (the control curve)."""
        return bool(np.array_equal(self.xs, self.ys))

    @property
    def low_tail_slope(self) -> float:
        """Slope of the linear extension below the lowest knot: ``max(m_0, 1)``."""
        return max(float(self.tangents[0]), 1.0)

    def delta_coefficients(self) -> np.ndarray:
        """Per-interval cubic coefficients of ``delta(x) = curve(x) - x``.

        Row ``k`` holds ``(c0, c1, c2, c3)`` with
        ``delta(x) = c0 + c1 s + c2 s^2 + c3 s^3`` for ``s = x - xs[k]`` on
        ``[xs[k], xs[k+1]]``.
        """
        dy = self.ys - self.xs
        dm = self.tangents - 1.0
        h = np.diff(self.xs)
        secant = np.diff(dy) / h
        c0 = dy[:-1]
        c1 = dm[:-1]
        c2 = (3.0 * secant - 2.0 * dm[:-1] - dm[1:]) / h
        c3 = (dm[:-1] + dm[1:] - 2.0 * secant) / h**2
        return np.stack([c0, c1, c2, c3], axis=1)

    def __call__(self, x: Any) -> np.ndarray:
        """Evaluate the curve on numpy input (float64); ``-inf`` maps to ``-inf``."""
        x = np.asarray(x, dtype=np.float64)
        coeffs = self.delta_coefficients()
        interval = np.clip(np.searchsorted(self.xs, x, side="right") - 1, 0, len(self.xs) - 2)
        s = x - self.xs[interval]
        c = coeffs[interval]
        with np.errstate(invalid="ignore"):
            inside = c[..., 0] + s * (c[..., 1] + s * (c[..., 2] + s * c[..., 3]))
            below = (self.ys[0] - self.xs[0]) + (self.low_tail_slope - 1.0) * (x - self.xs[0])
            above = (self.ys[-1] - self.xs[-1]) + (self.tangents[-1] - 1.0) * (x - self.xs[-1])
        delta = np.where(x < self.xs[0], below, np.where(x > self.xs[-1], above, inside))
        with np.errstate(invalid="ignore"):
            out = x + delta
        return np.where(np.isneginf(x), -np.inf, out)

    def apply_numpy(self, logprobs: np.ndarray) -> np.ndarray:
        """Evaluate on a numpy array in float32, fast for a large vocabulary.

        Most tokens of a real distribution lie below the lowest knot, where the
        curve is a line; the cubic is evaluated only on the few above it.
        """
        x = np.asarray(logprobs, dtype=np.float32)
        x0, x_top = np.float32(self.xs[0]), np.float32(self.xs[-1])
        finite = np.isfinite(x)
        out = np.array(x, copy=True)
        below_offset = np.float32(self.ys[0] - self.xs[0])
        below_slope = np.float32(self.low_tail_slope - 1.0)
        below = finite & (x < x0)
        with np.errstate(invalid="ignore"):  # -inf rows are masked out by `below`
            out = np.where(below, x + (below_offset + below_slope * (x - x0)), out)
        above = finite & (x > x_top)
        if above.any():
            xa = x[above]
            out[above] = xa + (np.float32(self.ys[-1] - self.xs[-1]) + np.float32(self.tangents[-1] - 1.0) * (xa - x_top))
        inside = finite & ~below & ~above
        if inside.any():
            xi = x[inside]
            coeffs = self.delta_coefficients().astype(np.float32)
            interval = np.searchsorted(self.xs[1:-1].astype(np.float32), xi, side="right")
            s = xi - self.xs[:-1].astype(np.float32)[interval]
            c = coeffs[interval]
            out[inside] = xi + (c[:, 0] + s * (c[:, 1] + s * (c[:, 2] + s * c[:, 3])))
        return out

    def apply(self, logprobs: Any) -> Any:
        """Evaluate the curve on an MLX array of log-probs (any shape), in float32.

        Masked entries (``-inf``) stay ``-inf``. The piecewise cubic is selected
        with comparisons against the interior knots, so the cost is a handful of
        elementwise ops whatever the vocabulary size.
        """
        import mlx.core as mx

        x = logprobs.astype(mx.float32)
        coeffs = self.delta_coefficients()
        interval = mx.zeros(x.shape, dtype=mx.int32)
        for knot in self.xs[1:-1]:
            interval = interval + (x >= float(knot)).astype(mx.int32)
        table = mx.array(coeffs.astype(np.float32))
        left = mx.array(self.xs[:-1].astype(np.float32))
        s = x - mx.take(left, interval)
        c0, c1, c2, c3 = (mx.take(table[:, j], interval) for j in range(4))
        inside = c0 + s * (c1 + s * (c2 + s * c3))
        x0, x_top = float(self.xs[0]), float(self.xs[-1])
        below = float(self.ys[0] - self.xs[0]) + float(self.low_tail_slope - 1.0) * (x - x0)
        above = float(self.ys[-1] - self.xs[-1]) + float(self.tangents[-1] - 1.0) * (x - x_top)
        delta = mx.where(x < x0, below, mx.where(x > x_top, above, inside))
        return mx.where(mx.isneginf(x), x, x + delta)

    def describe(self) -> dict[str, Any]:
        """JSON-able summary for artifacts."""
        return {
            "name": self.name,
            "points_pct": [list(p) for p in self.points],
            "knots_ln": [[float(a), float(b)] for a, b in zip(self.xs, self.ys)],
            "tangents": [float(m) for m in self.tangents],
            "low_tail_slope": self.low_tail_slope,
        }


NAMED_CURVE_POINTS: dict[str, tuple[tuple[float, float], ...]] = {
    # control: every knot on y = x, so sampling equals temperature 1
    "curve-id": ((1e-4, 1e-4), (0.1, 0.1), (1, 1), (9, 9), (100, 100)),
    # "gate the tail, open the head"
    "curve-router": ((1e-4, 1e-5), (0.1, 0.3), (1, 3), (9, 20), (100, 100)),
}


def named_curve(name: str) -> TransferCurve:
    """One of the named curves of the route experiment."""
    try:
        points = NAMED_CURVE_POINTS[name]
    except KeyError:
        raise ValueError(f"unknown curve `{name}`; known curves: {', '.join(sorted(NAMED_CURVE_POINTS))}") from None
    return TransferCurve.from_percent_points(points, name=name)
