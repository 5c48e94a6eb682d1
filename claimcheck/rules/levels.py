"""``level_ratio``: one level of an ``over:`` sweep against another, measured interleaved.

"Batch 8 is at least 1.5x faster than batch 1" on a probe swept over ``batch``: the sampler runs
every listed level in a balanced order within each look (forward, then backward), so drift adds
the same to both levels and the i-th samples of the two levels come from the same round. The
rule picks its two levels out of the sweep and decides their ratio (or, paired, their per-round
difference) with the procedures of ``ratio`` and ``at_least``/``at_most``, and declares the same
hypothesis they do, so a timing sweep gets the dependence-robust tests and the between-run widening
as a ``ratio`` claim does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from claimcheck.claim import Check
from claimcheck.rules.figure import RATIO
from claimcheck.numbers import number, with_unit
from claimcheck.stats import Boundary, Decision, Hypothesis, decide_bound, decide_ratio

from ._base import (
    STATISTIC, ArrayGroups, Claimed, FieldProblem, Groups, Param, Rule, exact_decision, pairs_or_all, positive,
    statistic, two_group_boundary,
)


@dataclass(frozen=True)
class LevelParam(Param):
    """A parameter naming one value of the swept param: text, a number or a boolean, kept as written."""

    schema_kind = "scalar"

    def problem(self, value: object) -> str | None:
        if isinstance(value, (str, int, float, bool)) and value != "":
            return None
        return f"must be one value of the swept param; got {value!r}"


def level_label(over: str, value: object) -> str:
    """The sampler's label of one swept level (``batch=8``)."""
    return f"{over}={value}"


class LevelRatio(Rule):
    """``statistic(level) / statistic(versus)`` (or ``level - versus``) of one output over one sweep."""

    name = "level_ratio"
    figure = RATIO
    summary = ("output at `over` = `level` against output at `over` = `versus` (ratio, or paired difference) "
               "is `bound` (at_least/at_most) `threshold`")
    params = (
        LevelParam("level", "choice", "the swept value in the numerator (or minuend)"),
        LevelParam("versus", "choice", "the swept value it is compared with (the denominator or subtrahend)"),
        Param("threshold", "number", "the bound on the ratio (or difference)"),
        Param("bound", "choice", "direction of the bound", choices=("at_least", "at_most")),
        Param("scale", "choice", "ratio of the two levels, or their difference (paired rounds only)",
              default="ratio", choices=("ratio", "difference")),
        Param("paired", "bool", "pair the i-th samples of the two levels (one round of the balanced order)",
              default=True),
        STATISTIC,
    )
    required_selectors = frozenset({"output", "over"})
    min_groups, max_groups = 2, None
    assumed_spread = 1.0  # two levels measured interleaved in one run share its load and clock state
    picks_groups = True

    def cross_problems(self, check: Mapping[str, object]) -> list[FieldProblem]:
        found = []
        if check.get("level") is not None and str(check.get("level")) == str(check.get("versus")):
            found.append(FieldProblem("check.versus", "`level` and `versus` name the same swept value"))
        scale, paired = check.get("scale", "ratio"), check.get("paired", True)
        threshold = check.get("threshold")
        if scale == "difference" and paired is False:
            found.append(FieldProblem("check.paired", "`scale: difference` compares paired rounds; it needs "
                                                      "`paired: true`"))
        if scale == "ratio" and isinstance(threshold, (int, float)) and not isinstance(threshold, bool):
            problem = positive(float(threshold))
            if problem:
                found.append(FieldProblem("check.threshold", f"`threshold` {problem} (rule `{self.name}`)"))
        return found

    def level_problems(self, check: Mapping[str, object], levels: Sequence[object]) -> list[FieldProblem]:
        """``level`` and ``versus`` must each be one of the swept values."""
        shown = {str(value) for value in levels}
        return [FieldProblem(f"check.{name}", f"`{name}: {check.get(name)}` is not one of the swept "
                                              f"`{check.get('over')}` values ({', '.join(map(str, levels))})")
                for name in ("level", "versus") if check.get(name) is not None and str(check.get(name)) not in shown]

    def needs_repeats(self, check: Check) -> str | None:
        return None  # a deterministic probe's two levels compare value by value

    def groups(self, groups: Groups, check: Check) -> ArrayGroups:
        """The two compared levels out of the whole sweep, numerator first."""
        over = str(check.over)
        wanted = [level_label(over, check.params.get(name)) for name in ("level", "versus")]
        pairs = {str(label): samples for label, samples in groups}
        missing = [label for label in wanted if label not in pairs]
        if missing:
            raise ValueError(f"the sweep has no level `{missing[0]}` (it has: {', '.join(pairs)})")
        return super().groups([(label, pairs[label]) for label in wanted], check)

    def boundary(self, check: Check) -> Boundary:
        if check.params.get("scale") == "difference":
            return "sign" if statistic(check) == "median" else "t"
        return two_group_boundary(check)

    def tested_quantity(self, groups: ArrayGroups, check: Check) -> ArrayGroups:
        picked = self.groups([(label, x.tolist()) for label, x in groups], check)
        (_, a), (_, b) = picked
        if not check.params.get("paired", True) or len(a) != len(b):
            return picked
        if check.params.get("scale") != "difference" and np.all(a > 0) and np.all(b > 0):
            return [("per-round log-ratio", np.log(a / b))]
        return [("per-round difference", a - b)]

    def hypothesis(self, check: Check) -> Hypothesis:
        difference = check.params.get("scale") == "difference"
        return Hypothesis(str(check.params["bound"]), statistic(check),  # type: ignore[arg-type]
                          threshold=check.number("threshold"), scale="linear" if difference else "log",
                          paired=difference or bool(check.params.get("paired", True)),
                          assumed_spread=self.assumed_spread)

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        bound, threshold = str(check.params["bound"]), check.number("threshold")
        if check.params.get("scale") == "difference":
            (_, a), (_, b) = groups
            decided = decide_bound(bound, [("per-round difference", a - b)], alpha, threshold=threshold,
                                   statistic=statistic(check), unit=check.unit, hypothesis=self.hypothesis(check))
            return replace(decided, rule=self.name, estimate_label=f"{decided.estimate_label} per-round difference",
                           details={**decided.details, "bound": bound, "paired": True})
        return decide_ratio(self.name, groups, alpha, threshold=threshold, bound=bound, statistic=statistic(check),
                            paired=bool(check.params.get("paired", True)), unit=check.unit,
                            hypothesis=self.hypothesis(check))

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        (la, a), (lb, b) = groups
        difference = check.params.get("scale") == "difference"
        if not difference and np.any(b == 0):
            raise ValueError(f"`{lb}` is 0: the ratio is undefined")
        values = pairs_or_all(a, b, np.subtract if difference else np.divide)
        lower = check.params.get("bound") == "at_least"
        threshold = check.number("threshold")
        worst = float(values.min() if lower else values.max())
        holds = worst >= threshold if lower else worst <= threshold
        sign = ">=" if lower else "<="
        shown = f"{la} {'-' if difference else '/'} {lb} = {number(worst)}"
        reason = f"{shown} is {sign} {number(threshold)}" if holds else f"{shown}, not {sign} {number(threshold)}"
        return exact_decision(check, worst, len(a) + len(b), holds, reason,
                              label="difference" if difference else "ratio")

    def expectation(self, check: Check) -> str:
        over = str(check.over)
        a, b = (f"{check.output}@{level_label(over, check.params.get(n))}" for n in ("level", "versus"))
        sign = ">=" if check.params.get("bound") == "at_least" else "<="
        op = "-" if check.params.get("scale") == "difference" else "/"
        return f"{a} {op} {b} {sign} {number(check.number('threshold'))}"

    def claimed(self, check: Check) -> Claimed:
        threshold = check.number("threshold")
        shown = with_unit(number(threshold), check.unit) if check.params.get("scale") == "difference" \
            else number(threshold)
        if check.params.get("bound") == "at_least":
            return Claimed("min", threshold, None, f"≥ {shown}")
        return Claimed("max", None, threshold, f"≤ {shown}")


RULES = (LevelRatio(),)
