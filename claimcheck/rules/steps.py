"""``ordering`` (A > B > C) and ``monotone`` (a trend over swept levels), decided step by step."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import ClassVar

from claimcheck.claim import Check
from claimcheck.rules.figure import ORDER
from claimcheck.numbers import number
from claimcheck.stats import Decision, Hypothesis, decide_monotone, decide_ordering

from ._base import (
    STATISTIC, ArrayGroups, Claimed, FieldProblem, Param, Rule, Selector, exact_decision, non_negative, statistic,
)

_PAIRED = Param("paired", "bool", "levels were measured in the same calls; compare pairwise", default=False)


def _step_quantity(groups: ArrayGroups, check: Check) -> ArrayGroups:
    """Per-pair differences of adjacent levels when paired; otherwise each level's samples."""
    if not check.params.get("paired") or len({len(x) for _, x in groups}) > 1:
        return groups
    return [(f"{hi_label} - {lo_label}", hi - lo) for (hi_label, hi), (lo_label, lo) in zip(groups, groups[1:])]


def _exact_steps(check: Check, groups: ArrayGroups, tolerance: float | None = None) -> Decision:
    """Every value of each group exceeds every value of the next (or, with a ``tolerance``, falls short of
    it by no more than that: ties hold); the smallest gap is the evidence."""
    sign = ">" if tolerance is None else ">="
    gaps = [(f"{hi_label} {sign} {lo_label}", float(hi.min() - lo.max()))
            for (hi_label, hi), (lo_label, lo) in zip(groups, groups[1:])]
    name, gap = min(gaps, key=lambda step: step[1])
    holds = gap > 0 if tolerance is None else gap >= -tolerance
    n = sum(len(x) for _, x in groups)
    if holds:
        reason = f"all {len(gaps)} steps hold; smallest gap {name}: {number(gap)}"
    else:
        reason = f"step {name} does not hold: gap {number(gap)}"
    return exact_decision(check, gap, n, holds, reason, label=f"gap {name}")


class Ordering(Rule):
    """Outputs (or the levels of one output) in a claimed order, first largest."""

    name = "ordering"
    figure = ORDER
    summary = "the groups' means decrease in the listed order (first > second > ...)"
    params = (_PAIRED, STATISTIC)
    required_selectors: ClassVar[frozenset[Selector]] = frozenset()
    optional_selectors = frozenset({"outputs", "output", "over"})
    min_groups, max_groups = 2, None

    def cross_problems(self, check: Mapping[str, object]) -> list[FieldProblem]:
        outputs, over = check.get("outputs"), check.get("over")
        if bool(outputs) == bool(over):
            return [FieldProblem("check.outputs", "rule `ordering` needs either `check.outputs` (>= 2 outputs) "
                                                  "or `check.output` with `check.over`")]
        if isinstance(outputs, (list, tuple)) and len(outputs) < 2:
            return [FieldProblem("check.outputs", "rule `ordering` needs at least 2 outputs")]
        if over and not check.get("output"):
            return [FieldProblem("check.output", "rule `ordering` over a param needs `check.output`")]
        return []

    def hypothesis(self, check: Check) -> Hypothesis:
        return Hypothesis("decreasing", statistic(check), threshold=0.0, paired=bool(check.params.get("paired")))

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        return decide_ordering(self.name, groups, alpha, paired=bool(check.params.get("paired", False)),
                               statistic=statistic(check), unit=check.unit, hypothesis=self.hypothesis(check))

    def tested_quantity(self, groups: ArrayGroups, check: Check) -> ArrayGroups:
        return _step_quantity(groups, check)

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        return _exact_steps(check, groups)

    def expectation(self, check: Check) -> str:
        if check.outputs:
            return " > ".join(check.outputs)
        return f"{check.output} decreases over the listed `{check.over}` levels"

    def claimed(self, check: Check) -> Claimed:
        return Claimed(None, text=self.expectation(check))


class Monotone(Rule):
    """One output rises (or falls) at every step through a swept parameter."""

    name = "monotone"
    figure = ORDER
    summary = "the mean rises (or falls) at every step through the swept levels"
    params = (
        Param("direction", "choice", "trend direction", default="increasing", choices=("increasing", "decreasing")),
        _PAIRED,
        STATISTIC,
        Param("strict", "bool", "false: ties hold; each step may go the other way by at most `tolerance`",
              default=True),
        Param("tolerance", "number", "with `strict: false`, how far one step may go against the direction and "
              "still hold (a sampled step can show a tie only within a margin)", default=0.0, domain=non_negative),
    )
    required_selectors = frozenset({"output", "over"})
    min_groups, max_groups = 2, None

    def _increasing(self, check: Check) -> bool:
        return check.params.get("direction", "increasing") == "increasing"

    def _tolerance(self, check: Check) -> float | None:
        """None for a strict trend, else how far a step may go the other way."""
        return None if check.params.get("strict", True) else float(check.number("tolerance"))

    def cross_problems(self, check: Mapping[str, object]) -> list[FieldProblem]:
        if check.get("strict", True) and check.get("tolerance") not in (None, 0, 0.0):
            return [FieldProblem("check.tolerance", "`tolerance` loosens a non-strict trend; set `strict: false`")]
        return []

    def hypothesis(self, check: Check) -> Hypothesis:
        return Hypothesis("increasing" if self._increasing(check) else "decreasing", statistic(check),
                          threshold=self._tolerance(check) or 0.0, paired=bool(check.params.get("paired")))

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        tolerance = self._tolerance(check)
        if tolerance:  # level i shifted by i * tolerance along the direction: a step of -tolerance becomes a tie
            step = tolerance if self._increasing(check) else -tolerance
            groups = [(label, x + i * step) for i, (label, x) in enumerate(groups)]
        decided = decide_monotone(self.name, groups, alpha, direction=str(check.params.get("direction", "increasing")),
                                  paired=bool(check.params.get("paired", False)), statistic=statistic(check),
                                  unit=check.unit, hypothesis=self.hypothesis(check))
        if not tolerance:
            return decided
        return replace(decided, estimate_label=f"{decided.estimate_label} + tolerance {number(tolerance)}".strip(),
                       reason=f"{decided.reason} (non-strict: each step shifted by the tolerance {number(tolerance)})",
                       details={**decided.details, "tolerance": tolerance})

    def tested_quantity(self, groups: ArrayGroups, check: Check) -> ArrayGroups:
        return _step_quantity(groups, check)

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        return _exact_steps(check, groups[::-1] if self._increasing(check) else groups, self._tolerance(check))

    def _words(self, check: Check) -> str:
        direction = str(check.params.get("direction", "increasing"))
        tolerance = self._tolerance(check)
        if tolerance is None:
            return direction
        loose = {"increasing": "non-decreasing", "decreasing": "non-increasing"}[direction]
        return loose + (f" (within {number(tolerance)})" if tolerance else "")

    def expectation(self, check: Check) -> str:
        return f"{check.output} {self._words(check)} over {check.over}"

    def claimed(self, check: Check) -> Claimed:
        return Claimed(None, text=f"{self._words(check)} in `{check.over}`")


RULES = (Ordering(), Monotone())
