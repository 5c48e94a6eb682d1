"""``equivalent``: two outputs (or arms) agree within a margin (TOST)."""

from __future__ import annotations

import math

import numpy as np

from claimcheck.claim import Check
from claimcheck.numbers import number, with_unit
from claimcheck.stats import Boundary, Decision, Hypothesis, decide_equivalent

from ._base import (
    STATISTIC, ArrayGroups, Claimed, Param, Rule, exact_decision, pairs_or_all, positive, statistic, two_group_boundary,
)


class Equivalent(Rule):
    """``|output - reference| <= margin``, or on ``log-ratio`` the ratio within ``[1/(1+m), 1+m]``."""

    name = "equivalent"
    summary = "output and reference agree within `margin` (difference, or relative on `log-ratio`)"
    params = (
        Param("margin", "number", "equivalence margin (same scale as `scale`)", domain=positive),
        Param("scale", "choice", "equivalence scale", default="difference", choices=("difference", "log-ratio")),
        Param("paired", "bool", "arms were interleaved; compare pairwise", default=False),
        STATISTIC,
    )
    required_selectors = frozenset({"output", "reference"})
    min_groups = max_groups = 2
    assumed_spread = 1.0  # two arms measured in one run share its load and clock state: the contrast cancels most

    def boundary(self, check: Check) -> Boundary:
        return two_group_boundary(check)

    def tested_quantity(self, groups: ArrayGroups, check: Check) -> ArrayGroups:
        (_, a), (_, b) = groups
        if not check.params.get("paired") or len(a) != len(b):
            return groups
        if check.params.get("scale") == "log-ratio" and np.all(a > 0) and np.all(b > 0):
            return [("per-round log-ratio", np.log(a / b))]
        return [("per-round difference", a - b)]

    def hypothesis(self, check: Check) -> Hypothesis:
        return Hypothesis("within", statistic(check), margin=check.number("margin"),
                          scale="log" if check.params.get("scale") == "log-ratio" else "linear",
                          paired=bool(check.params.get("paired", False)), assumed_spread=self.assumed_spread)

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        return decide_equivalent(self.name, groups, alpha, margin=check.number("margin"),
                                 scale=str(check.params.get("scale", "difference")),
                                 paired=bool(check.params.get("paired", False)), statistic=statistic(check),
                                 unit=check.unit, hypothesis=self.hypothesis(check))

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        (_, a), (_, b) = groups
        margin = check.number("margin")
        if check.params.get("scale") == "log-ratio":
            if np.any(a <= 0) or np.any(b <= 0):
                raise ValueError("`scale: log-ratio` needs positive values")
            ratios = pairs_or_all(a, b, np.divide)
            worst = float(ratios[np.argmax(np.abs(np.log(ratios)))])
            holds = abs(math.log(worst)) <= math.log1p(margin)
            shown = f"ratio {number(worst)}"
            band = f"[{number(1 / (1 + margin))}, {number(1 + margin)}]"
            label = "ratio"
        else:
            diffs = pairs_or_all(a, b, np.subtract)
            worst = float(diffs[np.argmax(np.abs(diffs))])
            holds = abs(worst) <= margin
            shown = f"difference {with_unit(number(worst), check.unit)}"
            band = f"±{with_unit(number(margin), check.unit)}"
            label = "difference"
        reason = f"{shown} {'lies within' if holds else 'lies outside'} {band}"
        return exact_decision(check, worst, len(a) + len(b), holds, reason, label=label)

    def expectation(self, check: Check) -> str:
        log = check.params.get("scale") == "log-ratio"
        scale = "log ratio" if log else "difference"
        margin = check.number("margin")
        bound = number(math.log1p(margin)) if log else with_unit(number(margin), check.unit)
        paired = " (paired)" if check.params.get("paired") else ""
        return f"{check.output} ≈ {check.reference}: |{scale}| <= {bound}{paired}"

    def claimed(self, check: Check) -> Claimed:
        return equivalence_band(check)


def equivalence_band(check: Check) -> Claimed:
    """The band an equivalence claims: ±margin, or [1/(1+margin), 1+margin] on the log-ratio scale."""
    margin = check.number("margin")
    if check.params.get("scale") == "log-ratio":
        return Claimed("band", 1 / (1 + margin), 1 + margin,
                       f"ratio within [{number(1 / (1 + margin))}, {number(1 + margin)}] (equivalent)")
    return Claimed("band", -margin, margin, f"within ±{with_unit(number(margin), check.unit)} (equivalent)")


RULES = (Equivalent(),)
