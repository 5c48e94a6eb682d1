"""``two_proportions``: the difference or ratio of two event rates, by the Miettinen–Nurminen score test.

scipy's ``barnard_exact`` and ``boschloo_exact`` are exact unconditional tests, but only of
*equal* rates (``p_a = p_b``, or one-sided ``p_a <= p_b``); a claim like "A's failure rate is at
most 2 points above B's" or "at most half of B's" needs a test of a non-zero difference or a
ratio other than 1, and an interval, which scipy does not offer (``relative_risk`` has only the
Katz interval, undefined at 0 events). So the score test is written here:

- the statistic at a null value ``d0`` (difference) or ``r0`` (ratio) divides the observed
  contrast by its standard error under the rates that maximise the likelihood *subject to the
  null* (Farrington–Manning's closed forms), times ``N / (N - 1)`` (Miettinen–Nurminen);
- the statistic is corrected for the contrast's skewness (Gart and Nam), which keeps one-sided
  levels near alpha with rare events (:func:`corrected_z`);
- the interval is the set of null values the same test does not reject (found with
  ``scipy.optimize.brentq``), so it lies above the threshold exactly when the test says so.

Because the standard error comes from the restricted rates, not the observed ones, 0 events in
one or both arms still give a finite statistic: 0 of 300 against 0 of 300 shows the difference
is below 0.02 (not that the rates are equal). At the null of no difference with 0 events in both
arms the statistic is 0/0 and the decision INCONCLUSIVE. At ``d0 = 0`` the statistic is the pooled
z of ``barnard_exact(pooled=True)`` times ``sqrt((N - 1) / N)`` (the tests check it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from scipy import optimize, special

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision, verdict_from

_EDGE = 1e-9  # null values this close to the parameter space's edge are the edge


@dataclass(frozen=True)
class Counts:
    """Events and trials of the two arms (``a`` is the numerator or minuend)."""

    events_a: int
    trials_a: int
    events_b: int
    trials_b: int

    @property
    def rate_a(self) -> float:
        """Observed rate of arm a."""
        return self.events_a / self.trials_a

    @property
    def rate_b(self) -> float:
        """Observed rate of arm b."""
        return self.events_b / self.trials_b


def _restricted_difference(c: Counts, d0: float) -> tuple[float, float]:
    """Rates ``(p_a, p_b)`` of largest likelihood with ``p_a - p_b = d0`` (Farrington–Manning's cubic)."""
    pa, pb = c.rate_a, c.rate_b
    theta = c.trials_b / c.trials_a
    a = 1 + theta
    b = -(1 + theta + pa + theta * pb + d0 * (theta + 2))
    cc = d0 * d0 + d0 * (2 * pa + theta + 1) + pa + theta * pb
    d = -pa * d0 * (1 + d0)
    v = b**3 / (27 * a**3) - b * cc / (6 * a * a) + d / (2 * a)
    u2 = b * b / (9 * a * a) - cc / (3 * a)
    u = math.copysign(math.sqrt(max(u2, 0.0)), v) if v != 0 else math.sqrt(max(u2, 0.0))
    if u == 0:
        ra = -b / (3 * a)
    else:
        w = (math.pi + math.acos(max(-1.0, min(1.0, v / u**3)))) / 3
        ra = 2 * u * math.cos(w) - b / (3 * a)
    ra = min(max(ra, max(d0, 0.0)), min(1.0, 1.0 + d0))
    return ra, ra - d0


def _restricted_ratio(c: Counts, r0: float) -> tuple[float, float]:
    """Rates ``(p_a, p_b)`` of largest likelihood with ``p_a = r0 * p_b`` (the quadratic's smaller root)."""
    na, nb, xa, xb = c.trials_a, c.trials_b, c.events_a, c.events_b
    qa = (na + nb) * r0
    qb = -(na * r0 + xa + nb + xb * r0)
    qc = xa + xb
    root = math.sqrt(max(qb * qb - 4 * qa * qc, 0.0))
    rb = (-qb - root) / (2 * qa)
    rb = min(max(rb, 0.0), min(1.0, 1.0 / r0))
    return r0 * rb, rb


def _moments(c: Counts, value: float, scale: str) -> tuple[float, float, float]:
    """Contrast minus its null value, its variance and third central moment under the restricted rates."""
    weight = 1.0 if scale == "difference" else value
    if scale == "difference":
        ra, rb = _restricted_difference(c, value)
        top = c.rate_a - c.rate_b - value
    else:
        ra, rb = _restricted_ratio(c, value)
        top = c.rate_a - value * c.rate_b
    na, nb = c.trials_a, c.trials_b
    var = ra * (1 - ra) / na + weight**2 * rb * (1 - rb) / nb
    third = ra * (1 - ra) * (1 - 2 * ra) / na**2 - weight**3 * rb * (1 - rb) * (1 - 2 * rb) / nb**2
    return top, var, third


def score_z(c: Counts, value: float, scale: str) -> float:
    """Miettinen–Nurminen z at the null ``difference = value`` or ``ratio = value``; NaN when 0/0.

    Large z means the data show the difference (or ratio) *above* ``value``.
    """
    total = c.trials_a + c.trials_b
    top, var, _ = _moments(c, value, scale)
    var *= total / (total - 1)
    if var <= 0:
        return math.nan if abs(top) < 1e-12 else math.copysign(math.inf, top)
    return top / math.sqrt(var)


def corrected_z(c: Counts, value: float, scale: str) -> float:
    """:func:`score_z` corrected for the contrast's skewness (Gart and Nam), the z the decisions use.

    With rare events the contrast is skewed, and the plain score test's one-sided level drifts from
    alpha (4% vs 2% in 100 trials each, ratio at most 2: 0.069 at a nominal 0.05). The
    Cornish–Fisher relation ``t = z + g (z^2 - 1)``, ``g`` = skewness / 6 under the restricted rates,
    is solved for ``z``.
    """
    t = score_z(c, value, scale)
    if not math.isfinite(t):
        return t
    _, var, third = _moments(c, value, scale)
    g = third / (6 * var**1.5) if var > 0 else 0.0
    if abs(g) < 1e-12:
        return t
    return (-1 + math.sqrt(max(0.0, 1 + 4 * g * (g + t)))) / (2 * g)


def p_above(c: Counts, value: float, scale: str) -> float:
    """One-sided p-value against ``contrast <= value`` (small: the data show it above ``value``)."""
    z = corrected_z(c, value, scale)
    return 1.0 if math.isnan(z) else float(special.ndtr(-z))


def p_below(c: Counts, value: float, scale: str) -> float:
    """One-sided p-value against ``contrast >= value``."""
    z = corrected_z(c, value, scale)
    return 1.0 if math.isnan(z) else float(special.ndtr(z))


def score_bounds(c: Counts, alpha: float, scale: str) -> tuple[float, float]:
    """One-sided ``1 - alpha`` bounds (a ``1 - 2 alpha`` interval): the nulls the score test keeps."""
    crit = float(special.ndtri(1 - alpha))
    if scale == "difference":
        lo_edge, hi_edge = -1.0 + _EDGE, 1.0 - _EDGE
        to_value: Callable[[float], float] = float
    else:
        lo_edge, hi_edge = math.log(1e-9), math.log(1e9)
        to_value = math.exp

    def excess(t: float) -> float:
        z = corrected_z(c, to_value(t), scale)
        return 0.0 if math.isnan(z) else z

    def solve(target: float, lo: float, hi: float, unbounded: float) -> float:
        f_lo, f_hi = excess(lo) - target, excess(hi) - target
        if f_lo * f_hi > 0:
            return unbounded  # the test keeps every null on this side
        return to_value(optimize.brentq(lambda t: excess(t) - target, lo, hi, xtol=1e-10))

    centre = _estimate(c, scale)
    if scale == "ratio":
        centre = math.log(min(max(centre, 1e-9), 1e9)) if math.isfinite(centre) else 0.0
    low = solve(crit, lo_edge, centre, -1.0 if scale == "difference" else 0.0)
    high = solve(-crit, centre, hi_edge, 1.0 if scale == "difference" else math.inf)
    return low, high


def _estimate(c: Counts, scale: str) -> float:
    if scale == "difference":
        return c.rate_a - c.rate_b
    if c.rate_b == 0:
        return math.nan if c.rate_a == 0 else math.inf
    return c.rate_a / c.rate_b


def decide_two_proportions(rule: str, counts: Counts, alpha: float, *, threshold: float, bound: str,
                           scale: str) -> Decision:
    """Decide the difference (``a - b``) or ratio (``a / b``) of two rates is ``bound`` ``threshold``.

    ``bound`` is ``at_least``, ``at_most`` or ``equivalent`` (difference within ``±threshold``; ratio
    within ``[1 / threshold, threshold]``). Equivalence holds by two one-sided tests; it is refuted
    when either side is shown outside at ``alpha / 2`` (Bonferroni over the two sides).
    """
    value = _estimate(counts, scale)
    low, high = score_bounds(counts, alpha, scale)
    if bound == "equivalent":
        edge_low = -threshold if scale == "difference" else 1 / threshold
        p_holds = max(p_above(counts, edge_low, scale), p_below(counts, threshold, scale))
        p_refuted = min(1.0, 2 * min(p_below(counts, edge_low, scale), p_above(counts, threshold, scale)))
        band = f"[{fmt(edge_low)}, {fmt(threshold)}]"
        where = {Verdict.HOLDS: f"lies within {band}", Verdict.REFUTED: f"lies outside {band}",
                 Verdict.INCONCLUSIVE: f"overlaps the edge of {band}"}
    else:
        up, down = p_above(counts, threshold, scale), p_below(counts, threshold, scale)
        p_holds, p_refuted = (up, down) if bound == "at_least" else (down, up)
        claimed, other = ("above", "below") if bound == "at_least" else ("below", "above")
        where = {Verdict.HOLDS: f"lies {claimed} {fmt(threshold)}", Verdict.REFUTED: f"lies {other} {fmt(threshold)}",
                 Verdict.INCONCLUSIVE: f"contains {fmt(threshold)}"}
    verdict = verdict_from(p_holds, p_refuted, alpha)
    level = 1 - 2 * alpha
    label = "difference of rates" if scale == "difference" else "ratio of rates"
    shown = "undefined (0 events in both arms)" if math.isnan(value) else fmt(value)
    reason = (f"{label} {shown} ({counts.events_a} of {counts.trials_a} vs {counts.events_b} of {counts.trials_b}), "
              f"{level_text(level)} score CI [{fmt(low)}, {fmt(high)}] {where[verdict]}")
    z_edge = float(special.ndtri(1 - alpha)) + float(special.ndtri(0.8))
    pooled = (counts.events_a + counts.events_b) / (counts.trials_a + counts.trials_b)
    spread = math.sqrt(max(pooled * (1 - pooled), 1e-12) * (1 / counts.trials_a + 1 / counts.trials_b))
    resolution = z_edge * spread if scale == "difference" else None
    return Decision(
        rule=rule, statistic=value, low=low, high=high, confidence_level=level,
        n=counts.trials_a + counts.trials_b, verdict=verdict, reason=reason, pvalue=p_refuted, hold_pvalue=p_holds,
        alpha=alpha, mde=resolution, estimate_label=label,
        details={"threshold": threshold, "bound": bound, "scale": scale, "events": [counts.events_a, counts.events_b],
                 "trials": [counts.trials_a, counts.trials_b], "p_holds": p_holds},
        _interval_at=lambda lv: score_bounds(counts, (1 - lv) / 2, scale),
    )
