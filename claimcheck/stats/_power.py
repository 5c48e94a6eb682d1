"""Resolution of a run: minimum detectable effect and the sample size a claim needs.

One-sided tests use the exact noncentral t: a level-``alpha`` t test with ``df`` degrees of
freedom detects a true departure ``delta`` with probability ``power`` when the noncentrality
``delta / se`` is at least ``nct.ppf``-inverse of that power, i.e. ``scipy.special.nctdtrinc``,
the function behind ``scipy.stats.nct`` (called directly: a rule computes its MDE at every
look; the tests check it against ``stats.nct.sf``). For equivalence (TOST) at a true
difference of 0 both one-sided tests must pass, so the power quantile is two-sided:
``margin >= (t_{1-alpha} + t_{(1+power)/2}) * se`` (the shifted-t approximation; the noncentral
form has no closed inverse for two tests).
"""

from __future__ import annotations

import math
from typing import Literal

from scipy import special

from ._estimate import t_quantile

Test = Literal["one-sided", "tost"]


def mde(se: float, df: float, *, alpha: float = 0.05, power: float = 0.8, test: Test = "one-sided") -> float:
    """Smallest departure a run with standard error ``se`` detects with probability ``power``.

    For ``test="tost"`` it is the smallest equivalence margin the run establishes with
    probability ``power`` when the true difference is zero.
    """
    if test == "one-sided":
        if se == 0:
            return 0.0
        return float(special.nctdtrinc(df, 1 - power, t_quantile(1 - alpha, df))) * se
    return (t_quantile(1 - alpha, df) + t_quantile((1 + power) / 2, df)) * se


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
    n = max(2, math.ceil(arms * (z * sd / effect) ** 2))  # normal approximation: a lower bound
    while mde(sd * math.sqrt(arms / n), arms * (n - 1), alpha=alpha, power=power, test=test) > effect:
        n += 1
    return n


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
