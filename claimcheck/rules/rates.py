"""``rate_at_most`` / ``zero_rate``: how often an event (a 1, or a non-zero count) happens, exact binomial bounds."""

from __future__ import annotations

from claimcheck.claim import Check
from claimcheck.rules.figure import RATE, Figure
from claimcheck.numbers import number
from claimcheck.stats import Decision, count_events, decide_rate_at_most, decide_zero_rate

from ._base import ArrayGroups, Claimed, Param, Rule, exact_decision, open_unit

_THRESHOLD = Param("threshold", "number", "the largest rate the claim allows", domain=open_unit)


class _Rate(Rule):
    """A rate claim quotes any rate from 0 up to its threshold."""

    def stated_band(self, check: Check) -> tuple[float, float] | None:
        return 0.0, check.number("threshold")


class RateAtMost(_Rate):
    """The event rate is at most the threshold."""

    name = "rate_at_most"
    figure = RATE
    summary = "the rate of events (1s among 0/1 samples, or non-zero counts) is at most `threshold`"
    params = (_THRESHOLD,)

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        return decide_rate_at_most(self.name, groups, alpha, threshold=check.number("threshold"), unit=check.unit)

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        k, n = count_events(self.name, groups)
        threshold = check.number("threshold")
        holds = k / n <= threshold
        reason = f"rate {number(k / n)} ({k} of {n}) {'is' if holds else 'is not'} <= {number(threshold)}"
        return exact_decision(check, k / n, n, holds, reason, label="rate")

    def expectation(self, check: Check) -> str:
        return f"event rate in {check.output}: rate <= {number(check.number('threshold'))}"

    def claimed(self, check: Check) -> Claimed:
        threshold = check.number("threshold")
        return Claimed("max", None, threshold, f"≤ {number(threshold)}")


class ZeroRate(_Rate):
    """The event never happens, shown to a rate below the threshold."""

    name = "zero_rate"
    figure = Figure("rate", sides="upper", non_negative=True)
    summary = "the event (a 1, or a non-zero count) never happens, shown to a rate below `threshold`"
    params = (_THRESHOLD,)
    spends_alpha = False  # 0 events in n implies 0 in fewer: looking again cannot add a false hold

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        return decide_zero_rate(self.name, groups, alpha, threshold=check.number("threshold"), unit=check.unit)

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        k, n = count_events(self.name, groups)
        reason = f"0 of {n} values show the event" if k == 0 else f"{k} of {n} values show the event"
        return exact_decision(check, k / n, n, k == 0, reason, label="rate")

    def expectation(self, check: Check) -> str:
        return f"no event in {check.output}: rate <= {number(check.number('threshold'))}"

    def claimed(self, check: Check) -> Claimed:
        threshold = check.number("threshold")
        return Claimed("max", None, threshold, f"≤ {number(threshold)}")


RULES = (RateAtMost(), ZeroRate())
