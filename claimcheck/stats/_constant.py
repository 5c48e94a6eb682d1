"""Samples that are all equal within rounding: read as a constant and decided exactly.

An output that comes out the same in every sample (an error that is exactly 0, a constant error
3x over its threshold, a count) estimates no noise, so no t or rank interval can be built from
it; yet it is the clearest evidence a repeated probe can give. Read as a constant, it is
decided exactly against the threshold, with the p-value of the reading used; which reading
depends on the statistic the claim is about, and the reason names it:

- the median: if ``v`` occurred in at most half of all runs, ``n`` samples would all equal ``v``
  with probability at most ``0.5**n``. So ``0.5**n`` (summed over independent groups, a union
  bound) is a valid p-value against "``v`` is not the median", and at ``0.5**n <= alpha`` the
  median is ``v``: 5 samples at alpha = 0.05, 40 at the floor of a look that may not spend.
- the mean: no number of equal samples bounds a mean (a rare far value moves it), so the
  reading is weaker and says so: runs that depart from ``v`` are rarer than
  :data:`DEPARTURE_SHARE` (one in twenty), with p-value ``(1 - 1/20)**n``: 59 samples at
  alpha = 0.05. An output that departs in 1 run of 3 (9, 9, 12) repeats itself 8 times with
  probability 0.04, which a median-style reading would take as proof about its mean.

Fewer samples stay inconclusive, with the n that would decide.

"Within rounding" is a relative spread of at most :data:`ROUNDING` (a few float32 ulps: the
order of a parallel reduction moves the last bits), or every sample exactly 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision, verdict_from

ROUNDING = 1e-6
DEPARTURE_SHARE = 0.05  # a mean's constant reading: runs that depart are shown rarer than this


def constant_value(x: np.ndarray) -> float | None:
    """The value every sample of ``x`` equals within rounding, or None."""
    if len(x) == 0:
        return None
    scale = float(np.max(np.abs(x)))
    return float(np.median(x)) if float(np.ptp(x)) <= ROUNDING * scale else None


def constant_values(groups: Sequence[tuple[str, np.ndarray]]) -> list[float] | None:
    """Each group's constant value, or None when any group varies."""
    values = [constant_value(x) for _, x in groups]
    return None if any(v is None for v in values) else [float(v) for v in values if v is not None]


def samples_to_decide(alpha: float, statistic: str = "median") -> int:
    """Smallest n whose constant reading reaches ``alpha``: ``0.5**n`` (median), ``0.95**n`` (mean)."""
    stays = 1 - _share(statistic)
    return max(1, math.ceil(math.log(alpha) / math.log(stays) - 1e-9))


def _share(statistic: str) -> float:
    return 0.5 if statistic == "median" else DEPARTURE_SHARE


def decide_constant(
    rule: str,
    groups: Sequence[tuple[str, np.ndarray]],
    alpha: float,
    *,
    value: float,
    holds: bool,
    comparison: str,
    label: str,
    statistic: str,
    paired: bool = False,
) -> Decision:
    """Decide a constant reading: ``holds`` says whether ``value`` lies on the claimed side.

    Args:
        groups: the sample groups, every one constant (:func:`constant_values`).
        value: the figure the constants give (the value, a ratio, a difference).
        comparison: the comparison in words, e.g. ``0 <= 3e-05`` or ``2.9 > 1``.
        label: what ``value`` is ("mean", "ratio of medians").
        statistic: ``median`` or ``mean``: which reading (see the module docstring).
        paired: the groups are rounds of one interleaved run: one constant per-round contrast,
            not independent constants to be bounded together.
    """
    sizes = [len(groups[0][1])] if paired else [len(x) for _, x in groups]
    n = sum(sizes)
    stays = 1 - _share(statistic)
    p_shown = min(1.0, sum(stays**k for k in sizes))
    p_holds, p_refuted = (p_shown, 1.0) if holds else (1.0, p_shown)
    verdict = verdict_from(p_holds, p_refuted, alpha)
    seen = (f"all {min(sizes)} {'rounds' if paired else 'samples'}" if len(sizes) == 1
            else f"every sample of each of {len(sizes)} groups")
    details: dict[str, object] = {"reading": f"constant ({statistic})", "p_holds": p_holds}
    shown = (f"the median is {fmt(value)}" if statistic == "median"
             else "runs that depart from it are rarer than 1 in 20 (the reading for a mean)")
    if verdict is Verdict.INCONCLUSIVE:
        needed = samples_to_decide(alpha / len(sizes), statistic)
        details["required_n"] = needed
        as_median = samples_to_decide(alpha / len(sizes))
        other = "" if statistic == "median" else f", or {as_median} with `statistic: median`"
        reason = (f"{label} {fmt(value)}: {seen} equal within rounding, read as a constant ({comparison}), "
                  f"but {min(sizes)} cannot show {shown}; {needed} would{other}")
    else:
        reason = (f"{label} {fmt(value)}: {seen} equal within rounding, read as a constant: {shown} "
                  f"(p = {fmt(p_shown)} otherwise), decided exactly: {comparison}")
    return Decision(
        rule=rule, statistic=value, low=value, high=value, confidence_level=1 - 2 * alpha, n=n, verdict=verdict,
        reason=reason, pvalue=p_refuted, hold_pvalue=p_holds, alpha=alpha, mde=None, estimate_label=label,
        details=details,
    )
