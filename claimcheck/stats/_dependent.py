"""A median decided on serially dependent samples: two tests, one for the signs and one for the size.

The sign test. Under serial dependence the sign test's count of samples above a value varies
more than a binomial count: for AR(1) noise of lag-1 correlation ``r`` by the factor
``(1 + r) / (1 - r)`` (the long-run variance of the indicators is at most that of the samples, so
the factor read off the samples' rank autocorrelation is conservative for Gaussian noise). The
test here uses it: normal approximation of the count with variance ``n f / 4``
(continuity-corrected), bounds the order statistics at ``n / 2 -+ z sqrt(n f) / 2``, so a run of
n dependent samples decides as ``n / f`` independent ones would (its effective n). ``r`` is the
lag-1 rank autocorrelation with Kendall's bias correction for AR(1), ``r1 + (1 + 4 r1) / n`` (at
n = 30 and rho = 0.8 the raw estimate is 0.12 low, which made the test too liberal).

The size. Signs throw the magnitude away: twelve per-round ratios of 0.036-0.070 against a
threshold of 1 gave an effective n of 3.7 and a repeated 90% CI of [-inf, inf]. The second test
is an interval on the median through the mean with a long-run variance, widened by the SD
(:class:`~._long_run.LongRunEstimate`); it decides an effect more than about one SD of the series
from the claimed value, at any n from :data:`MIN_N`, and nothing smaller.

How they combine, fixed before any sample is seen: at the plan's last look the sign test runs at
``(1 - MAGNITUDE_SHARE) alpha_k`` and the size test at ``MAGNITUDE_SHARE alpha_k`` (0.8 / 0.2); a
verdict either reaches stands, and by Bonferroni the chance of a false one is at most ``alpha_k``.
The reported interval is the intersection of the two (a ``1 - 2 alpha_k`` interval of the median,
finite once either decides), the p-values ``min(p_sign / 0.8, p_size / 0.2)``. The cost is the sign
test's level: small effects, which only it decides, lose a little power (docs/statistics.md). An
earlier look of a paired item runs the sign test alone at its full level (:func:`paired_effective`):
a run that stops at 8 rounds on their size has often seen one clock state only (with the size test
at every look, the paired ratio under regime blocks stopped sooner, E[n] 27.9 against 28.8, and its
false holds rose from 0.075 to 0.095 in 200 runs).

It decides the quantity a median decision tests, read off the decision's
:class:`~._hypothesis.Hypothesis` (never the rule's name): the median of one output (``at_least`` /
``at_most``), of the per-round ratios (a paired figure on the log scale: ``ratio``) and of the
per-round differences or log-ratios (a paired band: ``equivalent``). Any other decision stays
undecided under dependence (:func:`decide_dependent` returns None). A paired hypothesis takes it at
every look of a timing item whether the gate flagged it or not (:func:`paired_effective`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol

import numpy as np
from scipy import special

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision, verdict_from
from ._hypothesis import Hypothesis
from ._long_run import LongRunEstimate
from ._noise import rank_lag, rank_lag1

MAX_CORRELATION = 0.95  # beyond it the effective n is below 1 in 40 samples: nothing decides anyway
MIN_N = 6  # below it neither test reads a dependence (a lag-1 autocorrelation of 5 samples says nothing)
MAGNITUDE_SHARE = 0.2  # of a look's alpha, pre-declared for the long-run interval; the sign test keeps the rest


class _InflatedSign:
    """Sign-test p-values and order-statistic bounds of ``x`` with the count's variance times ``f``."""

    def __init__(self, x: np.ndarray, f: float) -> None:
        self.x, self.f, self.n = np.sort(x), f, len(x)

    def _tail(self, count: int) -> float:
        """P(count or fewer) under the median hypothesis."""
        return float(special.ndtr((count + 0.5 - self.n / 2) / math.sqrt(self.n * self.f / 4)))

    def p_greater(self, value: float) -> float:
        """p-value against ``median <= value`` (ties count against)."""
        return self._tail(int(np.sum(self.x <= value)))

    def p_less(self, value: float) -> float:
        """p-value against ``median >= value``."""
        return self._tail(int(np.sum(self.x >= value)))

    def bounds(self, alpha: float) -> tuple[float, float]:
        """One-sided ``1 - alpha`` bounds (order statistics; unbounded when n_eff is too small).

        The test inverted, continuity correction included: a value lies below the lower bound exactly
        when :meth:`p_greater` rejects it at ``alpha`` (a count of at most ``k - 1`` samples at or below
        it), so a verdict and its interval never disagree.
        """
        k = math.floor(self.n / 2 + 0.5 - special.ndtri(1 - alpha) * math.sqrt(self.n * self.f) / 2)
        if k < 1:
            return -math.inf, math.inf
        return float(self.x[k - 1]), float(self.x[self.n - k])


def decide_dependent(decision: Decision, groups: Sequence[tuple[str, np.ndarray]], alpha: float,
                     problem: str, *, lags: int = 1, size_share: float = MAGNITUDE_SHARE) -> Decision | None:
    """``decision`` re-decided on its tested quantity by the two dependence-robust tests, or None.

    The sign test with its variance inflated runs at ``(1 - size_share) alpha``, the long-run
    interval (:class:`~._long_run.LongRunEstimate`) at ``size_share alpha``; a verdict either
    reaches stands (Bonferroni: the chance of a false one is at most ``alpha``), and the interval
    is the intersection of the two, which covers the median at ``1 - 2 alpha``. ``size_share = 0``
    is the sign test alone at the full ``alpha`` (a look that may not stop on the effect's size).

    ``lags > 1`` also reads the sign test's long-run factor ``1 + 2 sum_k r_k`` over that many lags
    (at most a third of the samples; each bias-corrected by ``+1/n``) and keeps the larger: a
    contrast of an AR(1) arm and an independent one is not AR(1) (lag k correlation ``rho^k / 2``),
    and its lag 1 alone understates the factor (2.3 against 5 at rho = 0.8); clock states held for
    blocks of samples correlate every lag inside a block, where lag 1 alone gave an effective n of
    6-8 to runs that held 2-3 blocks.
    """
    series, transform, label = _tested(decision, groups)
    if series is None or len(series) < MIN_N:
        return None
    if not 0 <= size_share < 1:
        raise ValueError(f"`size_share` must lie in [0, 1); got {size_share!r}")
    f, factor = _sign_factor(series, lags)
    hypothesis = decision.hypothesis
    assert hypothesis is not None  # _tested found a series only for a decision with one
    sign = _InflatedSign(series, f)
    size = LongRunEstimate(series)
    sign_alpha, size_alpha = (1 - size_share) * alpha, size_share * alpha
    by_sign, claimed = _pvalues(sign, hypothesis, transform)
    by_size, _ = _pvalues(size, hypothesis, transform) if size_share > 0 else ((1.0, 1.0), "")
    p_holds = min(1.0, by_sign[0] / (1 - size_share), by_size[0] / size_share if size_share > 0 else 1.0)
    p_refuted = min(1.0, by_sign[1] / (1 - size_share), by_size[1] / size_share if size_share > 0 else 1.0)
    verdict = verdict_from(p_holds, p_refuted, alpha)
    low, high = sign.bounds(sign_alpha)
    if size_share > 0:
        size_low, size_high = size.bounds(size_alpha)
        if max(low, size_low) <= min(high, size_high):
            low, high = max(low, size_low), min(high, size_high)
        else:  # the two intervals miss each other (a chance of at most 2 alpha): report what spans both
            low, high = min(low, size_low), max(high, size_high)
    back = math.exp if transform is math.log else float
    low, high = (back(v) if math.isfinite(v) else v for v in (low, high))
    estimate = back(float(np.median(series)))
    n = len(series)
    decided = "neither test decides"
    if verdict is not Verdict.INCONCLUSIVE:
        tested = 1 if verdict is Verdict.REFUTED else 0
        decided = "decided by the effect's size" if by_size[tested] <= size_alpha else "decided by the sign test"
    sign_said = f"sign test at {fmt(sign_alpha)}, variance inflated by {factor}, effective n {n / f:.1f} of {n})"
    if size_share > 0:
        said = (f"effect size at {fmt(size_alpha)}: mean{' log' if transform is math.log else ''} "
                f"{fmt(size.mean)}, long-run SE over {size.q} cosine terms, dependence factor {size.factor:.2f}, "
                f"effective n {n / size.factor:.1f} of {n}, widened by the SD {fmt(size.gap)} (the most a mean "
                f"lies from a median); {sign_said}")
    else:
        said = f"the sign test alone at this look: {sign_said}"
        decided = "undecided" if verdict is Verdict.INCONCLUSIVE else "decided by the sign test"
    reason = (f"{problem}; {decided}: {label} {fmt(estimate)}, {level_text(1 - 2 * alpha)} CI [{fmt(low)}, "
              f"{fmt(high)}], {verdict.value} against {claimed} ({said})")
    dependence = {"r": _r_of(series), "inflation": f, "size_share": size_share, "sign_pvalues": list(by_sign)}
    if size_share > 0:
        dependence |= {"long_run_factor": size.factor, "cosine_terms": size.q, "gap": size.gap,
                       "size_pvalues": list(by_size)}
    return Decision(
        rule=decision.rule, statistic=estimate, low=low, high=high, confidence_level=1 - 2 * alpha, n=n,
        verdict=verdict, reason=reason, pvalue=p_refuted, hold_pvalue=p_holds, alpha=alpha, mde=None,
        estimate_label=label, details={**decision.details, "p_holds": p_holds, "dependence": dependence},
        hypothesis=hypothesis,
    )


class _Tests(Protocol):
    def p_greater(self, value: float) -> float: ...  # noqa: D102
    def p_less(self, value: float) -> float: ...  # noqa: D102


def _pvalues(test: _Tests, hypothesis: Hypothesis,
             transform: Callable[[float], float]) -> tuple[tuple[float, float], str]:
    """(p against the claim failing, p against it holding) of one test, and the claim in words."""
    if hypothesis.bound == "within":
        band = math.log1p(hypothesis.edge) if hypothesis.scale == "log" else hypothesis.edge
        p_holds = max(test.p_greater(-band), test.p_less(band))
        p_refuted = min(1.0, 2 * min(test.p_greater(band), test.p_less(-band)))
        return (p_holds, p_refuted), "within the margin"
    value = transform(hypothesis.edge)
    above, below = test.p_greater(value), test.p_less(value)
    claimed = f"{'at least' if hypothesis.at_least else 'at most'} {fmt(hypothesis.edge)}"
    return ((above, below) if hypothesis.at_least else (below, above)), claimed


def _r_of(series: np.ndarray) -> float:
    """Lag-1 rank autocorrelation with Kendall's AR(1) bias correction, capped at :data:`MAX_CORRELATION`."""
    r1 = rank_lag1(series)
    return min(MAX_CORRELATION, max(0.0, r1 + (1 + 4 * max(r1, 0.0)) / len(series)))


def _sign_factor(series: np.ndarray, lags: int) -> tuple[float, str]:
    """The sign test's variance factor and its words (the AR(1) factor, or the long-run one when larger)."""
    r = _r_of(series)
    f = (1 + r) / (1 - r)
    factor = f"(1 + r)/(1 - r) = {f:.2f} (r = {r:.2f}"
    read = min(lags, len(series) // 3)
    if read > 1:
        summed = sum(rank_lag(series, k) + 1 / len(series) for k in range(1, read + 1))
        long_run = min(1 + 2 * summed, (1 + MAX_CORRELATION) / (1 - MAX_CORRELATION))
        if long_run > f:
            f, factor = long_run, f"the long-run factor 1 + 2 sum r_k = {long_run:.2f} (over {read} lags, r_1 = {r:.2f}"
    return f, factor


PAIRED_LAGS = 3  # lags the always-on paired factor reads (chosen by simulation)
PAIRED_ALWAYS = ("per-round contrast decided on its effective n at every look (a dependence in one arm "
                 "that the lag-1 test misses still narrows an interval that assumes independent rounds)")


def paired_effective(decision: Decision, groups: Sequence[tuple[str, np.ndarray]], alpha: float, *,
                     final: bool = True) -> Decision:
    """A paired median decision (``ratio``, ``equivalent``: a paired hypothesis) re-decided on its effective n, flagged or not.

    The per-round contrast of AR(1) rho = 0.8 noise in one arm has lag-1 correlation of about 0.4,
    which the one-sided test at 0.10 finds in 60% of runs at n = 30; the runs it missed carried
    false verdicts of 0.10-0.12. Estimating the inflation on every look removes them; on
    independent rounds the bias-corrected estimate is above 0 about half the time, which is the
    power this costs (the simulation's power rows state it). Other decisions come back unchanged.

    ``final``: the plan's last look, the only one the effect's size may decide; an earlier look
    decides on the sign test alone at its full level (see the module docstring: a run that stopped
    at 8 rounds on their size had often seen one clock state only).
    """
    if decision.hypothesis is None or not decision.hypothesis.paired:
        return decision
    share = MAGNITUDE_SHARE if final else 0.0
    adjusted = decide_dependent(decision, groups, alpha, PAIRED_ALWAYS, lags=PAIRED_LAGS, size_share=share)
    if adjusted is None:
        return decision
    return replace(adjusted, details={**adjusted.details, "independent_verdict": decision.verdict.value})


Tested = tuple["np.ndarray | None", Callable[[float], float], str]


def _tested(decision: Decision, groups: Sequence[tuple[str, np.ndarray]]) -> Tested:
    """(series, transform of the claimed value, label) of a median decision, or (None, float, "").

    The series is what the hypothesis is about: one output's samples, or a paired figure's
    per-round contrast on its scale (log-ratios, which need positive arms, or differences).
    """
    hypothesis = decision.hypothesis
    identity: Callable[[float], float] = float
    if hypothesis is None or hypothesis.statistic != "median" or hypothesis.ordered:
        return None, identity, ""
    if not hypothesis.paired and hypothesis.bound != "within" and len(groups) == 1:
        return groups[0][1], identity, "median"
    if hypothesis.paired and len(groups) == 2:
        (_, a), (_, b) = groups
        if len(a) != len(b):
            return None, identity, ""
        if hypothesis.scale == "log":
            positive = bool(np.all(a > 0) and np.all(b > 0))
            return (np.log(a / b), math.log, "median of per-round ratios") if positive else (None, identity, "")
        return a - b, identity, "median of per-round differences"
    return None, identity, ""
