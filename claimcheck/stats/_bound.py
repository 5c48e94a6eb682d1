"""``at_least`` / ``at_most``: a one-sided bound on a mean or a median.

Each side of the reported interval is a one-sided ``1 - alpha`` bound, so together they form a
``1 - 2 alpha`` interval: HOLDS when it lies on the claimed side of the threshold (false-holds
rate <= alpha), REFUTED when it lies on the other side (false-refutation rate <= alpha).
Means use the t interval; medians the exact order-statistic interval (sign test), which needs
no distributional assumption and suits skewed timing samples (:mod:`._robust`). Samples all
equal within rounding estimate no noise; they are read as a constant and decided exactly
(:mod:`._constant`), and the reason says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._constant import constant_value, decide_constant
from ._decision import Decision, identical_samples, spendable, too_few, verdict_from
from ._estimate import Location, TEstimate, one_sample
from ._hypothesis import Hypothesis
from ._power import mde
from ._robust import SignEstimate

_SIDE = {
    Verdict.HOLDS: "lies {claimed} the threshold",
    Verdict.REFUTED: "lies {other} the threshold",
    Verdict.INCONCLUSIVE: "contains the threshold",
}


def decide_bound(
    rule: str,
    groups: list[tuple[str, np.ndarray]],
    alpha: float,
    *,
    threshold: float,
    statistic: str = "mean",
    unit: str | None = None,
    hypothesis: Hypothesis | None = None,
) -> Decision:
    """Decide ``statistic(groups[0]) >= threshold`` (``at_least``) or ``<= threshold`` (``at_most``).

    ``hypothesis``: the rule's (:class:`~._hypothesis.Hypothesis`), carried by a decision read off an interval.
    """
    x = groups[0][1]
    n = len(x)
    if n < 2:
        return too_few(rule, n, alpha)
    at_least = rule == "at_least"
    constant = constant_value(x)
    if constant is not None:
        holds = constant >= threshold if at_least else constant <= threshold
        sign = (">=" if at_least else "<=") if holds else ("<" if at_least else ">")
        shown = f"{fmt(constant)}{' ' + unit if unit else ''} {sign} {fmt(threshold)}"
        return decide_constant(rule, groups, alpha, value=constant, holds=holds, comparison=shown, label=statistic,
                               statistic=statistic)
    est: Location = SignEstimate(x) if statistic == "median" else one_sample(x)
    if isinstance(est, TEstimate) and est.se == 0:
        return identical_samples(rule, n, alpha, est.estimate, statistic)
    value, (low, high) = est.estimate, est.bounds(alpha)
    p_above, p_below = est.p_greater(threshold), est.p_less(threshold)
    resolution = mde(est.se, est.df, alpha=alpha) if math.isfinite(est.se) and spendable(alpha) else None
    interval_at: Callable[[float], tuple[float, float]] = est.interval
    p_holds, p_refuted = (p_above, p_below) if at_least else (p_below, p_above)
    verdict = verdict_from(p_holds, p_refuted, alpha)
    claimed, other = ("above", "below") if at_least else ("below", "above")
    level = 1 - 2 * alpha
    reason = (
        f"{statistic} {fmt(value)}{' ' + unit if unit else ''}, {level_text(level)} CI "
        f"[{fmt(low)}, {fmt(high)}] {_SIDE[verdict].format(claimed=claimed, other=other)} {fmt(threshold)}"
    )
    if low == high == threshold:
        reason += " (all samples equal the threshold)"
    return Decision(
        rule=rule, statistic=value, low=low, high=high, confidence_level=level, n=n, verdict=verdict,
        reason=reason, pvalue=p_refuted, hold_pvalue=p_holds, alpha=alpha, mde=resolution, estimate_label=statistic,
        details={"threshold": threshold, "statistic": statistic, "p_holds": p_holds}, hypothesis=hypothesis,
        _interval_at=interval_at,
    )
