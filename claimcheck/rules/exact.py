"""``exact``: a deterministic value reproduces the printed figure within its rounding.

A figure the source derives from inputs it prints in more than one place (a share of the step
from the @600 row, the @8k row or a later section's baseline) is checked once per *reading*:
the claim sweeps the readings with ``over:``, one group each. When some readings reproduce the
figure and others do not, the source is inconsistent with itself: that is its own verdict,
distinct from a refutation (the figure does follow from one of its own inputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from claimcheck.claim import Check
from claimcheck.numbers import number, with_unit
from claimcheck.stats import Decision, decide_exact
from claimcheck.verdict import Verdict

from ._base import ArrayGroups, Claimed, Param, Rule, exact_decision, non_negative


class Reading(NamedTuple):
    """One reading of the source's inputs: its name, the value it gives, and whether that is the figure."""

    reading: str
    value: float
    holds: bool


def reading_name(label: str) -> str:
    """A reading's name from its group label (``reading=§3 @600 row`` -> ``§3 @600 row``)."""
    return label.split("=", 1)[1] if "=" in label else label


class Exact(Rule):
    """Every value equals ``expected`` within ``tolerance``; the worst value is the evidence."""

    name = "exact"
    summary = ("a deterministic value equals `expected` within `tolerance` (with `over:`, once per reading of the "
               "source's inputs: some readings but not all is `inconsistent`)")
    params = (
        Param("expected", "number", "the value the check must reproduce"),
        Param("tolerance", "number", "absolute tolerance (match the printed rounding)", default=0.0,
              domain=non_negative),
    )
    optional_selectors = frozenset({"over"})
    max_groups = None
    spends_alpha = False

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        if len(groups) > 1:
            raise ValueError("readings (`over:` with rule `exact`) need a deterministic probe")
        return decide_exact(self.name, groups, alpha, expected=check.number("expected"),
                            tolerance=check.number("tolerance", 0.0), unit=check.unit)

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        expected, tolerance = check.number("expected"), check.number("tolerance", 0.0)
        if len(groups) > 1:
            return self._decide_readings(groups, check, expected, tolerance)
        x = groups[0][1]
        worst = float(x[int(np.argmax(np.abs(x - expected)))])
        holds = abs(worst - expected) <= tolerance
        verdict = "agrees" if holds else "does not follow from its own inputs"
        reason = f"computed {worst:.6g}; the doc's figure {expected:g} ± {tolerance:g} {verdict}"
        return exact_decision(check, worst, len(x), holds, reason)

    def _decide_readings(self, groups: ArrayGroups, check: Check, expected: float, tolerance: float) -> Decision:
        """One value per reading: all agree -> holds, none -> refuted, some -> inconsistent."""
        readings = []
        for label, x in groups:
            value = float(x[int(np.argmax(np.abs(x - expected)))])
            readings.append(Reading(reading_name(label), value, abs(value - expected) <= tolerance))
        agree = [r for r in readings if r.holds]
        differ = [r for r in readings if not r.holds]
        figure = f"the doc's figure {expected:g} ± {tolerance:g}"
        if not differ:
            reason = f"{figure} follows from every reading: {readings_text(readings, check.unit)}"
        elif not agree:
            reason = f"{figure} follows from none of its readings: {readings_text(readings, check.unit)}"
        else:
            reason = (f"inconsistent within the source: {figure} holds for reading {readings_text(agree, check.unit)}, "
                      f"not for {readings_text(differ, check.unit)}")
        decision = exact_decision(check, readings[0].value, len(readings), not differ, reason)
        inconsistent = bool(agree and differ)
        return Decision(
            rule=decision.rule, statistic=decision.statistic, low=decision.low, high=decision.high,
            confidence_level=1.0, n=decision.n, verdict=Verdict.INCONSISTENT if inconsistent else decision.verdict,
            reason=reason, pvalue=1.0 if inconsistent else decision.pvalue,
            hold_pvalue=1.0 if inconsistent else decision.hold_pvalue, alpha=decision.alpha, mde=None,
            estimate_label=decision.estimate_label,
            details={**decision.details, "readings": [r._asdict() for r in readings], "expected": expected,
                     "tolerance": tolerance},
        )

    def expectation(self, check: Check) -> str:
        expected = with_unit(number(check.number("expected")), check.unit)
        each = f" for each reading of `{check.over}`" if check.over else ""
        return f"{check.output} = {expected} ± {number(check.number('tolerance', 0.0))}{each}"

    def claimed(self, check: Check) -> Claimed:
        expected, tolerance = check.number("expected"), check.number("tolerance", 0.0)
        text = f"= {with_unit(number(expected), check.unit)} ± {number(tolerance)}"
        return Claimed("band", expected - tolerance, expected + tolerance, text)


def readings_text(readings: Sequence[Reading], unit: str | None = None) -> str:
    """``§3 @8k row (16.4 %), §7 baseline (17.4 %)``: each reading with the value it gives."""
    return ", ".join(f"{r.reading} ({with_unit(number(r.value), unit)})" for r in readings)


RULES = (Exact(),)
