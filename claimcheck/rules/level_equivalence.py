"""``level_equivalent``: the levels of an ``over:`` sweep agree within a margin (TOST per pair).

"M=2 is as fast as M=1" is one claim, not two one-sided ones: the sampler runs the swept levels
interleaved (forward, then backward, in every look), and each compared pair is tested with the
two one-sided tests of ``equivalent``. With ``versus`` every other level (or only ``level``) is
compared with that reference level; without it, every pair of levels. The claim holds when every
pair holds (an intersection–union test: each pair at the full alpha keeps the false-hold rate at
alpha) and is refuted when any pair is shown outside the margin after Holm's correction over the
pairs (so a sweep of many levels does not refute by chance more often than a pair would).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import combinations

import numpy as np

from claimcheck.claim import Check
from claimcheck.numbers import number, with_unit
from claimcheck.stats import Decision, adjust_pvalues, decide_equivalent
from claimcheck.verdict import Verdict

from ._base import (
    STATISTIC, ArrayGroups, Claimed, FieldProblem, Groups, Param, Rule, exact_decision, pairs_or_all, positive,
    statistic,
)
from .equivalent import equivalence_band
from .levels import LevelParam, level_label


class LevelEquivalent(Rule):
    """Every compared pair of swept levels within ``margin`` of each other (difference, or ratio on log-ratio)."""

    name = "level_equivalent"
    summary = ("the swept levels agree within `margin`: each level (or `level`) against the reference level `versus`, "
               "or every pair of levels without `versus` (TOST per pair)")
    params = (
        Param("margin", "number", "equivalence margin (same scale as `scale`)", domain=positive),
        LevelParam("versus", "choice", "the reference level every other level is compared with (default: all pairs)",
                   default=""),
        LevelParam("level", "choice", "with `versus`: compare only this level with it", default=""),
        Param("scale", "choice", "equivalence scale", default="difference", choices=("difference", "log-ratio")),
        Param("paired", "bool", "pair the i-th samples of two levels (one round of the balanced order)", default=True),
        STATISTIC,
    )
    required_selectors = frozenset({"output", "over"})
    min_groups, max_groups = 2, None

    def cross_problems(self, check: Mapping[str, object]) -> list[FieldProblem]:
        if check.get("level") not in (None, "") and check.get("versus") in (None, ""):
            return [FieldProblem("check.level", "`level` names the level compared with `versus`; set `versus` too")]
        if check.get("level") not in (None, "") and str(check.get("level")) == str(check.get("versus")):
            return [FieldProblem("check.level", "`level` and `versus` name the same swept value")]
        return []

    def level_problems(self, check: Mapping[str, object], levels: Sequence[object]) -> list[FieldProblem]:
        shown = {str(value) for value in levels}
        return [FieldProblem(f"check.{name}", f"`{name}: {check.get(name)}` is not one of the swept "
                                              f"`{check.get('over')}` values ({', '.join(map(str, levels))})")
                for name in ("versus", "level") if check.get(name) not in (None, "") and str(check.get(name)) not in shown]

    def needs_repeats(self, check: Check) -> str | None:
        return None  # a deterministic probe's levels compare value by value

    def compared(self, groups: ArrayGroups, check: Check) -> list[tuple[int, int]]:
        """Index pairs ``(level, reference)`` the claim compares."""
        labels = [label for label, _ in groups]
        versus, level = check.params.get("versus", ""), check.params.get("level", "")
        if versus in (None, ""):
            return list(combinations(range(len(groups)), 2))
        over = str(check.over)
        wanted = level_label(over, versus)
        if wanted not in labels:
            raise ValueError(f"the sweep has no level `{wanted}` (it has: {', '.join(labels)})")
        reference = labels.index(wanted)
        if level not in (None, ""):
            chosen = level_label(over, level)
            if chosen not in labels:
                raise ValueError(f"the sweep has no level `{chosen}` (it has: {', '.join(labels)})")
            return [(labels.index(chosen), reference)]
        return [(i, reference) for i in range(len(groups)) if i != reference]

    def groups(self, groups: Groups, check: Check) -> ArrayGroups:
        arrays = super().groups(groups, check)
        self.compared(arrays, check)  # names a missing level now, before any decision
        return arrays

    def tested_quantity(self, groups: ArrayGroups, check: Check) -> ArrayGroups:
        out: ArrayGroups = []
        for i, j in self.compared(groups, check):
            (la, a), (lb, b) = groups[i], groups[j]
            if not check.params.get("paired", True) or len(a) != len(b):
                out += [(la, a), (lb, b)]
            elif check.params.get("scale") == "log-ratio" and np.all(a > 0) and np.all(b > 0):
                out.append((f"{la} / {lb} per-round log-ratio", np.log(a / b)))
            else:
                out.append((f"{la} - {lb} per-round difference", a - b))
        return out

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        pairs = self.compared(groups, check)
        decisions = [decide_equivalent(self.name, [groups[i], groups[j]], alpha, margin=check.number("margin"),
                                       scale=str(check.params.get("scale", "difference")),
                                       paired=bool(check.params.get("paired", True)),
                                       statistic=statistic(check),
                                       unit=check.unit)
                     for i, j in pairs]
        names = [f"{groups[i][0]} vs {groups[j][0]}" for i, j in pairs]
        refute = [float(p) for p in adjust_pvalues([d.pvalue for d in decisions], "holm")]
        hold_p = max(d.hold_pvalue for d in decisions)
        refute_p = min(refute)
        verdict = Verdict.REFUTED if refute_p <= alpha else Verdict.HOLDS if hold_p <= alpha else Verdict.INCONCLUSIVE
        if verdict is Verdict.REFUTED:
            index = refute.index(refute_p)
        else:  # the pair furthest from holding decides what is shown
            index = max(range(len(decisions)), key=lambda k: decisions[k].hold_pvalue)
        worst = decisions[index]
        steps = [{"pair": name, "verdict": d.verdict.value, "estimate": d.statistic, "low": d.low, "high": d.high,
                  "hold_pvalue": d.hold_pvalue, "refute_pvalue_holm": p}
                 for name, d, p in zip(names, decisions, refute)]
        held = sum(d.hold_pvalue <= alpha for d in decisions)
        if verdict is Verdict.REFUTED:
            reason = f"{names[index]}: {worst.reason} (Holm over {len(pairs)} pairs: p = {number(refute_p)})"
        elif verdict is Verdict.HOLDS:
            reason = f"all {len(pairs)} pairs within the margin; furthest {names[index]}: {worst.reason}"
        else:
            reason = f"{held} of {len(pairs)} pairs shown within the margin; {names[index]}: {worst.reason}"
        return replace(worst, rule=self.name, verdict=verdict, reason=reason, pvalue=refute_p, hold_pvalue=hold_p,
                       n=sum(len(x) for _, x in groups), estimate_label=f"{worst.estimate_label} ({names[index]})",
                       details={**worst.details, "pairs": steps})

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        margin, log = check.number("margin"), check.params.get("scale") == "log-ratio"
        worst_value, worst_name, worst_size = 0.0 if not log else 1.0, "", -1.0
        for i, j in self.compared(groups, check):
            (la, a), (lb, b) = groups[i], groups[j]
            if log and (np.any(a <= 0) or np.any(b <= 0)):
                raise ValueError("`scale: log-ratio` needs positive values")
            values = pairs_or_all(a, b, np.divide if log else np.subtract)
            sizes = np.abs(np.log(values)) if log else np.abs(values)
            k = int(np.argmax(sizes))
            if sizes[k] > worst_size:
                worst_value, worst_name, worst_size = float(values[k]), f"{la} vs {lb}", float(sizes[k])
        bound = math.log1p(margin) if log else margin
        holds = worst_size <= bound
        shown = f"ratio {number(worst_value)}" if log else f"difference {with_unit(number(worst_value), check.unit)}"
        band = f"[{number(1 / (1 + margin))}, {number(1 + margin)}]" if log else f"±{with_unit(number(margin), check.unit)}"
        reason = f"{worst_name}: {shown} {'lies within' if holds else 'lies outside'} {band}"
        return exact_decision(check, worst_value, sum(len(x) for _, x in groups), holds, reason,
                              label="ratio" if log else "difference")

    def expectation(self, check: Check) -> str:
        log = check.params.get("scale") == "log-ratio"
        margin = check.number("margin")
        bound = number(math.log1p(margin)) if log else with_unit(number(margin), check.unit)
        versus, level = check.params.get("versus", ""), check.params.get("level", "")
        if versus in (None, ""):
            which = f"every pair of `{check.over}` levels"
        elif level in (None, ""):
            which = f"every `{check.over}` level vs {level_label(str(check.over), versus)}"
        else:
            which = f"{level_label(str(check.over), level)} vs {level_label(str(check.over), versus)}"
        return f"{check.output}: {which} within |{'log ratio' if log else 'difference'}| <= {bound}"

    def claimed(self, check: Check) -> Claimed:
        return equivalence_band(check)


RULES = (LevelEquivalent(),)
