"""``ordering`` (A > B > C) and ``monotone`` (a trend over swept levels), decided step by step.

HOLDS when every adjacent step holds at ``alpha``: each step is a one-sided comparison (Welch,
or per-pair differences when ``paired: true``), and an intersection-union test needs no
correction (a false claim has a false step, and that step alone holds with probability
<= alpha).

REFUTED when any *pair* of levels is reversed, every pair ``i < j`` (not only adjacent ones)
tested one-sided under Holm at ``alpha``: a true claim has every pair in order, so Holm keeps
P(any false refutation) <= alpha whatever the correlation between pairs. Testing the extreme
pairs matters: means 0 / 0.3 / 0.6 claimed decreasing differ by 0.6 end to end but only 0.3
per step, and adjacent steps alone refuted them a quarter of the time.

``statistic: median`` (the default for timing outputs) compares levels by the median of
per-pair differences (sign test) when paired and the Hodges–Lehmann shift (Mann–Whitney)
otherwise. Otherwise INCONCLUSIVE.

``monotone`` reuses this rather than a rank-trend test: "increases with X" is read as
"every step up in X increases it", which a trend test cannot confirm (a trend can be
significant while one step goes backwards). Per-step results are in ``details["steps"]``,
per-pair refutation tests in ``details["pairs"]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision, identical_samples, too_few
from ._hypothesis import Hypothesis
from ._estimate import Location, TEstimate, one_sample, welch
from ._power import mde
from ._robust import ShiftEstimate, SignEstimate


def decide_ordering(
    rule: str, groups: list[tuple[str, np.ndarray]], alpha: float, *, paired: bool = False,
    statistic: str = "mean", unit: str | None = None, hypothesis: Hypothesis | None = None,
) -> Decision:
    """Decide ``groups[0] > groups[1] > ...`` in means (or medians); ``hypothesis`` is carried by the decision."""
    return _decide_steps(rule, groups, alpha, paired=paired, statistic=statistic, unit=unit, hypothesis=hypothesis)


def decide_monotone(
    rule: str,
    groups: list[tuple[str, np.ndarray]],
    alpha: float,
    *,
    direction: str = "increasing",
    paired: bool = False,
    statistic: str = "mean",
    unit: str | None = None,
    hypothesis: Hypothesis | None = None,
) -> Decision:
    """Decide the means rise (``increasing``) or fall (``decreasing``) at every step through ``groups``."""
    ordered = groups[::-1] if direction == "increasing" else groups
    decision = _decide_steps(rule, ordered, alpha, paired=paired, statistic=statistic, unit=unit,
                             hypothesis=hypothesis)
    if direction == "increasing" and "steps" in decision.details:
        decision.details["steps"].reverse()
        decision.details["pairs"].reverse()
    return decision


class _Step(NamedTuple):
    name: str
    est: Location
    p_holds: float
    p_refuted: float
    verdict: Verdict


def _compare(hi: np.ndarray, lo: np.ndarray, paired: bool, robust: bool) -> Location:
    if robust:
        return SignEstimate(hi - lo) if paired else ShiftEstimate(hi, lo)
    return one_sample(hi - lo) if paired else welch(hi, lo)


def steps_said(verdict: Verdict, name: str, ci: str, pairs: int, steps: int, undecided: int) -> str:
    """The reason of a steps decision: the reversed pair, or the weakest step, with its interval ``ci``."""
    if verdict is Verdict.REFUTED:
        return f"pair {name} is reversed: {ci} lies below 0 (Holm over {pairs} pairs)"
    if verdict is Verdict.HOLDS:
        return f"all {steps} steps hold; weakest {name}: {ci} lies above 0"
    return f"{undecided} of {steps} steps undecided; weakest {name}: {ci} contains 0"


def holm(pvalues: list[float]) -> list[float]:
    """Holm-adjusted p-values (step-down, monotone), in the given order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted, running = [1.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def _decide_steps(
    rule: str, groups: list[tuple[str, np.ndarray]], alpha: float, *, paired: bool, statistic: str,
    unit: str | None, hypothesis: Hypothesis | None = None,
) -> Decision:
    n = sum(len(x) for _, x in groups)
    if min(len(x) for _, x in groups) < 2:
        return too_few(rule, n, alpha, what="pairs" if paired else "samples per group")
    robust = statistic == "median"
    kind = "median" if robust else "mean"
    pairs = [(i, j) for i in range(len(groups)) for j in range(i + 1, len(groups))]
    compared = {(i, j): _compare(groups[i][1], groups[j][1], paired, robust) for i, j in pairs}
    if not robust and any(isinstance(e, TEstimate) and e.se == 0 for e in compared.values()):
        return identical_samples(rule, n, alpha, float("nan"), f"{kind} difference")
    refute_p = [compared[pair].p_less(0.0) for pair in pairs]
    adjusted = holm(refute_p)
    m = len(pairs)
    k = len(groups) - 1
    steps = []
    for i in range(k):
        est = compared[(i, i + 1)]
        p_holds = est.p_greater(0.0)
        p_refuted = adjusted[pairs.index((i, i + 1))]
        verdict = Verdict.REFUTED if p_refuted <= alpha else Verdict.HOLDS if p_holds <= alpha else Verdict.INCONCLUSIVE
        steps.append(_Step(f"{groups[i][0]} > {groups[i + 1][0]}", est, p_holds, p_refuted, verdict))
    reversed_pairs = [pair for pair, p in zip(pairs, adjusted) if p <= alpha]
    if reversed_pairs:
        verdict = Verdict.REFUTED
        i, j = min(reversed_pairs, key=lambda pair: adjusted[pairs.index(pair)])
        key = _Step(f"{groups[i][0]} > {groups[j][0]}", compared[(i, j)], 1.0, adjusted[pairs.index((i, j))],
                    Verdict.REFUTED)
    else:
        verdict = Verdict.HOLDS if all(s.verdict is Verdict.HOLDS for s in steps) else Verdict.INCONCLUSIVE
        key = max(steps, key=lambda s: s.p_holds)
    alpha_refute = alpha / m
    est = key.est
    low, high = est.lower(alpha), est.upper(alpha_refute)
    level = 1 - alpha - alpha_refute
    value = f"{fmt(est.estimate)} {unit}" if unit else fmt(est.estimate)
    ci = f"{kind} difference {value}, {level_text(level)} CI [{fmt(low)}, {fmt(high)}]"
    reason = steps_said(verdict, key.name, ci, m, k, sum(s.verdict is Verdict.INCONCLUSIVE for s in steps))
    return Decision(
        rule=rule, statistic=est.estimate, low=low, high=high, confidence_level=level, n=n, verdict=verdict,
        reason=reason, pvalue=min(adjusted), hold_pvalue=max(s.p_holds for s in steps), alpha=alpha,
        mde=max(mde(s.est.se, s.est.df, alpha=alpha_refute) for s in steps),
        estimate_label=f"{kind} difference {key.name}",
        details={
            "paired": paired,
            "statistic": statistic,
            "steps": [
                {
                    "step": s.name, "difference": s.est.estimate, "low": s.est.lower(alpha),
                    "high": s.est.upper(alpha_refute), "p_holds": s.p_holds, "p_refuted": s.p_refuted,
                    "verdict": s.verdict.value,
                }
                for s in steps
            ],
            "pairs": [
                {"pair": f"{groups[i][0]} > {groups[j][0]}", "p_refuted": p, "holm": h}
                for (i, j), p, h in zip(pairs, refute_p, adjusted)
            ],
        },
        _interval_at=est.interval, hypothesis=hypothesis,
    )
