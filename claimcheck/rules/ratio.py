"""``ratio``: ``statistic(output) / statistic(reference)`` against a threshold."""

from __future__ import annotations

import numpy as np

from claimcheck.claim import Check
from claimcheck.rules.figure import RATIO
from claimcheck.numbers import number, with_unit
from claimcheck.stats import Boundary, Decision, Hypothesis, decide_ratio

from ._base import (
    STATISTIC, ArrayGroups, Claimed, Param, Rule, exact_decision, pairs_or_all, positive, statistic, statistic_word,
    two_group_boundary,
)


class Ratio(Rule):
    """Two outputs (or arms) in a bounded ratio."""

    name = "ratio"
    figure = RATIO
    summary = "output / reference is `bound` (at_least/at_most) `threshold`"
    params = (
        Param("threshold", "number", "the bound on the ratio", domain=positive),
        Param("bound", "choice", "direction of the bound", choices=("at_least", "at_most")),
        STATISTIC,
        Param("paired", "bool", "arms were interleaved; compare pairwise", default=False),
    )
    required_selectors = frozenset({"output", "reference"})
    min_groups = max_groups = 2
    assumed_spread = 1.0  # two arms measured in one run share its load and clock state: the ratio cancels most

    def _lower(self, check: Check) -> bool:
        return check.params.get("bound") == "at_least"

    def boundary(self, check: Check) -> Boundary:
        return two_group_boundary(check)

    def tested_quantity(self, groups: ArrayGroups, check: Check) -> ArrayGroups:
        (_, a), (_, b) = groups
        if not check.params.get("paired") or len(a) != len(b):
            return groups
        if np.all(a > 0) and np.all(b > 0):
            return [("per-round log-ratio", np.log(a / b))]
        return [("per-round contrast", a - check.number("threshold") * b)]

    def hypothesis(self, check: Check) -> Hypothesis:
        return Hypothesis("at_least" if self._lower(check) else "at_most", statistic(check),
                          threshold=check.number("threshold"), scale="log",
                          paired=bool(check.params.get("paired", False)), assumed_spread=self.assumed_spread)

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        return decide_ratio(self.name, groups, alpha, threshold=check.number("threshold"),
                            bound=str(check.params["bound"]), statistic=statistic(check),
                            paired=bool(check.params.get("paired", False)), unit=check.unit,
                            hypothesis=self.hypothesis(check))

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        (_, a), (_, b) = groups
        if np.any(b == 0):
            raise ValueError(f"`{check.reference}` is 0: the ratio is undefined")
        ratios = pairs_or_all(a, b, np.divide)
        lower = self._lower(check)
        threshold = check.number("threshold")
        worst = float(ratios.min() if lower else ratios.max())
        holds = worst >= threshold if lower else worst <= threshold
        sign = ">=" if lower else "<="
        shown = f"{check.output} / {check.reference} = {number(worst)}"
        reason = f"{shown} is {sign} {number(threshold)}" if holds else f"{shown}, not {sign} {number(threshold)}"
        return exact_decision(check, worst, len(a) + len(b), holds, reason, label="ratio")

    def expectation(self, check: Check) -> str:
        stat = statistic_word(check)
        sign = ">=" if self._lower(check) else "<="
        threshold = number(check.number("threshold"))
        if check.params.get("paired") and statistic(check) == "median":  # what decide_ratio tests
            return f"median of per-round {check.output} / {check.reference} {sign} {threshold}"
        return f"{stat}{check.output} / {stat}{check.reference} {sign} {threshold}"

    def claimed(self, check: Check) -> Claimed:
        threshold = check.number("threshold")
        shown = with_unit(number(threshold), check.unit)
        if self._lower(check):
            return Claimed("min", threshold, None, f"≥ {shown}")
        return Claimed("max", None, threshold, f"≤ {shown}")


RULES = (Ratio(),)
