"""``at_least`` / ``at_most``: a one-sided bound on the mean or median of one output."""

from __future__ import annotations

from typing import ClassVar

from claimcheck.claim import Check
from claimcheck.numbers import number, with_unit
from claimcheck.stats import Boundary, Decision, Hypothesis, decide_bound

from ._base import STATISTIC, ArrayGroups, Claimed, Param, Rule, exact_decision, statistic, statistic_word

_THRESHOLD = Param("threshold", "number", "the bound the statistic must respect")


class _Bound(Rule):
    """Shared by both directions; ``lower`` says which side of the threshold the claim is on."""

    lower: ClassVar[bool]
    params = (_THRESHOLD, STATISTIC)
    # one output carries a run's load and clock state whole: clock states in blocks of 10 samples put a
    # first run's median 2.5 SE off in a fifth of runs (claimcheck/stats/_between_run.py)
    assumed_spread = 2.0

    def boundary(self, check: Check) -> Boundary:
        return "sign" if statistic(check) == "median" else "t"

    @property
    def sign(self) -> str:
        """The comparison as printed."""
        return ">=" if self.lower else "<="

    def hypothesis(self, check: Check) -> Hypothesis:
        return Hypothesis("at_least" if self.lower else "at_most", statistic(check),
                          threshold=check.number("threshold"), assumed_spread=self.assumed_spread)

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        return decide_bound(self.name, groups, alpha, threshold=check.number("threshold"),
                            statistic=statistic(check), unit=check.unit, hypothesis=self.hypothesis(check))

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        x = groups[0][1]
        threshold = check.number("threshold")
        worst = float(x.min() if self.lower else x.max())
        holds = worst >= threshold if self.lower else worst <= threshold
        reason = f"computed {worst:.6g}, {'' if holds else 'not '}{self.sign} {threshold:g}"
        return exact_decision(check, worst, len(x), holds, reason)

    def expectation(self, check: Check) -> str:
        return f"{statistic_word(check)}{check.output} {self.sign} {with_unit(number(check.number('threshold')), check.unit)}"

    def claimed(self, check: Check) -> Claimed:
        threshold = check.number("threshold")
        text = f"{'≥' if self.lower else '≤'} {with_unit(number(threshold), check.unit)}"
        return Claimed("min", threshold, None, text) if self.lower else Claimed("max", None, threshold, text)


class AtLeast(_Bound):
    """The statistic of the output is at least the threshold."""

    name = "at_least"
    summary = "the mean (or median) of the output is at least `threshold`"
    lower = True


class AtMost(_Bound):
    """The statistic of the output is at most the threshold."""

    name = "at_most"
    summary = "the mean (or median) of the output is at most `threshold`"
    lower = False


RULES = (AtLeast(), AtMost())
