"""``at_least`` / ``at_most``: a one-sided bound on a mean or a median.

Each side of the reported interval is a one-sided ``1 - alpha`` bound, so together they form a
``1 - 2 alpha`` interval: HOLDS when it lies on the claimed side of the threshold (false-holds
rate <= alpha), REFUTED when it lies on the other side (false-refutation rate <= alpha).
Means use the t interval; medians the exact order-statistic interval (sign test), which needs
no distributional assumption and suits skewed timing samples.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision, too_few, verdict_from
from ._estimate import mean_var, median_bounds, one_sample, sign_pvalues
from ._power import mde

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
) -> Decision:
    """Decide ``statistic(groups[0]) >= threshold`` (``at_least``) or ``<= threshold`` (``at_most``)."""
    x = groups[0][1]
    n = len(x)
    if statistic == "mean":
        if n < 2:
            return too_few(rule, n, alpha)
        est = one_sample(x)
        value, (low, high) = est.estimate, est.bounds(alpha)
        p_above, p_below = est.p_greater(threshold), est.p_less(threshold)
        resolution: float | None = mde(est.se, est.df, alpha=alpha)
        interval_at: Callable[[float], tuple[float, float]] = est.interval
    else:
        value = float(np.median(x))
        low, high = median_bounds(x, alpha)
        p_above, p_below = sign_pvalues(x, threshold)
        # asymptotic SE of the median under normal noise: sqrt(pi/2) * sd / sqrt(n)
        resolution = (
            mde(math.sqrt(math.pi / 2 * mean_var(x)[1] / n), n - 1, alpha=alpha)
            if n >= 2
            else None
        )

        def median_interval(level: float) -> tuple[float, float]:
            return median_bounds(x, (1 - level) / 2)

        interval_at = median_interval

    at_least = rule == "at_least"
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
        reason=reason, pvalue=p_refuted, alpha=alpha, mde=resolution, estimate_label=statistic,
        details={"threshold": threshold, "p_holds": p_holds}, _interval_at=interval_at,
    )
