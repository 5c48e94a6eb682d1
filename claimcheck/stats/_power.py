"""Resolution of a run: minimum detectable effect and the sample size a claim needs.

One-sided tests use the exact noncentral t: a level-``alpha`` t test with ``df`` degrees of
freedom detects a true departure ``delta`` with probability ``power`` when the noncentrality
``delta / se`` is at least ``nct.ppf``-inverse of that power, i.e. ``scipy.special.nctdtrinc``,
the function behind ``scipy.stats.nct`` (called directly: a rule computes its MDE at every
look; the tests check it against ``stats.nct.sf``). For equivalence (TOST) at a true
difference of 0 both one-sided tests must pass, so the power quantile is two-sided:
``margin >= (t_{1-alpha} + t_{(1+power)/2}) * se`` (the shifted-t approximation; the noncentral
form has no closed inverse for two tests).

Every call returns in bounded time. ``nctdtrinc`` iterates inside C and, at df <= 2 with a tiny
level (a critical value above ~1e5), never returns; no signal can interrupt it. It is therefore
called only where its critical value is at most :data:`NCT_SAFE_QUANTILE` (checked to return
within 3 ms for df 1-200, fractional df included). Beyond it the noncentrality is found by a
bracketed root search on the power written as an expectation over the normal part of the t
statistic, ``P(T > q) = E_Z[P(S < (Z + nc) / q)]`` with ``S = sqrt(chi2_df / df)`` (48-node
Gauss–Hermite; relative error below 1e-4 where both apply): a fixed number of evaluations.
A look whose level is at the floor of what a look may spend has no resolution
(:func:`~._decision.spendable`); the rules then report none.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy import optimize, special

from ._estimate import t_quantile

Test = Literal["one-sided", "tost"]

NCT_SAFE_QUANTILE = 2000.0  # nctdtrinc returns within 3 ms up to here at every df >= 1
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(48)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def mde(se: float, df: float, *, alpha: float = 0.05, power: float = 0.8, test: Test = "one-sided") -> float:
    """Smallest departure a run with standard error ``se`` detects with probability ``power``.

    For ``test="tost"`` it is the smallest equivalence margin the run establishes with
    probability ``power`` when the true difference is zero.
    """
    if not 0 < power < 1:
        raise ValueError(f"`power` must lie in (0, 1); got {power!r}")
    if not df >= 1:
        return math.inf  # less than one degree of freedom estimates no noise: nothing is resolved
    if test == "one-sided":
        if se == 0:
            return 0.0
        return noncentrality(df, power, t_quantile(1 - alpha, df)) * se
    return (t_quantile(1 - alpha, df) + t_quantile((1 + power) / 2, df)) * se


def noncentrality(df: float, power: float, critical: float) -> float:
    """Noncentrality at which a t statistic with ``df`` exceeds ``critical`` with probability ``power``.

    ``scipy.special.nctdtrinc(df, 1 - power, critical)`` where that call is known to return; the
    bounded Gauss–Hermite root search beyond it (see the module docstring).
    """
    if critical <= NCT_SAFE_QUANTILE:
        return float(special.nctdtrinc(df, 1 - power, critical))
    guess = math.sqrt(float(special.chdtri(df, 1 - power)) / df)  # the limit as critical -> inf

    def shortfall(scale: float) -> float:
        s = scale + _NODES / critical
        inside = special.chdtr(df, df * np.maximum(s, 0.0) ** 2)
        return float(_WEIGHTS @ np.where(s > 0, inside, 0.0)) - power

    scale = optimize.brentq(shortfall, 0.5 * guess, 2 * guess + 1, xtol=1e-12, maxiter=100)
    return float(scale) * critical


def required_n(
    effect: float,
    sd: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    test: Test = "one-sided",
    arms: int = 1,
) -> int:
    """Smallest n (per arm) whose :func:`mde` is at most ``effect``.

    Args:
        effect: departure (or equivalence margin) to detect, in the data's units.
        sd: standard deviation of one sample (of one paired difference when ``arms=1``;
            the per-arm SD, pooled as ``sqrt((sd_a**2 + sd_b**2) / 2)``, when ``arms=2``).
        arms: 1 for one sample or paired differences, 2 for two independent arms of n each.
    """
    if not (math.isfinite(effect) and effect > 0):
        raise ValueError(f"`effect` must be a positive finite number; got {effect!r}")
    if not (math.isfinite(sd) and sd >= 0):
        raise ValueError(f"`sd` must be a non-negative finite number; got {sd!r}")
    if arms not in (1, 2):
        raise ValueError(f"`arms` must be 1 or 2; got {arms!r}")
    if sd == 0:
        return 2
    q = power if test == "one-sided" else (1 + power) / 2
    z = special.ndtri(1 - alpha) + special.ndtri(q)
    low = max(2, math.ceil(arms * (z * sd / effect) ** 2))  # normal approximation: a lower bound

    def resolves(n: int) -> bool:
        return mde(sd * math.sqrt(arms / n), arms * (n - 1), alpha=alpha, power=power, test=test) <= effect

    if resolves(low):
        return low
    high = 2 * low  # the MDE falls with n: double until it resolves, then bisect (bounded steps)
    while not resolves(high):
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if resolves(middle) else (middle, high)
    return high


def zero_rate_n(threshold: float, alpha: float = 0.05) -> int:
    """Samples needed so that 0 occurrences put the exact upper ``1 - alpha`` bound at ``threshold``.

    With 0 of n, the Clopper–Pearson upper bound is ``1 - alpha**(1/n)`` ("rule of three" for
    alpha = 0.05), so ``n >= log(alpha) / log(1 - threshold)``.
    """
    if not 0 < threshold < 1:
        raise ValueError(f"`threshold` must lie in (0, 1); got {threshold!r}")
    n = math.ceil(math.log(alpha) / math.log1p(-threshold))
    while (1 - threshold) ** n > alpha:  # guard against rounding in the logarithms
        n += 1
    return n


def sign_test_n(alpha: float) -> int:
    """Smallest n whose sign test can reach ``alpha`` at all: every sample on one side gives ``0.5**n``.

    Below it no outcome decides a median on the sign test: 4 rounds of a paired median give
    ``0.5**4 = 0.0625``, above any look's level at alpha = 0.05.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"`alpha` must lie in (0, 1); got {alpha!r}")
    n = max(1, math.ceil(-math.log2(alpha)))
    while 0.5**n > alpha:  # guard against rounding in the logarithm
        n += 1
    return n
