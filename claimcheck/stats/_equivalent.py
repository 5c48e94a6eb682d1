"""``equivalent``: two arms agree within a margin (TOST).

The ``1 - 2 alpha`` interval of the difference (``scale: difference``) or of the log ratio of
geometric means (``scale: log-ratio``; ``margin: 0.05`` means the ratio lies in [1/1.05, 1.05])
decides: HOLDS when it lies inside ``+-margin`` (TOST), REFUTED when the data show
``|difference| > margin`` (size taken at the band's edge, both tails counted). ``paired: true``
treats the arms as interleaved pairs and uses per-pair differences; otherwise Welch.
``statistic: median`` (the default for timing outputs) decides on the median of the per-round
differences (sign test, exact) when paired, and on the Hodges–Lehmann shift (Mann–Whitney)
otherwise (:mod:`._robust`).

TOST alone bounds both error rates, so its HOLDS stands at any n. When the verdict is
INCONCLUSIVE and the margin is finer than the run's minimum detectable effect (:func:`mde`),
the reason says so, with the n that would resolve it (:func:`required_n` at the measured SD).
"""

from __future__ import annotations

import math

import numpy as np

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._constant import constant_values, decide_constant
from ._decision import Decision, identical_samples, spendable, too_few, verdict_from
from ._estimate import Location, one_sample, welch
from ._hypothesis import Hypothesis
from ._power import mde, required_n
from ._robust import ShiftEstimate, SignEstimate

_LABELS = {  # (robust, paired, log-ratio scale) -> what the interval is about
    (False, False, False): "mean difference", (False, True, False): "mean difference",
    (False, False, True): "ratio of geometric means", (False, True, True): "ratio of geometric means",
    (True, False, False): "median shift", (True, True, False): "median of per-round differences",
    (True, False, True): "ratio of medians (log shift)", (True, True, True): "median of per-round ratios",
}
_WHERE = {
    Verdict.HOLDS: "lies within",
    Verdict.REFUTED: "lies outside",
    Verdict.INCONCLUSIVE: "straddles an edge of",
}


def decide_equivalent(
    rule: str,
    groups: list[tuple[str, np.ndarray]],
    alpha: float,
    *,
    margin: float,
    scale: str = "difference",
    paired: bool = False,
    statistic: str = "mean",
    unit: str | None = None,
    hypothesis: Hypothesis | None = None,
) -> Decision:
    """Decide ``groups[0]`` and ``groups[1]`` agree within ``margin``.

    ``hypothesis``: the rule's (:class:`~._hypothesis.Hypothesis`), carried by a decision read off an interval.
    """
    (_, a), (_, b) = groups
    n = len(a) if paired and len(a) == len(b) else len(a) + len(b)  # a paired figure's n is its rounds
    log = scale == "log-ratio"
    if log:
        for label, x in groups:
            if np.any(x <= 0):
                bad = float(x[x <= 0][0])
                raise ValueError(f"`scale: log-ratio` needs positive samples; group {label!r} has {bad!r}")
        a, b = np.log(a), np.log(b)
    constants = constant_values(groups)
    if constants is not None and min(len(a), len(b)) >= 2:
        return _constant_pair(rule, groups, alpha, constants, margin, log, unit, statistic, paired)
    if min(len(a), len(b)) < 2:
        return too_few(rule, n, alpha, what="pairs" if paired else "samples per arm")
    robust = statistic == "median"
    est: Location
    if robust:
        est = SignEstimate(a - b) if paired else ShiftEstimate(a, b)
    else:
        est = one_sample(a - b) if paired else welch(a, b)
        if est.se == 0:
            return identical_samples(rule, n, alpha, est.estimate, "mean difference")
    band = math.log1p(margin) if log else margin
    p_holds, p_refuted = est.p_inside(band), est.p_outside(band)
    verdict = verdict_from(p_holds, p_refuted, alpha)
    resolution = mde(est.se, est.df, alpha=alpha) if spendable(alpha) else None
    show = math.exp if log else float
    value, low, high = show(est.estimate), *map(show, est.bounds(alpha))
    level = 1 - 2 * alpha
    what = _LABELS[(robust, paired, log)]
    if log:
        edges = f"[{fmt(1 / (1 + margin))}, {fmt(1 + margin)}]"
    else:
        edges = f"+-{fmt(margin)}{' ' + unit if unit else ''}"
    reason = f"{what} {fmt(value)}, {level_text(level)} CI [{fmt(low)}, {fmt(high)}] {_WHERE[verdict]} {edges}"
    details = {"margin": margin, "scale": scale, "paired": paired, "statistic": statistic, "p_holds": p_holds}
    sd, arms = (est.se * math.sqrt(len(a)), 1) if paired else (_pooled_sd(a, b), 2)
    if (verdict is Verdict.INCONCLUSIVE and resolution is not None and band < resolution
            and math.isfinite(sd) and sd < 1e4 * band):
        needed = required_n(band, sd, alpha=alpha, arms=arms)
        unit_n = "pairs" if paired else "per arm"
        reason += (f" (the margin is finer than this run's 80%-power resolution at n = {len(a)}; "
                   f"about {needed} {unit_n} would resolve it)")
        details["required_n"] = needed
    if log and resolution is not None:
        resolution = math.expm1(resolution) if resolution < 700 else math.inf  # a ratio beyond any float
    return Decision(
        rule=rule, statistic=value, low=low, high=high, confidence_level=level, n=n, verdict=verdict,
        reason=reason, pvalue=p_refuted, hold_pvalue=p_holds, alpha=alpha, mde=resolution,
        estimate_label=what, details=details,
        hypothesis=hypothesis, _interval_at=lambda lv: (show(est.interval(lv)[0]), show(est.interval(lv)[1])),
    )


def _constant_pair(rule: str, groups: list[tuple[str, np.ndarray]], alpha: float, constants: list[float],
                   margin: float, log: bool, unit: str | None, statistic: str, paired: bool) -> Decision:
    """Both arms constant: their difference (or ratio) is decided exactly against the band."""
    (ca, cb) = constants
    if log:
        value, holds = ca / cb, abs(math.log(ca / cb)) <= math.log1p(margin)
        band, label = f"[{fmt(1 / (1 + margin))}, {fmt(1 + margin)}]", f"ratio of {statistic}s"
    else:
        value, holds = ca - cb, abs(ca - cb) <= margin
        band, label = f"+-{fmt(margin)}{' ' + unit if unit else ''}", f"{statistic} difference"
    comparison = f"{fmt(value)} {'lies within' if holds else 'lies outside'} {band}"
    return decide_constant(rule, groups, alpha, value=value, holds=holds, comparison=comparison, label=label,
                           statistic=statistic, paired=paired)


def _pooled_sd(a: np.ndarray, b: np.ndarray) -> float:
    """Per-arm SD for an equal-n design with the same standard error: ``sqrt((va + vb) / 2)``."""
    return math.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 2)
