"""``ratio``: ``statistic(numerator) / statistic(denominator)`` against a threshold.

Means (default): for a positive denominator, ``mean_a / mean_b >= T`` is the same claim as
``mean_a - T * mean_b >= 0``, so the verdict comes from a Welch (or, ``paired: true``, a
one-sample) t test on that contrast: exact under normal noise, no resampling. The interval
is Fieller's, the set of ratios the same test does not reject, so it lies above ``T`` exactly
when the contrast test says HOLDS. It is unbounded when the denominator is not clearly
non-zero; the verdict is then INCONCLUSIVE.

Medians, paired (the default for timing outputs): the median of the per-round ratios
``a_i / b_i`` with the exact sign-test interval (:mod:`._robust`); a spike in one round moves
one ratio, not the estimate. Medians, unpaired: the ratio of the two medians with a percentile
bootstrap (``scipy.stats.bootstrap``, arms resampled independently), p-values read off the
bootstrap distribution; approximate, so its sequential plan uses the union bound.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._constant import constant_values, decide_constant
from ._decision import Decision, identical_samples, spendable, too_few, verdict_from
from ._estimate import contrast, mean_var, t_quantile
from ._hypothesis import Hypothesis
from ._power import mde
from ._robust import SignEstimate

N_RESAMPLES = 4999
_SEED = 20240613  # fixed: the same samples always give the same decision

_SIDE = {
    Verdict.HOLDS: "lies {claimed}",
    Verdict.REFUTED: "lies {other}",
    Verdict.INCONCLUSIVE: "contains",
}


def decide_ratio(
    rule: str,
    groups: list[tuple[str, np.ndarray]],
    alpha: float,
    *,
    threshold: float,
    bound: str,
    statistic: str = "mean",
    paired: bool = False,
    unit: str | None = None,
    hypothesis: Hypothesis | None = None,
) -> Decision:
    """Decide ``statistic(groups[0]) / statistic(groups[1])`` is ``bound`` ``threshold``.

    ``hypothesis``: the rule's (:class:`~._hypothesis.Hypothesis`), carried by a decision read off an interval.
    """
    (_, a), (_, b) = groups
    n = len(a) if paired and len(a) == len(b) else len(a) + len(b)  # a paired figure's n is its rounds
    if min(len(a), len(b)) < 2:
        return too_few(rule, n, alpha, what="pairs" if paired else "samples per arm")
    level = 1 - 2 * alpha
    label = f"ratio of {statistic}s"
    constants = constant_values(groups)
    if constants is not None and constants[1] > 0:
        value = constants[0] / constants[1]
        holds = value >= threshold if bound == "at_least" else value <= threshold
        sign = (">=" if bound == "at_least" else "<=") if holds else ("<" if bound == "at_least" else ">")
        return decide_constant(rule, groups, alpha, value=value, holds=holds, comparison=f"{fmt(value)} {sign} "
                               f"{fmt(threshold)}", label=f"ratio of {statistic}s",
                               statistic=statistic, paired=paired)
    if statistic == "mean":
        mb = float(b.mean())
        value = float(a.mean()) / mb if mb else math.nan
        if not mb > 0:
            return _undecidable(rule, n, alpha, value, label, "the denominator mean is not positive")
        test = contrast(a, b, threshold, paired)
        if test.se == 0:
            return identical_samples(rule, n, alpha, value, label)
        p_above, p_below = test.p_greater(0.0), test.p_less(0.0)
        resolution = mde(test.se, test.df, alpha=alpha) / mb if spendable(alpha) else None

        def interval_at(lv: float) -> tuple[float, float]:
            return _fieller(a, b, paired, t_quantile((1 + lv) / 2, test.df))

        low, high = interval_at(level)
        if not math.isfinite(low - high):
            return _undecidable(rule, n, alpha, value, label, "the denominator is not distinguishable from 0")
    elif paired:
        if np.any(b <= 0):
            return _undecidable(rule, n, alpha, math.nan, "median of per-round ratios",
                                "per-round ratios need a positive reference in every round")
        label = "median of per-round ratios"
        est = SignEstimate(a / b)
        value = est.estimate
        low, high = est.bounds(alpha)
        p_above, p_below = est.p_greater(threshold), est.p_less(threshold)
        resolution = mde(est.se, est.df, alpha=alpha) if spendable(alpha) else None
        interval_at = est.interval  # type: ignore[assignment]  # same signature, a bound method
    else:
        from scipy import stats  # slow to import; only the unpaired median path needs it

        boot = stats.bootstrap(
            (a, b), _median_ratio, paired=paired, vectorized=True, n_resamples=N_RESAMPLES,
            confidence_level=level, method="percentile", rng=np.random.default_rng(_SEED),
        )
        dist = boot.bootstrap_distribution
        value = float(_median_ratio(a, b))
        low, high = map(float, boot.confidence_interval)
        p_above = (np.sum(dist <= threshold) + 1) / (dist.size + 1)
        p_below = (np.sum(dist >= threshold) + 1) / (dist.size + 1)
        z_power = special.ndtri(1 - alpha) + special.ndtri(0.8)
        resolution = float(z_power * boot.standard_error) if spendable(alpha) else None

        def interval_at(lv: float) -> tuple[float, float]:
            return tuple(np.quantile(dist, [(1 - lv) / 2, (1 + lv) / 2]))

    at_least = bound == "at_least"
    p_holds, p_refuted = (float(p_above), float(p_below)) if at_least else (float(p_below), float(p_above))
    verdict = verdict_from(p_holds, p_refuted, alpha)
    claimed, other = ("above", "below") if at_least else ("below", "above")
    reason = (
        f"{label} {fmt(value)}, {level_text(level)} CI [{fmt(low)}, {fmt(high)}] "
        f"{_SIDE[verdict].format(claimed=claimed, other=other)} {fmt(threshold)}"
    )
    return Decision(
        rule=rule, statistic=value, low=low, high=high, confidence_level=level, n=n, verdict=verdict,
        reason=reason, pvalue=p_refuted, hold_pvalue=p_holds, alpha=alpha, mde=resolution, estimate_label=label,
        details={"threshold": threshold, "bound": bound, "paired": paired, "statistic": statistic, "p_holds": p_holds},
        _interval_at=interval_at, hypothesis=hypothesis,
    )


def _fieller(a: np.ndarray, b: np.ndarray, paired: bool, c: float) -> tuple[float, float]:
    """Ratios ``r`` with ``(mean_a - r mean_b)^2 <= c^2 var(mean_a - r mean_b)``; (-inf, inf) if unbounded."""
    (ma, va), (mb, vb) = mean_var(a), mean_var(b)
    va, vb = va / len(a), vb / len(b)
    cab = np.cov(a, b)[0, 1] / len(a) if paired else 0.0
    qa, qb, qc = mb**2 - c**2 * vb, ma * mb - c**2 * cab, ma**2 - c**2 * va
    if qa <= 0:
        return -math.inf, math.inf
    root = math.sqrt(max(qb**2 - qa * qc, 0.0))
    return float((qb - root) / qa), float((qb + root) / qa)


def _median_ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.median(a, axis=axis) / np.median(b, axis=axis)


def _undecidable(rule: str, n: int, alpha: float, value: float, label: str, why: str) -> Decision:
    return Decision(
        rule=rule, statistic=value, low=-math.inf, high=math.inf, confidence_level=1 - 2 * alpha, n=n,
        verdict=Verdict.INCONCLUSIVE, reason=f"{label} {fmt(value)}: {why}", pvalue=1.0, alpha=alpha,
        estimate_label=label,
    )

