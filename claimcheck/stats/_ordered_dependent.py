"""Ordered groups on serially dependent samples: each step decided through bounds that keep the magnitude.

``ordering`` and ``monotone`` compare groups step by step (:mod:`._steps`) with Welch or
Mann–Whitney / sign-test intervals, which assume independent samples. When the noise gate flags a
group's samples as serially dependent those intervals cannot decide, and before this module the item
stayed undecided whatever the effect: on a 2-core CPU `qmv-bw-rises-with-size-portable` (steps of
0.011-0.014 GB/s with every sample in order) and its control (the order reversed) both ended
inconclusive. :func:`decide_ordered_dependent` re-decides each comparison without that assumption:

- **a group's median** is bounded by the two tests of :mod:`._dependent`: the sign test on its
  effective n at 0.8 of the level and the long-run interval through the mean, widened by the SD, at 0.2
  (Bonferroni). A mean (``statistic: mean``) stays undecided (None): a timing mean is never decided
  (:func:`claimcheck.engine.adjudicate.gate_noise`), and only timing items pass the noise gate;
- **unpaired groups**: group i lies above group j at level ``a`` when some value ``c`` has
  ``median_i > c`` at ``a / 2`` and ``median_j < c`` at ``a / 2``. A false order needs one of the two
  bounds to miss, so the chance is at most ``a`` whatever the correlation between the groups; the
  p-value is the smallest such ``a`` over ``c``. It is conservative (two bounds, not one interval on
  the difference), which costs power on small steps and nothing on the large ones it exists for;
- **paired groups** (``paired: true``): the per-pair differences of the two groups are one dependent
  series, decided as a paired figure is.

Steps and pairs combine as in :mod:`._steps`: HOLDS when every adjacent step holds at ``alpha``
(intersection-union), REFUTED when any pair is reversed under Holm at ``alpha``. A step's tolerance
(``monotone`` with ``strict: false``) shifts the groups as the rule does. Groups of fewer than
:data:`~._dependent.MIN_N` samples stay undecided (None).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision
from ._dependent import MAGNITUDE_SHARE, MIN_N, _InflatedSign, _sign_factor
from ._long_run import LongRunEstimate
from ._steps import holm, steps_said

_BISECTIONS = 32  # halvings of the search range: far below any sample's resolution
_REACH = 12  # widenings of an interval's search before its end is read as infinite


@dataclass(frozen=True)
class Bounded:
    """One series' median bounded without assuming independent samples: the two tests of :mod:`._dependent`."""

    x: np.ndarray = field(repr=False)
    lags: int

    @cached_property
    def _sign(self) -> _InflatedSign:
        return _InflatedSign(self.x, _sign_factor(self.x, self.lags)[0])

    @cached_property
    def _size(self) -> LongRunEstimate:
        return LongRunEstimate(self.x)

    @property
    def estimate(self) -> float:
        """The series' median."""
        return float(np.median(self.x))

    @property
    def effective_n(self) -> float:
        """Samples over the larger dependence factor of the two tests."""
        return len(self.x) / max(self._size.factor, self._sign.f)

    def p_greater(self, value: float) -> float:
        """p-value against ``median <= value``."""
        return min(1.0, self._sign.p_greater(value) / (1 - MAGNITUDE_SHARE),
                   self._size.p_greater(value) / MAGNITUDE_SHARE)

    def p_less(self, value: float) -> float:
        """p-value against ``median >= value``."""
        return min(1.0, self._sign.p_less(value) / (1 - MAGNITUDE_SHARE), self._size.p_less(value) / MAGNITUDE_SHARE)

    def bounds(self, alpha: float) -> tuple[float, float]:
        """One-sided ``1 - alpha`` bounds on the median (the two tests' intersection)."""
        sign_low, sign_high = self._sign.bounds((1 - MAGNITUDE_SHARE) * alpha)
        size_low, size_high = self._size.bounds(MAGNITUDE_SHARE * alpha)
        low, high = max(sign_low, size_low), min(sign_high, size_high)
        return (low, high) if low <= high else (min(sign_low, size_low), max(sign_high, size_high))


@dataclass(frozen=True)
class _Compared:
    """Group ``hi`` against group ``lo``: p-values of each order and an interval on their difference."""

    hi: Bounded
    lo: Bounded | None = None  # None: ``hi`` holds per-pair differences

    @property
    def estimate(self) -> float:
        return self.hi.estimate - (self.lo.estimate if self.lo is not None else 0.0)

    def p_above(self) -> float:
        """p-value against ``hi <= lo``."""
        return self.hi.p_greater(0.0) if self.lo is None else _separated(self.hi, self.lo)

    def p_below(self) -> float:
        """p-value against ``hi >= lo``."""
        return self.hi.p_less(0.0) if self.lo is None else _separated(self.lo, self.hi)

    def lower(self, alpha: float) -> float:
        """The largest difference ``d`` that ``hi - lo > d`` still rejects at ``alpha``."""
        if self.lo is None:
            return self.hi.bounds(alpha)[0]
        lo = self.lo
        return _switch(lambda d: _separated(self.hi, lo, d) <= alpha, self.estimate, self._span, below=True)

    def upper(self, alpha: float) -> float:
        """The smallest difference ``d`` that ``hi - lo < d`` still rejects at ``alpha``."""
        if self.lo is None:
            return self.hi.bounds(alpha)[1]
        lo = self.lo
        return _switch(lambda d: _separated(lo, self.hi, -d) <= alpha, self.estimate, self._span, below=False)

    @property
    def _span(self) -> float:
        values = np.concatenate([self.hi.x, self.lo.x]) if self.lo is not None else self.hi.x
        return float(np.ptp(values)) or abs(self.estimate) or 1.0


def _separated(hi: Bounded, lo: Bounded, shift: float = 0.0) -> float:
    """The smallest ``a`` at which a value ``c`` has ``hi > c + shift`` at ``a / 2`` and ``lo < c`` at ``a / 2``.

    ``hi.p_greater`` rises with ``c`` and ``lo.p_less`` falls, so the larger of the two is least where
    they cross: found by bisection over ``c``.
    """
    low, high = float(min(hi.x.min() - shift, lo.x.min())), float(max(hi.x.max() - shift, lo.x.max()))
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        if hi.p_greater(middle + shift) < lo.p_less(middle):
            low = middle
        else:
            high = middle
    return min(1.0, 2 * min(max(hi.p_greater(c + shift), lo.p_less(c)) for c in (low, high)))


def _switch(rejects: Callable[[float], bool], start: float, span: float, below: bool) -> float:
    """Where a test of ``difference <= d`` (``below``: rejected for small ``d``) or ``>= d`` stops or starts
    rejecting: an interval's end read off the test itself, so interval and verdict agree.

    Infinite when the test rejects nowhere within :data:`_REACH` spans of ``start``.
    """
    low, high = start - span, start + span
    for _ in range(_REACH):
        if rejects(low) == below:
            break
        low -= span * 2
    else:
        return -math.inf if below else low
    for _ in range(_REACH):
        if rejects(high) != below:
            break
        high += span * 2
    else:
        return high if below else math.inf
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        if rejects(middle) == below:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def decide_ordered_dependent(decision: Decision, groups: Sequence[tuple[str, np.ndarray]], alpha: float,
                             problem: str, *, lags: int = 1) -> Decision | None:
    """``decision`` (an ordered hypothesis) re-decided step by step without assuming independent samples, or None."""
    hypothesis = decision.hypothesis
    if (hypothesis is None or not hypothesis.ordered or hypothesis.statistic != "median" or len(groups) < 2
            or min(len(x) for _, x in groups) < MIN_N):
        return None
    paired = hypothesis.paired and len({len(x) for _, x in groups}) == 1
    tolerance = float(hypothesis.threshold or 0.0)
    step = tolerance if hypothesis.bound == "increasing" else -tolerance
    shifted = [(label, np.asarray(x, dtype=float) + i * step) for i, (label, x) in enumerate(groups)]
    ordered = shifted[::-1] if hypothesis.bound == "increasing" else shifted  # first largest
    levels = [Bounded(x, lags) for _, x in ordered]

    def compare(i: int, j: int) -> _Compared:
        if paired:
            return _Compared(Bounded(ordered[i][1] - ordered[j][1], lags))
        return _Compared(levels[i], levels[j])

    pairs = [(i, j) for i in range(len(ordered)) for j in range(i + 1, len(ordered))]
    compared = {pair: compare(*pair) for pair in pairs}
    reversal = [compared[pair].p_below() for pair in pairs]
    adjusted = holm(reversal)
    m, k = len(pairs), len(ordered) - 1
    steps = []
    for i in range(k):
        p_holds, p_refuted = compared[(i, i + 1)].p_above(), adjusted[pairs.index((i, i + 1))]
        verdict = (Verdict.REFUTED if p_refuted <= alpha else Verdict.HOLDS if p_holds <= alpha
                   else Verdict.INCONCLUSIVE)
        steps.append((f"{ordered[i][0]} > {ordered[i + 1][0]}", (i, i + 1), p_holds, p_refuted, verdict))
    reversed_pairs = [pair for pair, p in zip(pairs, adjusted) if p <= alpha]
    if reversed_pairs:
        verdict = Verdict.REFUTED
        key = min(reversed_pairs, key=lambda pair: adjusted[pairs.index(pair)])
    else:
        verdict = Verdict.HOLDS if all(s[4] is Verdict.HOLDS for s in steps) else Verdict.INCONCLUSIVE
        key = max(steps, key=lambda s: s[2])[1]
    name = f"{ordered[key[0]][0]} > {ordered[key[1]][0]}"
    alpha_refute = alpha / m
    intervals = {pair: (compared[pair].lower(alpha), compared[pair].upper(alpha_refute))
                 for pair in {key, *(s[1] for s in steps)}}  # each searched once: a bisection over bisections
    chosen, (low, high) = compared[key], intervals[key]
    kind = "median" + (" of per-pair differences" if paired else " difference")
    ci = f"{kind} {fmt(chosen.estimate)}, {level_text(1 - alpha - alpha_refute)} CI [{fmt(low)}, {fmt(high)}]"
    said = steps_said(verdict, name, ci, m, k, sum(s[4] is Verdict.INCONCLUSIVE for s in steps))
    how = "each step's per-pair differences" if paired else "each group's median"
    tests = (f"the sign test on its effective n at {1 - MAGNITUDE_SHARE:g} of the level and the long-run interval "
             f"through the mean, widened by the SD, at {MAGNITUDE_SHARE:g}")
    effective = ", ".join(f"{label} {b.effective_n:.1f} of {len(b.x)}" for (label, _), b in zip(ordered, levels))
    reason = (f"{problem}; decided on effective n: {said} ({how} bounded by {tests}"
              f"{'' if paired else '; two groups compared at half the level each'}; effective n {effective})")
    return Decision(
        rule=decision.rule, statistic=chosen.estimate, low=low, high=high, confidence_level=1 - alpha - alpha_refute,
        n=decision.n, verdict=verdict, reason=reason, pvalue=min(adjusted), hold_pvalue=max(s[2] for s in steps),
        alpha=alpha, mde=None, estimate_label=f"{kind} {name}", hypothesis=hypothesis,
        details={**decision.details, "p_holds": max(s[2] for s in steps),
                 "steps": [{"step": s[0], "difference": compared[s[1]].estimate, "low": intervals[s[1]][0],
                            "high": intervals[s[1]][1], "p_holds": s[2], "p_refuted": s[3],
                            "verdict": s[4].value} for s in steps],
                 "pairs": [{"pair": f"{ordered[i][0]} > {ordered[j][0]}", "p_refuted": p, "holm": h}
                           for (i, j), p, h in zip(pairs, reversal, adjusted)],
                 "dependence": {"paired": paired, "effective_n": {label: b.effective_n
                                                                  for (label, _), b in zip(ordered, levels)},
                                "lags": lags}},
    )


def is_ordered(decision: Decision) -> bool:
    """Whether the decision tested an order of groups (the dependence gate re-decides it here)."""
    return decision.hypothesis is not None and decision.hypothesis.ordered


__all__ = ["Bounded", "decide_ordered_dependent", "is_ordered"]
