"""``relation``: one measured output moves with another (or with a swept param) in a claimed direction.

"Repetition falls as cross-entropy rises": ``output: repetition_rate, reference: cross_entropy``
pairs the i-th samples of the two outputs (one item each: a prompt, a seed) and decides the sign
of their rank correlation or slope. With ``over:`` instead of ``reference`` the predictor is the
swept level's value (numbers only), every sample of a level paired with it. The decision is an
interval like any other rule's, so it is a member of the family and adjusted with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from claimcheck.claim import Check
from claimcheck.numbers import number
from claimcheck.stats import Decision, decide_relation, relation_value

from ._base import ArrayGroups, Claimed, FieldProblem, Param, Rule, exact_decision

MEASURE = Param("measure", "choice", "rank correlation (spearman) or least-squares slope", default="spearman",
                choices=("spearman", "slope"))
SIGN = Param("sign", "choice", "the claimed direction: the measure lies above (positive) or below (negative) "
             "`threshold`", choices=("positive", "negative"))
THRESHOLD = Param("threshold", "number", "the bound the measure must clear (0: the sign alone)", default=0.0)


def _level_value(label: str) -> float:
    """The number a sweep's level label (``temp=0.7``) stands for."""
    text = label.rpartition("=")[2]
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"level `{label}` is not a number; a relation over a sweep needs numeric levels") from None


class Relation(Rule):
    """The sign (and bound) of Spearman's rho or the slope of ``output`` on ``reference`` or on the swept level."""

    name = "relation"
    summary = ("`output` moves with `reference` (paired samples) or with the swept `over` level: Spearman's rho or the "
               "slope lies above (`sign: positive`) or below (`negative`) `threshold`")
    params = (SIGN, MEASURE, THRESHOLD)
    required_selectors = frozenset({"output"})
    optional_selectors = frozenset({"reference", "over"})
    min_groups, max_groups = 2, None

    def cross_problems(self, check: Mapping[str, object]) -> list[FieldProblem]:
        if bool(check.get("reference")) == bool(check.get("over")):
            return [FieldProblem("check.reference", "rule `relation` needs either `check.reference` (the predictor "
                                                    "output, paired sample by sample) or `check.over` (a numeric sweep)")]
        threshold = check.get("threshold", 0.0)
        if check.get("measure", "spearman") == "spearman" and isinstance(threshold, (int, float)) \
                and not isinstance(threshold, bool) and not -1 < threshold < 1:
            return [FieldProblem("check.threshold", f"a rank correlation bound must lie in (-1, 1); got {threshold}")]
        return []

    def level_problems(self, check: Mapping[str, object], levels: Sequence[object]) -> list[FieldProblem]:
        bad = [level for level in levels if isinstance(level, bool) or not isinstance(level, (int, float))]
        if bad:
            return [FieldProblem("check.over", f"a relation over `{check.get('over')}` needs numeric levels; "
                                               f"got {bad[0]!r}")]
        return []

    def needs_repeats(self, check: Check) -> str | None:
        return None  # a deterministic probe's values are related exactly

    def pairs(self, groups: ArrayGroups, check: Check) -> tuple[np.ndarray, np.ndarray, str]:
        """``(x, y, x name)``: the predictor and the output, one pair per sample."""
        if check.over:
            x = np.concatenate([np.full(len(values), _level_value(label)) for label, values in groups])
            y = np.concatenate([values for _, values in groups])
            return x, y, str(check.over)
        (_, y), (x_name, x) = groups[0], groups[1]
        if len(x) != len(y):
            raise ValueError(f"`{check.output}` has {len(y)} samples and `{x_name}` {len(x)}: a relation pairs them "
                             "one to one")
        return x, y, x_name

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        x, y, x_name = self.pairs(groups, check)
        return decide_relation(self.name, x, y, alpha, measure=str(check.params.get("measure", "spearman")),
                               sign=str(check.params["sign"]), threshold=check.number("threshold"),
                               x_name=x_name, y_name=str(check.output))

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        x, y, x_name = self.pairs(groups, check)
        measure = str(check.params.get("measure", "spearman"))
        value = relation_value(x, y, measure)
        threshold, positive = check.number("threshold"), check.params["sign"] == "positive"
        holds = bool(np.isfinite(value)) and (value > threshold if positive else value < threshold)
        sign = ">" if positive else "<"
        shown = f"{measure} of {check.output} on {x_name} = {number(value)}"
        reason = f"{shown} is {sign} {number(threshold)}" if holds else f"{shown}, not {sign} {number(threshold)}"
        return exact_decision(check, value, len(y), holds, reason, label=measure)

    def expectation(self, check: Check) -> str:
        predictor = check.reference or check.over
        sign = ">" if check.params.get("sign") == "positive" else "<"
        return f"{check.params.get('measure', 'spearman')}({check.output}, {predictor}) {sign} " \
               f"{number(check.number('threshold'))}"

    def claimed(self, check: Check) -> Claimed:
        threshold = check.number("threshold")
        if check.params.get("sign") == "positive":
            return Claimed("min", threshold, None, f"> {number(threshold)}")
        return Claimed("max", None, threshold, f"< {number(threshold)}")


RULES = (Relation(),)
