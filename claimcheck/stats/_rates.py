"""``rate_at_most`` / ``zero_rate``: how often an event occurs, from 0/1 samples.

Exact binomial throughout: Clopper–Pearson bounds and the matching one-sided exact tests, so
HOLDS/REFUTED agree with the bounds. They are computed with ``scipy.special`` (Beta quantiles
``betaincinv``, binomial tails ``bdtr``/``bdtrc``), the same quantities
``stats.binomtest(...).proportion_ci(method="exact")`` and ``binomtest(...).pvalue`` return (the
tests check the equality) at a hundredth of the cost, which the simulations need.

``zero_rate`` claims the event never happens. Any occurrence refutes it outright (p = 0:
no amount of sampling turns an observed event into "never"). With none observed it HOLDS only
when n is large enough for the upper ``1 - alpha`` bound, ``1 - alpha**(1/n)``, to reach the
threshold (0 of 924 -> 3.2e-3 at alpha = 0.05); otherwise it is INCONCLUSIVE with the n needed.

An output that counts occurrences (0, 1, 2, ... mismatches in one sample) is read as events:
a sample with a non-zero count is one event, and the reason says that reading was used.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision, verdict_from
from ._power import zero_rate_n


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided ``1 - alpha`` exact bounds on a binomial rate (together a ``1 - 2 alpha`` interval)."""
    low = float(special.betaincinv(k, n - k + 1, alpha)) if k > 0 else 0.0
    high = float(special.betaincinv(k + 1, n - k, 1 - alpha)) if k < n else 1.0
    return low, high


def count_events(rule: str, groups: list[tuple[str, np.ndarray]]) -> tuple[int, int]:
    """Events and samples in the first group: a sample is an event when it is non-zero.

    0/1 samples are events as they are; a count (a non-negative whole number) is an event when
    it is at least 1. ValueError for a negative or fractional value, which is neither.
    """
    label, x = groups[0]
    bad = (x < 0) | (x != np.round(x))
    if bad.any():
        raise ValueError(f"rule `{rule}` needs 0/1 samples or non-negative counts; "
                         f"group {label!r} has {float(x[bad][0])!r}")
    return int(np.count_nonzero(x)), len(x)


def count_reading(groups: list[tuple[str, np.ndarray]]) -> str:
    """The words for a count output read as events (empty for 0/1 samples)."""
    x = groups[0][1]
    return " (counts read as events: a sample with a count > 0 is one event)" if np.any(x > 1) else ""


def decide_rate_at_most(
    rule: str, groups: list[tuple[str, np.ndarray]], alpha: float, *, threshold: float, unit: str | None = None
) -> Decision:
    """Decide the event rate is at most ``threshold``."""
    k, n = count_events(rule, groups)
    level = 1 - 2 * alpha
    low, high = clopper_pearson(k, n, alpha)
    p_holds = float(special.bdtr(k, n, threshold))  # P(X <= k): few events show rate < threshold
    p_refuted = float(special.bdtrc(k - 1, n, threshold)) if k > 0 else 1.0  # P(X >= k)
    verdict = verdict_from(p_holds, p_refuted, alpha)
    where = {Verdict.HOLDS: "lies below", Verdict.REFUTED: "lies above", Verdict.INCONCLUSIVE: "contains"}[verdict]
    resolution = (special.ndtri(1 - alpha) + special.ndtri(0.8)) * math.sqrt(threshold * (1 - threshold) / n)
    return Decision(
        rule=rule, statistic=k / n, low=low, high=high, confidence_level=level, n=n, verdict=verdict,
        reason=(
            f"rate {fmt(k / n)} ({k} of {n}), {level_text(level)} CI [{fmt(low)}, {fmt(high)}] {where} {fmt(threshold)}"
            f"{count_reading(groups)}"
        ),
        pvalue=p_refuted, hold_pvalue=p_holds, alpha=alpha, mde=float(resolution), estimate_label="rate",
        details={"threshold": threshold, "events": k, "p_holds": p_holds},
        _interval_at=lambda lv: clopper_pearson(k, n, (1 - lv) / 2),
    )


def decide_zero_rate(
    rule: str, groups: list[tuple[str, np.ndarray]], alpha: float, *, threshold: float, unit: str | None = None
) -> Decision:
    """Decide the event never happens, as far as ``threshold`` and n can show."""
    k, n = count_events(rule, groups)
    level = 1 - alpha  # one-sided: only the upper bound matters
    high = clopper_pearson(k, n, alpha)[1]
    details: dict[str, object] = {"threshold": threshold, "events": k}
    if k > 0:
        verdict, pvalue = Verdict.REFUTED, 0.0
        reason = f"{k} of {n} samples show the event; a single occurrence refutes a zero rate{count_reading(groups)}"
    elif high <= threshold:
        verdict, pvalue = Verdict.HOLDS, 1.0
        reason = f"0 of {n}: {level_text(level)} upper bound {fmt(high)} on the rate is within {fmt(threshold)}"
    else:
        needed = zero_rate_n(threshold, alpha)
        verdict, pvalue = Verdict.INCONCLUSIVE, 1.0
        reason = (
            f"0 of {n}, but the {level_text(level)} upper bound {fmt(high)} exceeds {fmt(threshold)}; "
            f"needs n >= {needed}"
        )
        details["required_n"] = needed
    return Decision(
        rule=rule, statistic=k / n, low=0.0, high=high, confidence_level=level, n=n, verdict=verdict,
        reason=reason, pvalue=pvalue, hold_pvalue=float((1 - threshold) ** n) if k == 0 else 1.0, alpha=alpha,
        mde=float(1 - alpha ** (1 / n)), estimate_label="rate",
        details=details, _interval_at=lambda lv: (0.0, clopper_pearson(k, n, 1 - lv)[1]),
    )
