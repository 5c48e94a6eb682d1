"""``ordering`` (A > B > C) and ``monotone`` (a trend over swept levels), decided step by step.

Each adjacent step is a one-sided comparison of means (Welch, or per-pair differences when
``paired: true``). The claim HOLDS when every step holds at ``alpha`` (an intersection-union
test needs no correction: a false claim has a false step, and that step alone holds with
probability <= alpha). It is REFUTED when any step is reversed at ``alpha / steps``
(Bonferroni, so a true claim is refuted with probability <= alpha whatever the correlation
between steps). Otherwise INCONCLUSIVE.

``monotone`` reuses this rather than a rank-trend test: "increases with X" is read as
"every step up in X increases it", which a trend test cannot confirm (a trend can be
significant while one step goes backwards). Per-step results are in ``details["steps"]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from claimcheck.numbers import level as level_text
from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision, too_few
from ._estimate import TEstimate, one_sample, welch
from ._power import mde


def decide_ordering(
    rule: str, groups: list[tuple[str, np.ndarray]], alpha: float, *, paired: bool = False, unit: str | None = None
) -> Decision:
    """Decide ``groups[0] > groups[1] > ...`` in means."""
    return _decide_steps(rule, groups, alpha, paired=paired, unit=unit)


def decide_monotone(
    rule: str,
    groups: list[tuple[str, np.ndarray]],
    alpha: float,
    *,
    direction: str = "increasing",
    paired: bool = False,
    unit: str | None = None,
) -> Decision:
    """Decide the means rise (``increasing``) or fall (``decreasing``) at every step through ``groups``."""
    ordered = groups[::-1] if direction == "increasing" else groups
    decision = _decide_steps(rule, ordered, alpha, paired=paired, unit=unit)
    if direction == "increasing" and "steps" in decision.details:
        decision.details["steps"].reverse()
    return decision


class _Step(NamedTuple):
    name: str
    est: TEstimate
    p_holds: float
    p_refuted: float
    verdict: Verdict


def _decide_steps(
    rule: str, groups: list[tuple[str, np.ndarray]], alpha: float, *, paired: bool, unit: str | None
) -> Decision:
    n = sum(len(x) for _, x in groups)
    if min(len(x) for _, x in groups) < 2:
        return too_few(rule, n, alpha, what="pairs" if paired else "samples per group")
    k = len(groups) - 1
    alpha_refute = alpha / k
    steps = []
    for (label_hi, hi), (label_lo, lo) in zip(groups, groups[1:]):
        est = one_sample(hi - lo) if paired else welch(hi, lo)
        p_holds, p_refuted = est.p_greater(0.0), est.p_less(0.0)
        if p_refuted <= alpha_refute:
            verdict = Verdict.REFUTED
        else:
            verdict = Verdict.HOLDS if p_holds <= alpha else Verdict.INCONCLUSIVE
        steps.append(_Step(f"{label_hi} > {label_lo}", est, p_holds, p_refuted, verdict))
    if any(s.verdict is Verdict.REFUTED for s in steps):
        verdict, key = Verdict.REFUTED, min(steps, key=lambda s: s.p_refuted)
    else:
        verdict = Verdict.HOLDS if all(s.verdict is Verdict.HOLDS for s in steps) else Verdict.INCONCLUSIVE
        key = max(steps, key=lambda s: s.p_holds)
    est = key.est
    low, high = est.lower(alpha), est.upper(alpha_refute)
    level = 1 - alpha - alpha_refute
    value = f"{fmt(est.estimate)} {unit}" if unit else fmt(est.estimate)
    ci = f"difference {value}, {level_text(level)} CI [{fmt(low)}, {fmt(high)}]"
    if verdict is Verdict.REFUTED:
        reason = f"step {key.name} is reversed: {ci} lies below 0 (Bonferroni over {k} steps)"
    elif verdict is Verdict.HOLDS:
        reason = f"all {k} steps hold; weakest {key.name}: {ci} lies above 0"
    else:
        undecided = sum(s.verdict is Verdict.INCONCLUSIVE for s in steps)
        reason = f"{undecided} of {k} steps undecided; weakest {key.name}: {ci} contains 0"
    return Decision(
        rule=rule, statistic=est.estimate, low=low, high=high, confidence_level=level, n=n, verdict=verdict,
        reason=reason, pvalue=min(1.0, k * min(s.p_refuted for s in steps)), alpha=alpha,
        mde=max(mde(s.est.se, s.est.df, alpha=alpha_refute) for s in steps),
        estimate_label=f"difference {key.name}",
        details={
            "paired": paired,
            "steps": [
                {
                    "step": s.name, "difference": s.est.estimate, "low": s.est.lower(alpha),
                    "high": s.est.upper(alpha_refute), "p_holds": s.p_holds, "p_refuted": s.p_refuted,
                    "verdict": s.verdict.value,
                }
                for s in steps
            ],
        },
        _interval_at=est.interval,
    )
