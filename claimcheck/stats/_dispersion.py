"""``dispersion``: how much a per-seed statistic varies across seeds (SD, or the range of k seeds).

Each sample is one seed's statistic. Two measures of spread, both smooth functionals of the
distribution, so the bootstrap is valid for them:

- ``sd``: the standard deviation (``ddof=1``).
- ``range``: the expected range of ``seeds`` draws, ``E[max - min]`` over ``seeds`` seeds, which is
  what "across 5 seeds the spread was 0.3" states. It is estimated without bias by the average
  range over every ``seeds``-subset of the samples, an L-statistic on the sorted samples. The
  range of *all* samples is not used: it grows with n, so it is no property of the seeds.

Each p-value is the largest of several valid ones, so a verdict needs every interval to clear the
threshold (the reported interval is their hull):

- normal theory: chi-square for the SD; for the mean range ``d_k`` times the SD (``d_k`` =
  E[range of k standard normal draws], by ``scipy.integrate.quad``). Exact for normal values.
- t(3) theory (:func:`t3_pivot`): the distribution of estimate / true spread for Student t(3)
  samples of this size, by Monte Carlo with a fixed seed. Exact for t(3) values, whatever their
  location and scale.
- for the lower bound only, scipy's BCa bootstrap (``scipy.stats.bootstrap``, fixed seed, so the
  same samples always give the same decision). scipy gives the interval but not the matching
  p-value, which the sequential plan and the family correction need, so :func:`bca_pvalue`
  inverts the same construction (bias correction from scipy's bootstrap distribution,
  acceleration from the jackknife); the tests check it equals ``alpha`` at scipy's bound.

Why t(3): an *upper* bound on a spread (``at_most`` holding, ``at_least`` refuted) cannot be
distribution-free: a rare seed far out makes the spread as large as it likes without showing in
10-40 samples (Bahadur and Savage, 1956), so every valid upper bound assumes a tail. Each
interval that adapts to the sample fails, since a sample that misses the tail looks light-tailed:
through the runner (looks at 10/25/40 seeds, 1,000 runs at the boundary) BCa and chi-square gave
false holds of 0.17 (lognormal) and 0.30 (t(3)), and refuted a true range lower bound 0.15 of the
time under t(3); a studentized bootstrap of the log variance (fixed n = 10-40) still gave 0.22
for t(3) and 0.12-0.16 for lognormal. So the bound is made exact for the heaviest tail the
simulations model, t(3), and lighter tails make it conservative: at 40,000 samples per n (10, 25,
40 seeds) the true spread exceeds the one-sided 5% t(3) upper bound at most 2.0% (SD) and 3.9%
(mean range of 5) of the time for lognormal (0.5 log-units), Laplace, t(4), t(5) and gamma(2)
values, at most 1.0% for normal ones. The lower side takes the t(3) bound too: under t(3) a
sample that *holds* an outlier overstates the spread (BCa and chi-square alone: 6.3% false
refutations of a range upper bound). The price is power for normal values: at 10 seeds the upper
bound is 2.4 s instead of chi-square's 1.6 s; through the runner (normal values, SD 0.05, 200
runs) "SD <= 0.075" holds 0.11 of the time (0.94 with chi-square and BCa), "SD <= 0.1" 0.89
(1.00) and "SD >= 0.025" 0.81 (1.00).

Known limit: per-seed values with tails heavier than t(3) are not covered: exponential values
reach 6.1% at a nominal 5% (mean range of 5, 10 seeds), a lognormal of 0.75 log-units 6-9%, and a
5% share of outlying seeds (a diverged run) far more (13% at 40 seeds, 58% at 10), since most
samples of that size hold no outlier at all.
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
PIVOT_DRAWS = 40_000
T_DF = 3


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


@cache
def t3_range_factor(seeds: int) -> float:
    """The expected range of ``seeds`` standard t(3) draws (``E[max - min]``), by ``scipy.integrate.quad``."""
    value, _ = integrate.quad(lambda x: 2 * (1 - special.stdtr(T_DF, x) ** seeds - special.stdtr(T_DF, -x) ** seeds),
                              0, math.inf, limit=200)
    return float(value)


@cache
def t3_pivot(n: int, measure: str, seeds: int) -> np.ndarray:
    """Sorted ratios estimate / true spread over :data:`PIVOT_DRAWS` samples of ``n`` t(3) values (fixed seed).

    The ratio's distribution is the same for every location and scale of t(3) values, so its
    lower quantiles give exact upper bounds for them.
    """
    rng = np.random.default_rng(_SEED)
    truth = math.sqrt(T_DF / (T_DF - 2)) if measure == "sd" else t3_range_factor(seeds)
    draws = rng.standard_t(T_DF, size=(PIVOT_DRAWS, n))
    return np.sort(spread(draws, measure, seeds) / truth)


def t3_pvalue(x: np.ndarray, measure: str, seeds: int, value: float, upper: bool) -> float:
    """The t(3) p-value against ``spread >= value`` (``upper``) or ``spread <= value``, from :func:`t3_pivot`."""
    if value <= 0:
        return 1.0 if upper else 0.0
    ratios = t3_pivot(len(x), measure, seeds)
    ratio = float(spread(x, measure, seeds)) / value
    count = np.searchsorted(ratios, ratio, side="right") if upper else len(ratios) - np.searchsorted(ratios, ratio)
    return (int(count) + 1) / (len(ratios) + 1)


def t3_bounds(x: np.ndarray, measure: str, seeds: int, alpha: float) -> tuple[float, float]:
    """The exact one-sided ``1 - alpha`` bounds on the spread of t(3) values."""
    ratios, value = t3_pivot(len(x), measure, seeds), float(spread(x, measure, seeds))
    return value / float(np.quantile(ratios, 1 - alpha)), value / float(np.quantile(ratios, alpha))


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
    t3_low, t3_high = t3_bounds(x, measure, seeds, alpha)
    low, high = min(float(boot.confidence_interval.low), chi_low, t3_low), max(t3_high, chi_high)
    dist = np.asarray(boot.bootstrap_distribution)
    accel = _acceleration(x, measure, seeds)
    chi_above, chi_below = chi2_pvalues(x, measure, seeds, threshold)
    p_above = max(bca_pvalue(dist, value, accel, threshold, upper=False), chi_above,
                  t3_pvalue(x, measure, seeds, threshold, upper=False))
    p_below = max(t3_pvalue(x, measure, seeds, threshold, upper=True), chi_below)
    p_holds, p_refuted = (p_below, p_above) if bound == "at_most" else (p_above, p_below)
    verdict = verdict_from(p_holds, p_refuted, alpha)
    claimed, other = ("below", "above") if bound == "at_most" else ("above", "below")
    where = {Verdict.HOLDS: f"lies {claimed}", Verdict.REFUTED: f"lies {other}", Verdict.INCONCLUSIVE: "contains"}
    shown = fmt(value) + (f" {unit}" if unit else "")
    reason = (f"{label} {shown} over {n} seeds, {level_text(level)} CI [{fmt(low)}, {fmt(high)}] (BCa bootstrap, "
              f"normal theory and t(3) tails) "
              f"{where[verdict]} {fmt(threshold)}")
    resolution = float((special.ndtri(1 - alpha) + special.ndtri(0.8)) * boot.standard_error)

    def interval_at(lv: float) -> tuple[float, float]:
        again = stats.bootstrap((x,), statistic, vectorized=True, n_resamples=0, confidence_level=lv,
                                method="BCa", bootstrap_result=boot, rng=np.random.default_rng(_SEED))
        tail = (1 - lv) / 2
        normal, t3 = chi2_bounds(x, measure, seeds, tail), t3_bounds(x, measure, seeds, tail)
        return min(float(again.confidence_interval.low), normal[0], t3[0]), max(t3[1], normal[1])

    return Decision(
        rule=rule, statistic=value, low=low, high=high, confidence_level=level, n=n, verdict=verdict,
        reason=reason, pvalue=p_refuted, hold_pvalue=p_holds, alpha=alpha, mde=resolution, estimate_label=label,
        details={"threshold": threshold, "bound": bound, "measure": measure, "seeds": seeds, "p_holds": p_holds},
        _interval_at=interval_at,
    )
