"""``two_proportions``: the difference or ratio of two event rates (score test, decidable at 0 events)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from claimcheck.claim import Check
from claimcheck.rules.figure import Figure
from claimcheck.numbers import number
from claimcheck.stats import Counts, Decision, decide_two_proportions

from ._base import ArrayGroups, Claimed, FieldProblem, Param, Rule, exact_decision, positive

_BOUNDS = ("at_least", "at_most", "equivalent")


def _whole(value: float) -> str | None:
    return None if value >= 1 and float(value).is_integer() else f"must be a whole number >= 1; got {value:g}"


class TwoProportions(Rule):
    """Rate of ``output`` against rate of ``reference``: ``a - b`` or ``a / b`` against a bound."""

    name = "two_proportions"
    figure = Figure("rate")  # a difference of rates can be negative
    summary = ("the difference (or ratio) of the event rates of output and reference is `bound` "
               "(at_least/at_most/equivalent) `threshold`")
    params = (
        Param("threshold", "number", "the bound on the difference or ratio; for `equivalent`, the largest "
                                     "|difference|, or the largest factor (> 1) either way for a ratio"),
        Param("bound", "choice", "direction of the bound", choices=_BOUNDS),
        Param("scale", "choice", "compare the rates' difference (a - b) or ratio (a / b)", default="difference",
              choices=("difference", "ratio")),
        Param("trials", "number", "trials behind each sample: 1 for 0/1 event indicators, else each sample "
                                  "counts events in this many trials", default=1.0, domain=_whole),
    )
    required_selectors = frozenset({"output", "reference"})
    min_groups = max_groups = 2

    def cross_problems(self, check: Mapping[str, object]) -> list[FieldProblem]:
        threshold, bound = check.get("threshold"), check.get("bound")
        scale = check.get("scale", "difference")
        if not isinstance(threshold, (int, float)) or isinstance(threshold, bool) or bound not in _BOUNDS:
            return []
        value = float(threshold)
        if scale == "ratio":
            problem = positive(value) if bound != "equivalent" else (
                None if value > 1 else f"must be > 1 for an equivalent ratio (a factor either way); got {value:g}")
        elif bound == "equivalent":
            problem = None if 0 < value < 1 else f"must lie in (0, 1) for an equivalent difference; got {value:g}"
        else:
            problem = None if -1 < value < 1 else f"must lie in (-1, 1) for a difference of rates; got {value:g}"
        return [FieldProblem("check.threshold", f"`threshold` {problem} (rule `{self.name}`)")] if problem else []

    def counts(self, groups: ArrayGroups, check: Check) -> Counts:
        """Events and trials of both arms; ValueError for a sample that is not a count of ``trials``."""
        trials = int(check.number("trials", 1.0))
        totals = []
        for label, x in groups:
            bad = (x != np.round(x)) | (x < 0) | (x > trials)
            if bad.any():
                what = "0/1 samples" if trials == 1 else f"whole counts from 0 to {trials}"
                raise ValueError(f"rule `{self.name}` needs {what}; group {label!r} has {float(x[bad][0])!r}")
            totals.append((int(x.sum()), len(x) * trials))
        (ka, na), (kb, nb) = totals
        return Counts(ka, na, kb, nb)

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        return decide_two_proportions(self.name, self.counts(groups, check), alpha,
                                      threshold=check.number("threshold"), bound=str(check.params["bound"]),
                                      scale=str(check.params.get("scale", "difference")))

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        c = self.counts(groups, check)
        ratio = check.params.get("scale") == "ratio"
        if ratio and c.events_b == 0:
            raise ValueError(f"`{check.reference}` has no events: the ratio of rates is undefined")
        value = c.rate_a / c.rate_b if ratio else c.rate_a - c.rate_b
        low, high = self._band(check)
        holds = low <= value <= high
        shown = f"{'ratio' if ratio else 'difference'} of rates {number(value)}"
        reason = f"{shown} ({c.events_a}/{c.trials_a} vs {c.events_b}/{c.trials_b}) {'is' if holds else 'is not'} " \
                 f"{self.claimed(check).text}"
        return exact_decision(check, value, c.trials_a + c.trials_b, holds, reason,
                              label="ratio of rates" if ratio else "difference of rates")

    def _band(self, check: Check) -> tuple[float, float]:
        threshold, bound = check.number("threshold"), check.params.get("bound")
        ratio = check.params.get("scale") == "ratio"
        if bound == "at_least":
            return threshold, math.inf
        if bound == "at_most":
            return -math.inf, threshold
        return (1 / threshold, threshold) if ratio else (-threshold, threshold)

    def expectation(self, check: Check) -> str:
        ratio = check.params.get("scale") == "ratio"
        a, b = f"rate({check.output})", f"rate({check.reference})"
        contrast = f"{a} / {b}" if ratio else f"{a} - {b}"
        low, high = self._band(check)
        bound = check.params.get("bound")
        if bound == "equivalent":
            return f"{contrast} within [{number(low)}, {number(high)}]"
        return f"{contrast} {'>=' if bound == 'at_least' else '<='} {number(low if bound == 'at_least' else high)}"

    def claimed(self, check: Check) -> Claimed:
        low, high = self._band(check)
        if check.params.get("bound") == "at_least":
            return Claimed("min", low, None, f"≥ {number(low)}")
        if check.params.get("bound") == "at_most":
            return Claimed("max", None, high, f"≤ {number(high)}")
        return Claimed("band", low, high, f"within [{number(low)}, {number(high)}] (equivalent)")


RULES = (TwoProportions(),)
