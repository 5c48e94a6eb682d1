"""Decision rules: one object per rule, the only place that knows a rule.

Each public module of this package declares ``RULES``, a tuple of
:class:`~claimcheck.rules._base.Rule` instances; the registry below collects
them, so adding a rule is one new module (plus its tests) and nothing else
names rules. A rule whose decisions the between-run widening and the dependence
gate should correct says so by declaring :meth:`Rule.hypothesis` (and its
``assumed_spread``): those read the hypothesis on the decision, not the rule's name.

>>> d = decide("at_least", [("gbps", [241.0, 239.5, 243.2, 240.8])], threshold=200)
>>> d.verdict.value
'holds'
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import replace
from collections.abc import Callable, Mapping, Sequence
from functools import cache

from claimcheck.claim import Check
import numpy as np

from claimcheck.stats import Adaptation, Decision, Gate, SequentialPlan, check_alpha, quantity_gate
from claimcheck.stats import run_sequential as run_looks
from claimcheck.suggest import did_you_mean

from ._base import COMMON_FIELDS, Claimed, FieldProblem, Groups, Param, Rule, for_timing, statistic

__all__ = [
    "COMMON_FIELDS", "Claimed", "FieldProblem", "Param", "Rule", "decide", "decide_check", "get", "names",
    "for_timing", "registry", "run_sequential", "sequential", "statistic", "timing_gate",
]


@cache
def registry() -> Mapping[str, Rule]:
    """Every rule by name, collected from this package's modules (in module order)."""
    found: dict[str, Rule] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for rule in getattr(module, "RULES", ()):
            if rule.name in found:
                raise RuntimeError(f"rule `{rule.name}` is declared twice ({module.__name__})")
            found[rule.name] = rule
    return found


def names() -> tuple[str, ...]:
    """The rule names, for schema choices and listings."""
    return tuple(registry())


def get(name: str) -> Rule:
    """The rule called ``name``; ValueError with a did-you-mean otherwise."""
    rules = registry()
    try:
        return rules[name]
    except (KeyError, TypeError):
        hint = did_you_mean(name, rules)
        raise ValueError(f"unknown rule {name!r}{hint}; rules: {', '.join(rules)}") from None


def make_check(rule: str, params: Mapping[str, object], *, labels: Sequence[str] = ("x", "reference"),
               alpha: float = 0.05) -> Check:
    """A :class:`Check` from keyword parameters, its selectors named after the groups (simulations, tests)."""
    chosen = get(rule)
    unknown = sorted(set(params) - {p.name for p in chosen.params} - COMMON_FIELDS)
    if unknown:
        raise ValueError(f"`{unknown[0]}` is not a parameter of rule `{rule}`")
    problems = chosen.param_problems(params)
    if problems:
        raise ValueError(problems[0].message)
    unit = params.get("unit")
    return Check(rule=rule, output=labels[0] if labels else None,
                 reference=labels[1] if len(labels) > 1 else None,
                 unit=str(unit) if unit else None, alpha=alpha, params=chosen.values(params))


def decide_check(check: Check, groups: Groups, alpha: float, *, deterministic: bool = False) -> Decision:
    """One decision for ``check`` on ``groups``: exact for a deterministic probe, else statistical."""
    rule = get(check.rule)
    arrays = rule.groups(groups, check)
    check = replace(check, alpha=check_alpha(alpha))
    if deterministic:
        return rule.decide_exactly(arrays, check)
    return rule.decide(arrays, check.alpha, check)


def decide(rule: str, groups: Groups, *, alpha: float = 0.05, **params: object) -> Decision:
    """Decide one rule on sample groups, with the rule's parameters as keywords."""
    try:
        labels = [str(label) for label, _ in groups]
    except (TypeError, ValueError):
        labels = ["x", "reference"]  # malformed groups: the rule's own check says what is wrong
    return decide_check(make_check(rule, params, labels=labels, alpha=alpha), groups, alpha)


def sequential(check: Check, draw: Callable[[int], Sequence[tuple[str, Sequence[float]]]],
               plan: SequentialPlan, *, gate: Gate | None = None, adapt: Adaptation | None = None) -> Decision:
    """Sample in looks until the check decides or the plan ends (see :func:`claimcheck.stats.run_sequential`).

    A gated (timing) check whose rule reads a single output decides once on the whole planned
    window (:func:`claimcheck.stats._sequential.run_window`): the machine's drift moves that output itself,
    so an early look would estimate a different quantity than the window; paired and multi-level
    rules test a contrast in which the drift cancels, and stop early. ``adapt``: the futility stop
    and the extension of the last look (:class:`claimcheck.stats.Adaptation`; the runner passes one
    with its time budget's room), None for the plan as drawn.
    """
    rule = get(check.rule)

    def decide_look(groups: Groups, alpha: float) -> Decision:
        return rule.decide(rule.groups(groups, check), alpha, check)

    def picked(n: int) -> Sequence[tuple[str, Sequence[float]]]:
        """The draw as the rule reads it: the loop's warm-up and dependence tests see the compared levels only."""
        batch = draw(n)
        if not any(len(samples) for _, samples in batch):
            return batch
        return [(label, x.tolist()) for label, x in rule.groups(batch, check)]

    window = gate is not None and rule.max_groups == 1 and rule.spends_alpha
    return run_looks(picked if rule.picks_groups else draw, decide_look, plan, boundary=rule.boundary(check),
                     gate=gate, window=window, adapt=adapt)


def timing_gate(check: Check) -> Gate:
    """The noise gate for a timing check: outliers and drift of the quantity its rule tests."""
    rule = get(check.rule)

    def gate(groups: Sequence[tuple[str, np.ndarray]], decision: Decision) -> str | None:
        if decision.details.get("statistic") == "mean":
            return None  # a timing mean is undecidable whatever the gate says: sampling on buys nothing
        for label, values in rule.tested_quantity([(label, x) for label, x in groups], check):
            problem = quantity_gate(values.tolist())
            if problem is not None:
                return f"{label}: {problem}"
        return None

    return gate


def run_sequential(draw: Callable[[int], Sequence[tuple[str, Sequence[float]]]], rule: str, plan: SequentialPlan,
                   **params: object) -> Decision:
    """:func:`sequential` for a rule named with its parameters as keywords (simulations, tests)."""
    return sequential(make_check(rule, params, alpha=plan.alpha), draw, plan)
