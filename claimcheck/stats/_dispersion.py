"""``dispersion``: how much a per-seed statistic varies across seeds (SD, or the range of k seeds).

Each sample is one seed's statistic. Two measures of spread, both smooth functionals of the
distribution, so the bootstrap is valid for them:

- ``sd``: the standard deviation (``ddof=1``).
- ``range``: the expected range of ``seeds`` draws, ``E[max - min]`` over ``seeds`` seeds, which is
  what "across 5 seeds the spread was 0.3" states. It is estimated without bias by the average
  range over every ``seeds``-subset of the samples, an L-statistic on the sorted samples. The
  range of *all* samples is not used: it grows with n, so it is no property of the seeds.

The decision needs two intervals to agree, and reports their hull:

- scipy's BCa bootstrap (``scipy.stats.bootstrap``, fixed seed, so the same samples always give
  the same decision). scipy gives the interval but not the matching p-value, which the
  sequential plan and the family correction need, so :func:`bca_pvalue` inverts the same BCa
  construction (bias correction from the bootstrap distribution scipy returns, acceleration from
  the jackknife); the tests check it equals ``alpha`` at scipy's bound.
- the normal-theory interval: chi-square for the SD, and for the mean range ``d_k`` times the
  SD's (``d_k`` = E[range of k standard normal draws], by ``scipy.integrate.quad``).

Why both: alone, the bootstrap is too narrow at the numbers of seeds claims use (BCa, normal
values, 10 seeds: an upper bound below the true SD 18% of the time at a nominal 5%; 40 seeds
6.5%), while the chi-square interval is exact for normal values at any n. Each p-value is the
larger of the two, so a verdict needs both intervals to clear the threshold.

Known limit: an *upper* bound on a spread (``at_most`` holding, ``at_least`` refuted) needs
light tails. For skewed or heavy-tailed per-seed values (lognormal, t(3)) no interval tried here
(BCa, jackknife, chi-square) keeps its level at 10-40 seeds: a sample of that size rarely
contains the tail that makes the spread large. Lower bounds are conservative under them.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from scipy import integrate, special, stats

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision, identical_samples, too_few, verdict_from

N_RESAMPLES = 1999
_SEED = 20240917


@cache
def range_weights(n: int, seeds: int) -> np.ndarray:
    """Weights on the sorted samples whose dot product is the mean range over all ``seeds``-subsets."""
    i = np.arange(1, n + 1)
    total = math.comb(n, seeds)
    top = np.array([math.comb(k - 1, seeds - 1) for k in i], dtype=float)
    bottom = np.array([math.comb(n - k, seeds - 1) for k in i], dtype=float)
    return (top - bottom) / total


def spread(x: np.ndarray, measure: str, seeds: int, axis: int = -1) -> np.ndarray:
    """The measure of spread along ``axis`` (vectorised for the bootstrap)."""
    if measure == "sd":
        return np.asarray(np.std(x, axis=axis, ddof=1))
    xs = np.sort(x, axis=axis)
    return np.asarray(np.tensordot(np.moveaxis(xs, axis, -1), range_weights(x.shape[axis], seeds), axes=1))


@cache
def normal_range_factor(seeds: int) -> float:
    """``d_k``: the expected range of ``seeds`` standard normal draws (``d_2 = 2 / sqrt(pi)``)."""
    value, _ = integrate.quad(lambda x: 1 - special.ndtr(x) ** seeds - special.ndtr(-x) ** seeds, -12, 12,
                              limit=200)
    return float(value)


def normal_theory(x: np.ndarray, measure: str, seeds: int) -> tuple[float, float]:
    """``(n - 1) s^2`` and the factor from SD to the measure, for the chi-square interval."""
    factor = 1.0 if measure == "sd" else normal_range_factor(seeds)
    return float((len(x) - 1) * np.var(x, ddof=1)), factor


def chi2_pvalues(x: np.ndarray, measure: str, seeds: int, value: float) -> tuple[float, float]:
    """Normal-theory p-values ``(against spread <= value, against spread >= value)``."""
    ss, factor = normal_theory(x, measure, seeds)
    statistic = ss / (value / factor) ** 2 if value > 0 else math.inf
    df = len(x) - 1
    return float(special.chdtrc(df, statistic)), float(special.chdtr(df, statistic))


def chi2_bounds(x: np.ndarray, measure: str, seeds: int, alpha: float) -> tuple[float, float]:
    """Normal-theory one-sided ``1 - alpha`` bounds on the measure."""
    ss, factor = normal_theory(x, measure, seeds)
    df = len(x) - 1
    return (factor * math.sqrt(ss / special.chdtri(df, alpha)),
            factor * math.sqrt(ss / special.chdtri(df, 1 - alpha)))


def _acceleration(x: np.ndarray, measure: str, seeds: int) -> float:
    """BCa acceleration from the jackknife, as scipy computes it for its interval."""
    n = len(x)
    leave_one_out = np.array([np.delete(x, i) for i in range(n)])
    jack = spread(leave_one_out, measure, seeds)
    d = jack.mean() - jack
    den = 6.0 * float(np.sum(d**2)) ** 1.5
    return float(np.sum(d**3)) / den if den > 0 else 0.0


def bca_pvalue(dist: np.ndarray, estimate: float, accel: float, value: float, upper: bool) -> float:
    """The one-sided level at which the BCa bound reaches ``value``.

    ``upper=False``: p-value against ``spread <= value`` (small when the lower bound exceeds it);
    ``upper=True``: against ``spread >= value``.
    """
    z0 = float(special.ndtri(np.mean(dist < estimate)))
    if not math.isfinite(z0):
        return 1.0
    share = float(np.mean(dist <= value))
    share = min(max(share, 0.5 / len(dist)), 1 - 0.5 / len(dist))
    w = float(special.ndtri(share)) - z0
    if 1 + accel * w <= 0:
        return 1.0
    z = (w - z0 - accel * w * z0) / (1 + accel * w)  # the z_alpha whose BCa percentile is ``share``
    return float(special.ndtr(-z)) if upper else float(special.ndtr(z))


def decide_dispersion(rule: str, groups: list[tuple[str, np.ndarray]], alpha: float, *, threshold: float,
                      bound: str, measure: str, seeds: int, unit: str | None = None) -> Decision:
    """Decide the spread of ``groups[0]`` (one value per seed) is ``bound`` (at_most/at_least) ``threshold``."""
    x = groups[0][1]
    n = len(x)
    need = max(3, seeds + 1) if measure == "range" else 3
    label = "SD across seeds" if measure == "sd" else f"mean range of {seeds} seeds"
    if n < need:
        return too_few(rule, n, alpha, need=need, what="seeds")
    value = float(spread(x, measure, seeds))
    if value == 0:
        return identical_samples(rule, n, alpha, value, label)
    level = 1 - 2 * alpha

    def statistic(sample: np.ndarray, axis: int = -1) -> np.ndarray:
        return spread(sample, measure, seeds, axis=axis)

    boot = stats.bootstrap((x,), statistic, vectorized=True, n_resamples=N_RESAMPLES, confidence_level=level,
                           method="BCa", rng=np.random.default_rng(_SEED))
    chi_low, chi_high = chi2_bounds(x, measure, seeds, alpha)
    low, high = min(float(boot.confidence_interval.low), chi_low), max(float(boot.confidence_interval.high), chi_high)
    dist = np.asarray(boot.bootstrap_distribution)
    accel = _acceleration(x, measure, seeds)
    chi_above, chi_below = chi2_pvalues(x, measure, seeds, threshold)
    p_above = max(bca_pvalue(dist, value, accel, threshold, upper=False), chi_above)
    p_below = max(bca_pvalue(dist, value, accel, threshold, upper=True), chi_below)
    p_holds, p_refuted = (p_below, p_above) if bound == "at_most" else (p_above, p_below)
    verdict = verdict_from(p_holds, p_refuted, alpha)
    claimed, other = ("below", "above") if bound == "at_most" else ("above", "below")
    where = {Verdict.HOLDS: f"lies {claimed}", Verdict.REFUTED: f"lies {other}", Verdict.INCONCLUSIVE: "contains"}
    shown = fmt(value) + (f" {unit}" if unit else "")
    reason = (f"{label} {shown} over {n} seeds, {level_text(level)} CI [{fmt(low)}, {fmt(high)}] (BCa bootstrap and "
              f"normal theory) "
              f"{where[verdict]} {fmt(threshold)}")
    resolution = float((special.ndtri(1 - alpha) + special.ndtri(0.8)) * boot.standard_error)

    def interval_at(lv: float) -> tuple[float, float]:
        again = stats.bootstrap((x,), statistic, vectorized=True, n_resamples=0, confidence_level=lv,
                                method="BCa", bootstrap_result=boot, rng=np.random.default_rng(_SEED))
        normal = chi2_bounds(x, measure, seeds, (1 - lv) / 2)
        return min(float(again.confidence_interval.low), normal[0]), max(float(again.confidence_interval.high),
                                                                          normal[1])

    return Decision(
        rule=rule, statistic=value, low=low, high=high, confidence_level=level, n=n, verdict=verdict,
        reason=reason, pvalue=p_refuted, hold_pvalue=p_holds, alpha=alpha, mde=resolution, estimate_label=label,
        details={"threshold": threshold, "bound": bound, "measure": measure, "seeds": seeds, "p_holds": p_holds},
        _interval_at=interval_at,
    )
