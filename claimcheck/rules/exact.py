"""``exact``: a deterministic value reproduces the printed figure within its rounding.

A figure the source derives from inputs it prints in more than one place (a share of the step
from the @600 row, the @8k row or a later section's baseline) is checked once per *reading*:
the claim sweeps the readings with ``over:``, one group each. When some readings reproduce the
figure and others do not, the source is inconsistent with itself: that is its own verdict,
distinct from a refutation (the figure does follow from one of its own inputs).

A reading is an interval, not a point: the ``readings`` probe returns the value its printed
inputs give and the lowest and highest value their printed precision allows, and a check that
says ``spans: true`` reads a group's values as that span. A reading agrees with the figure when
its span meets the figure's own band (``expected ± tolerance``, the figure's printed precision).
Without ``spans`` every value of a group is the figure, as for any deterministic probe: the
worst one decides. Some readings agreeing and others not is ``inconsistent`` only when
an agreeing reading and a disagreeing one are disjoint, so two of the source's own figures
disagree beyond both their printed precisions; readings that overlap state one quantity, and a
figure their shared values do not give is refuted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from claimcheck.claim import Check
from claimcheck.numbers import number, with_unit
from claimcheck.stats import Decision, decide_exact
from claimcheck.verdict import Verdict

from ._base import ArrayGroups, Claimed, Param, Rule, exact_decision, non_negative


class Reading(NamedTuple):
    """One reading of the source's inputs: its name, the value it gives, and whether that is the figure.

    ``low``/``high`` span what its inputs' printed precision allows (equal to ``value`` for exact inputs).
    """

    reading: str
    value: float
    holds: bool
    low: float | None = None
    high: float | None = None

    def span(self) -> tuple[float, float]:
        """The interval this reading gives: its low and high ends (the value twice for a point)."""
        return (self.value if self.low is None else self.low, self.value if self.high is None else self.high)

    def overlaps(self, other: "Reading") -> bool:
        """True when the two readings' intervals share a value: they do not disagree beyond their precision."""
        (a_low, a_high), (b_low, b_high) = self.span(), other.span()
        return a_low <= b_high and b_low <= a_high


SLACK = 1e-9


def read_group(name: str, values: np.ndarray, expected: float, tolerance: float, spans: bool) -> Reading:
    """A group's values as one reading.

    With ``spans`` the first value is the figure its inputs give and all of them span its interval;
    without, every value is the figure and the one farthest from ``expected`` is the reading.
    """
    if not spans:
        worst = float(values[int(np.argmax(np.abs(values - expected)))])
        return Reading(name, worst, abs(worst - expected) <= tolerance)
    value, low, high = float(values[0]), float(np.min(values)), float(np.max(values))
    slack = SLACK * max(1.0, abs(expected), abs(tolerance))  # float noise at a band's edge
    holds = low <= expected + tolerance + slack and high >= expected - tolerance - slack
    if low == high:
        return Reading(name, value, holds)
    return Reading(name, value, holds, low, high)


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
        Param("spans", "bool", "each group's values span one reading over its inputs' printed precision "
              "(the `readings` probe): it agrees when the span meets the band", default=False),
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
        if len(groups) > 1 or check.over:
            return self._decide_readings(groups, check, expected, tolerance)
        label, x = groups[0]
        if len(x) == 1 or not check.params.get("spans"):
            worst = float(x[int(np.argmax(np.abs(x - expected)))])
            holds = abs(worst - expected) <= tolerance
            verdict = "agrees" if holds else "does not follow from its own inputs"
            reason = f"computed {worst:.6g}; the doc's figure {expected:g} ± {tolerance:g} {verdict}"
            return exact_decision(check, worst, len(x), holds, reason)
        reading = read_group(reading_name(label), x, expected, tolerance, spans=True)
        low, high = reading.span()
        verdict = ("agrees within its inputs' printed precision" if reading.holds
                   else "does not follow from its own inputs, anywhere within their printed precision")
        reason = (f"computed {reading.value:.6g} ({low:.6g} to {high:.6g} over the inputs' printed precision); "
                  f"the doc's figure {expected:g} ± {tolerance:g} {verdict}")
        decision = exact_decision(check, reading.value, len(x), reading.holds, reason)
        return dataclasses.replace(decision, details={**decision.details, "span": [low, high]})

    def _decide_readings(self, groups: ArrayGroups, check: Check, expected: float, tolerance: float) -> Decision:
        """One interval per reading: all agree -> holds, none -> refuted, some -> inconsistent or refuted.

        Mixed readings are inconsistent only when an agreeing reading and a disagreeing one are disjoint
        (the source's own figures disagree beyond their printed precision); otherwise the readings state
        one quantity, whose shared values do not give the figure: refuted.
        """
        spans = bool(check.params.get("spans"))
        readings = [read_group(reading_name(label), x, expected, tolerance, spans) for label, x in groups]
        agree = [r for r in readings if r.holds]
        differ = [r for r in readings if not r.holds]
        figure = f"the doc's figure {expected:g} ± {tolerance:g}"
        contradict = [(a, d) for a in agree for d in differ if not a.overlaps(d)]
        if not differ:
            reason = f"{figure} follows from every reading: {readings_text(readings, check.unit)}"
        elif not agree:
            reason = f"{figure} follows from none of its readings: {readings_text(readings, check.unit)}"
        elif contradict:
            reason = (f"inconsistent within the source: {figure} holds for reading {readings_text(agree, check.unit)}, "
                      f"not for {readings_text(differ, check.unit)}")
        else:
            reason = (f"{figure} does not follow: its readings agree with each other within their printed "
                      f"precision, and the values they share miss it ({readings_text(readings, check.unit)})")
        decision = exact_decision(check, readings[0].value, len(readings), not differ, reason)
        verdict = Verdict.INCONSISTENT if contradict else decision.verdict
        return _with_details(decision, verdict, reason, readings, expected, tolerance)

    def expectation(self, check: Check) -> str:
        expected = with_unit(number(check.number("expected")), check.unit)
        each = f" for each reading of `{check.over}`" if check.over else ""
        return f"{check.output} = {expected} ± {number(check.number('tolerance', 0.0))}{each}"

    def claimed(self, check: Check) -> Claimed:
        expected, tolerance = check.number("expected"), check.number("tolerance", 0.0)
        text = f"= {with_unit(number(expected), check.unit)} ± {number(tolerance)}"
        return Claimed("band", expected - tolerance, expected + tolerance, text)


def _with_details(decision: Decision, verdict: Verdict, reason: str, readings: Sequence[Reading], expected: float,
                  tolerance: float) -> Decision:
    """The decision with its verdict, reason and readings (each with its span) recorded."""
    inconsistent = verdict is Verdict.INCONSISTENT
    return Decision(
        rule=decision.rule, statistic=decision.statistic, low=decision.low, high=decision.high,
        confidence_level=1.0, n=decision.n, verdict=verdict, reason=reason,
        pvalue=1.0 if inconsistent else decision.pvalue,
        hold_pvalue=1.0 if inconsistent else decision.hold_pvalue, alpha=decision.alpha, mde=None,
        estimate_label=decision.estimate_label,
        details={**decision.details, "readings": [{k: v for k, v in r._asdict().items() if v is not None}
                                                  for r in readings],
                 "expected": expected, "tolerance": tolerance},
    )


def readings_text(readings: Sequence[Reading], unit: str | None = None) -> str:
    """``§3 @8k row (16.4 %), §7 baseline (17.4 %, 17.3–17.5)``: each reading with the value (and span) it gives."""
    def one(r: Reading) -> str:
        low, high = r.span()
        spread = f", {number(low)}–{number(high)}" if low != high else ""
        return f"{r.reading} ({with_unit(number(r.value), unit)}{spread})"

    return ", ".join(one(r) for r in readings)


RULES = (Exact(),)
