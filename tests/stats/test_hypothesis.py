"""The hypothesis a decision carries, and a rule that gets the between-run and dependence corrections by declaring one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest

from claimcheck import rules
from claimcheck.claim import Budget, Check, Claim, ProbeSpec, Scope, Source
from claimcheck.engine.result import verdict_path
from claimcheck.engine.runner import RunOptions, run_claim_item
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.rules import Param, Rule
from claimcheck.rules._base import ArrayGroups, Claimed
from claimcheck.stats import Decision, Hypothesis, decide_bound, widen_between_runs
from claimcheck.stats._dependent import decide_dependent
from claimcheck.verdict import Verdict

ALPHA = 0.05


def _ar1(seed: int, n: int = 30, rho: float = 0.8) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = np.empty(n)
    e[0] = rng.standard_normal()
    for t in range(1, n):
        e[t] = rho * e[t - 1] + np.sqrt(1 - rho**2) * rng.standard_normal()
    return e


@pytest.mark.parametrize(("rule", "params", "expected"), [
    ("at_least", {"threshold": 100.0, "statistic": "median"},
     Hypothesis("at_least", "median", threshold=100.0, assumed_spread=2.0)),
    ("at_most", {"threshold": 100.0, "statistic": "mean"},
     Hypothesis("at_most", "mean", threshold=100.0, assumed_spread=2.0)),
    ("ratio", {"threshold": 1.0, "bound": "at_most", "statistic": "median", "paired": True},
     Hypothesis("at_most", "median", threshold=1.0, scale="log", paired=True, assumed_spread=1.0)),
    ("equivalent", {"margin": 0.05, "scale": "log-ratio", "statistic": "median", "paired": True},
     Hypothesis("within", "median", margin=0.05, scale="log", paired=True, assumed_spread=1.0)),
    ("equivalent", {"margin": 2.0, "statistic": "mean"},
     Hypothesis("within", "mean", margin=2.0, assumed_spread=1.0)),
])
def test_the_rule_sets_the_hypothesis_its_decision_carries(rule: str, params: dict[str, object],
                                                           expected: Hypothesis) -> None:
    rng = np.random.default_rng(1)
    groups = [("x", 100.0 + rng.standard_normal(20))] if rule.startswith("at_") else [
        ("a", 100.0 + rng.standard_normal(20)), ("b", 100.0 + rng.standard_normal(20))]
    decision = rules.decide(rule, groups, alpha=ALPHA, **params)
    assert decision.hypothesis == expected
    assert Decision.from_dict(decision.to_dict()).hypothesis == expected  # the stored decision keeps it


def test_a_decision_that_read_no_interval_carries_none() -> None:
    """Too few samples, or a constant reading: nothing a correction could re-read (the widening once crashed on it)."""
    assert rules.decide("at_least", [("x", [101.0])], alpha=ALPHA, threshold=100.0).hypothesis is None
    constant = rules.decide("at_least", [("x", [99.0] * 12)], alpha=ALPHA, threshold=100.0, statistic="median")
    assert constant.verdict is Verdict.REFUTED and constant.hypothesis is None
    assert widen_between_runs(constant, [90.0, 100.0, 110.0]) is constant
    assert "hypothesis" not in constant.to_dict()


def test_a_hypothesis_names_its_edge() -> None:
    with pytest.raises(ValueError, match="`threshold` must be a finite number"):
        Hypothesis("at_least", "median")
    with pytest.raises(ValueError, match="`margin` must be a finite number"):
        Hypothesis("within", "median", threshold=1.0)


class Floor(Rule):
    """A timing rule no module of the statistics core names: the median of the output is at least ``floor``."""

    name = "floor_ms"
    summary = "the median of the output is at least `floor`"
    params = (Param("floor", "number", "the least the median may be"),)
    assumed_spread = 2.0

    def hypothesis(self, check: Check) -> Hypothesis:
        return Hypothesis("at_least", "median", threshold=check.number("floor"), assumed_spread=self.assumed_spread)

    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        decided = decide_bound("at_least", groups, alpha, threshold=check.number("floor"), statistic="median",
                               hypothesis=self.hypothesis(check))
        return replace(decided, rule=self.name)

    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        raise NotImplementedError

    def expectation(self, check: Check) -> str:
        return f"median {check.output} >= {check.number('floor'):g}"

    def claimed(self, check: Check) -> Claimed:
        return Claimed("min", check.number("floor"), None)


class Silent(Floor):
    """The same rule with no hypothesis declared: it gets neither correction."""

    name = "floor_silent"

    def hypothesis(self, check: Check) -> None:  # type: ignore[override]
        return None


@pytest.fixture
def floor_rules(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Register the two rules for one test (the registry is the rules' own, as a new rules module would fill it)."""
    monkeypatch.setitem(rules.registry(), Floor.name, Floor())
    monkeypatch.setitem(rules.registry(), Silent.name, Silent())
    yield


def test_a_new_rule_is_widened_and_gated_for_dependence_as_at_least_is(floor_rules: None) -> None:
    """The corrections read the hypothesis, so the new rule's corrected decisions equal ``at_least``'s to the bit."""
    x = 101.0 + 1.5 * _ar1(4)
    groups = [("x", x)]
    mine = rules.decide("floor_ms", groups, alpha=ALPHA, floor=100.0)
    known = rules.decide("at_least", groups, alpha=ALPHA, threshold=100.0, statistic="median")
    assert mine.rule == "floor_ms" and mine.verdict is known.verdict
    for history in ([], [99.0, 103.0, 101.0, 104.0]):
        widened, reference = widen_between_runs(mine, history), widen_between_runs(known, history)
        assert widened is not mine and "between_run" in widened.details
        assert (widened.verdict, widened.pvalue, widened.hold_pvalue, widened.low, widened.high) == (
            reference.verdict, reference.pvalue, reference.hold_pvalue, reference.low, reference.high)
    dependent = decide_dependent(mine, [("x", x)], ALPHA, "flagged", lags=10)
    reference_dependent = decide_dependent(known, [("x", x)], ALPHA, "flagged", lags=10)
    assert dependent is not None and reference_dependent is not None
    assert dependent.details["dependence"]["inflation"] > 1.5
    assert (dependent.verdict, dependent.pvalue, dependent.low, dependent.high) == (
        reference_dependent.verdict, reference_dependent.pvalue, reference_dependent.low, reference_dependent.high)
    silent = rules.decide("floor_silent", groups, alpha=ALPHA, floor=100.0)
    assert widen_between_runs(silent, [99.0, 103.0, 101.0, 104.0]) is silent
    assert decide_dependent(silent, [("x", x)], ALPHA, "flagged") is None


def _item(rule: str, samples: np.ndarray, history: tuple[float, ...]) -> tuple[Claim, RegisteredProbe]:
    check = Check(rule=rule, output="x", alpha=ALPHA, params={"floor": 100.0})
    claim = Claim("floor", "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("replay"), check,
                  budget=Budget(min_samples=10, max_samples=30, max_seconds=1e6, exclusive=True, looks=3))
    taken = [0]

    def replay(ctx: ProbeContext) -> dict[str, list[float]]:
        start, taken[0] = taken[0], taken[0] + ctx.n
        return {"x": [float(v) for v in samples[start: start + ctx.n]]}

    return claim, RegisteredProbe("replay", replay, {"x": Output("ms")})


def test_a_new_timing_rule_run_as_an_item_shows_the_widening_in_its_verdict_path(floor_rules: None) -> None:
    x = 101.5 + 1.0 * np.random.default_rng(7).standard_normal(30)
    history = (96.0, 104.0, 100.0, 107.0)
    results = {}
    for rule in ("floor_ms", "floor_silent"):
        claim, probe = _item(rule, x, history)
        results[rule] = run_claim_item(claim, "floor", {}, probe, options=RunOptions(seed=1),
                                       machine={"backend": "cpu"}, history=history)
    widened, silent = results["floor_ms"], results["floor_silent"]
    assert widened.raw_verdict is Verdict.HOLDS and widened.verdict is Verdict.INCONCLUSIVE
    assert verdict_path(widened.raw_verdict, widened.adjustments) == "holds → between-runs: inconclusive"
    assert silent.verdict is Verdict.HOLDS and silent.adjustment("between-runs") is None
