"""``exact``: a deterministic value reproduces the printed figure within its rounding."""

from __future__ import annotations

import numpy as np

from claimcheck.claim import Check
from claimcheck.numbers import number, with_unit
from claimcheck.stats import Decision, decide_exact

from ._base import ArrayGroups, Claimed, Param, Rule, exact_decision, non_negative


class Exact(Rule):
    """Every value equals ``expected`` within ``tolerance``; the worst value is the evidence."""

    name = "exact"
    summary = "a deterministic value equals `expected` within `tolerance`"
    params = (
        Param("expected", "number", "the value the check must reproduce"),
        Param("tolerance", "number", "absolute tolerance (match the printed rounding)", default=0.0,
              domain=non_negative),
    )
    spends_alpha = False

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        return decide_exact(self.name, groups, alpha, expected=check.number("expected"),
                            tolerance=check.number("tolerance", 0.0), unit=check.unit)

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        x = groups[0][1]
        expected, tolerance = check.number("expected"), check.number("tolerance", 0.0)
        worst = float(x[int(np.argmax(np.abs(x - expected)))])
        holds = abs(worst - expected) <= tolerance
        verdict = "agrees" if holds else "does not follow from its own inputs"
        reason = f"computed {worst:.6g}; the doc's figure {expected:g} ± {tolerance:g} {verdict}"
        return exact_decision(check, worst, len(x), holds, reason)

    def expectation(self, check: Check) -> str:
        expected = with_unit(number(check.number("expected")), check.unit)
        return f"{check.output} = {expected} ± {number(check.number('tolerance', 0.0))}"

    def claimed(self, check: Check) -> Claimed:
        expected, tolerance = check.number("expected"), check.number("tolerance", 0.0)
        text = f"= {with_unit(number(expected), check.unit)} ± {number(tolerance)}"
        return Claimed("band", expected - tolerance, expected + tolerance, text)


RULES = (Exact(),)
