"""``relation``: the sign of an association between two measured quantities, from an interval.

"Repetition falls as cross-entropy rises" is a claim about how one output moves with another
across items (prompts, seeds) or across the levels of a sweep, not about either output's level.
Two measures, each with one-sided bounds at ``alpha`` on each side (a ``1 - 2 alpha`` interval),
HOLDS when the interval lies on the claimed side of ``threshold`` and REFUTED when it lies on the
other side:

- ``spearman``: Spearman's rank correlation (``scipy.stats.spearmanr``), with the Fisher-z interval
  and the Bonett–Wright standard error ``sqrt((1 + r^2 / 2) / (n - 3))`` (Bonett & Wright 2000,
  Psychometrika 65: 23-28), which scipy does not provide; insensitive to any monotone rescaling.
- ``slope``: the least-squares slope (``scipy.stats.linregress``) with its t interval on n - 2
  degrees of freedom, in the output's units per unit of the predictor.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as scipy_stats

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision, identical_samples, too_few, verdict_from

MEASURES = ("spearman", "slope")
SIGNS = ("positive", "negative")


def decide_relation(
    rule: str,
    x: np.ndarray,
    y: np.ndarray,
    alpha: float,
    *,
    measure: str = "spearman",
    sign: str = "negative",
    threshold: float = 0.0,
    x_name: str = "x",
    y_name: str = "y",
) -> Decision:
    """Decide ``measure(x, y) > threshold`` (``sign: positive``) or ``< threshold`` (``negative``).

    Raises:
        ValueError: an unknown measure or sign, arrays of different lengths, or a correlation
            threshold outside (-1, 1).
    """
    if measure not in MEASURES or sign not in SIGNS:
        raise ValueError(f"`measure` must be one of {MEASURES} and `sign` one of {SIGNS}; got {measure!r}, {sign!r}")
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"a relation needs one {x_name} per {y_name}; got {x.size} and {y.size}")
    n = int(x.size)
    need = 4 if measure == "spearman" else 3
    if n < need:
        return too_few(rule, n, alpha, need=need, what="pairs")
    label = f"Spearman's rho of {y_name} on {x_name}" if measure == "spearman" else f"slope of {y_name} on {x_name}"
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return identical_samples(rule, n, alpha, math.nan, label)
    if measure == "spearman":
        if not -1 < threshold < 1:
            raise ValueError(f"a correlation threshold must lie in (-1, 1); got {threshold:g}")
        value = float(scipy_stats.spearmanr(x, y).statistic)
        value = max(-1 + 1e-12, min(1 - 1e-12, value))  # a perfect rank order: the interval stays finite
        z, se = math.atanh(value), math.sqrt((1 + value**2 / 2) / (n - 3))
        distance = (z - math.atanh(threshold)) / se
        p_above, p_below = float(scipy_stats.norm.sf(distance)), float(scipy_stats.norm.cdf(distance))
        quantile = float(scipy_stats.norm.isf(alpha))
        low, high = math.tanh(z - quantile * se), math.tanh(z + quantile * se)
        details: dict[str, object] = {"z": z, "se_z": se}
    else:
        fit = scipy_stats.linregress(x, y)
        value, se, df = float(fit.slope), float(fit.stderr), n - 2
        if se == 0:  # every point on one line: the slope is known exactly
            p_above, p_below = (0.0, 1.0) if value > threshold else (1.0, 0.0) if value < threshold else (1.0, 1.0)
            low = high = value
        else:
            t = (value - threshold) / se
            p_above, p_below = float(scipy_stats.t.sf(t, df)), float(scipy_stats.t.cdf(t, df))
            quantile = float(scipy_stats.t.isf(alpha, df))
            low, high = value - quantile * se, value + quantile * se
        details = {"se": se, "intercept": float(fit.intercept)}
    positive = sign == "positive"
    p_holds, p_refuted = (p_above, p_below) if positive else (p_below, p_above)
    verdict = verdict_from(p_holds, p_refuted, alpha)
    side = {Verdict.HOLDS: "lies " + ("above" if positive else "below"),
            Verdict.REFUTED: "lies " + ("below" if positive else "above"),
            Verdict.INCONCLUSIVE: "contains"}[verdict]
    level = 1 - 2 * alpha
    reason = (f"{label} {fmt(value)} over {n} pairs, {level_text(level)} CI [{fmt(low)}, {fmt(high)}] {side} "
              f"{fmt(threshold)}")
    return Decision(
        rule=rule, statistic=value, low=low, high=high, confidence_level=level, n=n, verdict=verdict, reason=reason,
        pvalue=p_refuted, hold_pvalue=p_holds, alpha=alpha, mde=None, estimate_label=label,
        details={"measure": measure, "sign": sign, "threshold": threshold, **details},
    )


def relation_value(x: np.ndarray, y: np.ndarray, measure: str) -> float:
    """The measure itself, for an exact decision on a deterministic probe's values."""
    if measure == "spearman":
        return float(scipy_stats.spearmanr(x, y).statistic)
    return float(scipy_stats.linregress(x, y).slope)
