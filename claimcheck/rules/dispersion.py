"""``dispersion``: the spread of a per-seed statistic across seeds (SD, or the range of k seeds)."""

from __future__ import annotations

from collections.abc import Mapping

from claimcheck.claim import Check
from claimcheck.numbers import number, with_unit
from claimcheck.stats import Decision, decide_dispersion, spread

from ._base import ArrayGroups, Claimed, FieldProblem, Param, Rule, exact_decision, non_negative

_MEASURES = ("sd", "range")


class Dispersion(Rule):
    """One output holds one statistic per seed; its spread across seeds is bounded."""

    name = "dispersion"
    summary = ("the spread across seeds (SD, or the mean range of `seeds` seeds) of a per-seed output is "
               "`bound` (at_most/at_least) `threshold`")
    params = (
        Param("threshold", "number", "the bound on the spread", domain=non_negative),
        Param("bound", "choice", "direction of the bound", choices=("at_most", "at_least")),
        Param("measure", "choice", "sd: standard deviation across seeds; range: expected max - min over `seeds` "
                                   "seeds", default="sd", choices=_MEASURES),
        Param("seeds", "number", "for `measure: range`, how many seeds the stated range spans (0: unset)",
              default=0.0, domain=non_negative),
    )

    def cross_problems(self, check: Mapping[str, object]) -> list[FieldProblem]:
        measure, seeds = check.get("measure", "sd"), check.get("seeds", 0)
        if not isinstance(seeds, (int, float)) or isinstance(seeds, bool):
            return []
        whole = float(seeds).is_integer()
        if measure == "range" and not (whole and seeds >= 2):
            return [FieldProblem("check.seeds", f"`measure: range` needs `check.seeds`, the number of seeds the "
                                                f"stated range spans (a whole number >= 2); got {seeds:g}")]
        if measure == "sd" and seeds:
            return [FieldProblem("check.seeds", "`check.seeds` belongs to `measure: range`; the SD needs none")]
        return []

    def _seeds(self, check: Check) -> int:
        return int(check.number("seeds", 0.0))

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        return decide_dispersion(self.name, groups, alpha, threshold=check.number("threshold"),
                                 bound=str(check.params["bound"]), measure=str(check.params.get("measure", "sd")),
                                 seeds=self._seeds(check), unit=check.unit)

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        x = groups[0][1]
        sd = check.params.get("measure", "sd") == "sd"
        need = 2 if sd else self._seeds(check)
        if len(x) < need:
            raise ValueError(f"this spread across seeds needs at least {need} seeds' values; got {len(x)}")
        value = float(spread(x, "sd" if sd else "range", self._seeds(check)))
        threshold = check.number("threshold")
        at_most = check.params.get("bound") == "at_most"
        holds = value <= threshold if at_most else value >= threshold
        what = "SD" if sd else f"mean range of {self._seeds(check)}"
        reason = f"{what} across {len(x)} seeds {number(value)}, {'' if holds else 'not '}" \
                 f"{'<=' if at_most else '>='} {number(threshold)}"
        return exact_decision(check, value, len(x), holds, reason, label=f"{what} across seeds")

    def expectation(self, check: Check) -> str:
        what = "SD" if check.params.get("measure", "sd") == "sd" else f"range of {self._seeds(check)} seeds"
        sign = "<=" if check.params.get("bound") == "at_most" else ">="
        return f"{what} of {check.output} across seeds {sign} {with_unit(number(check.number('threshold')), check.unit)}"

    def claimed(self, check: Check) -> Claimed:
        threshold = check.number("threshold")
        shown = with_unit(number(threshold), check.unit)
        if check.params.get("bound") == "at_most":
            return Claimed("max", None, threshold, f"≤ {shown}")
        return Claimed("min", threshold, None, f"≥ {shown}")


RULES = (Dispersion(),)
