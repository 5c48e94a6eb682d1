"""Futility stop, promising-zone extension and the n that would decide, through the sequential loop and the runner."""

from __future__ import annotations

import math
from dataclasses import replace
import re
from typing import Any

import numpy as np
import pytest

from claimcheck import rules
from claimcheck.claim import Budget, Claim, ProbeSpec, Scope, Source
from claimcheck.engine import runner
from claimcheck.engine.options import RunOptions
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.stats import Adaptation, Decision, SequentialPlan
from claimcheck.stats._futility import conditional_power, extension_size, n_to_decide, outlook
from claimcheck.verdict import Verdict

PLAN = SequentialPlan(0.05, 10, 20, 2)  # looks at 10 and 20
CHECK = rules.make_check("at_least", {"threshold": 0.0, "statistic": "mean"}, labels=("x",))


def _run(x: np.ndarray, adapt: Adaptation | None, plan: SequentialPlan = PLAN) -> tuple[Decision, int]:
    taken = 0

    def draw(k: int) -> list[tuple[str, np.ndarray]]:
        nonlocal taken
        batch = [("x", x[taken: taken + k])]
        taken = min(len(x), taken + k)
        return batch

    return rules.sequential(CHECK, draw, plan, adapt=adapt), taken


def test_conditional_power_and_the_n_that_decides_follow_the_trend() -> None:
    # z = 1 at n = 10: the trend reaches z = c = 1.645 at n = 10 * 1.645^2 = 27.06
    assert n_to_decide(1.0, 10, 1.645) == 28
    assert n_to_decide(0.0, 10, 1.645) is None and n_to_decide(-1.0, 10, 1.645) is None
    assert conditional_power(1.0, 10, 28, 1.645) > 0.5 > conditional_power(1.0, 10, 26, 1.645)
    assert conditional_power(3.0, 10, 10, 1.645) == 1.0 and conditional_power(1.0, 10, 10, 1.645) == 0.0
    view = outlook(0.9, 0.1, 10, 20, 1.645)  # the holds side is the likelier
    assert view.verdict is Verdict.HOLDS and math.isclose(view.z, 1.2816, abs_tol=1e-3)


def test_an_item_that_cannot_decide_stops_for_futility_with_its_reason() -> None:
    x = np.random.default_rng(2).normal(0.0, 1.0, 40)  # a claim on its edge: no look will decide it
    before, taken_before = _run(x, None)
    after, taken_after = _run(x, Adaptation())
    assert taken_before == 20 and taken_after == 10
    assert before.verdict is after.verdict is Verdict.INCONCLUSIVE
    assert after.details["sequential"]["stopped"] == "futility"
    assert "stopped for futility at n = 10 of 20 samples planned" in after.reason
    assert re.search(r"had chance 0\.0\d\d at this estimate; about [\d,]+ samples would decide", after.reason)
    assert after.details["sequential"]["futility"]["power"] < 0.02


def test_futility_never_turns_a_verdict_the_plan_reaches_into_another() -> None:
    """Non-binding: over many claims near their edge, every adaptive verdict is the plan's or inconclusive."""
    rng = np.random.default_rng(9)
    moved = 0
    for _ in range(300):
        x = rng.normal(rng.uniform(-0.6, 0.6), 1.0, 20)  # 20 samples: no room to extend
        before, _ = _run(x, None)
        after, _ = _run(x, Adaptation())
        assert after.verdict in (before.verdict, Verdict.INCONCLUSIVE)
        moved += after.verdict is not before.verdict
    assert 0 < moved < 30  # it stops some claims that would have decided, and few


def test_an_item_narrowing_at_its_last_look_extends_and_decides() -> None:
    x = np.random.default_rng(80).normal(0.45, 1.0, 40)
    before, taken_before = _run(x, None)
    after, taken_after = _run(x, Adaptation())
    assert before.verdict is Verdict.INCONCLUSIVE and taken_before == 20
    assert after.verdict is Verdict.HOLDS and taken_after == 26
    record = after.details["sequential"]["extended"]
    assert record["from"] == 20 and record["to"] == 26 and 0.5 <= record["power"] < 0.8
    assert "last look moved out from n = 20 to 26 samples" in after.reason
    # the extended look keeps the planned last look's level: the p-value is the plan's own
    assert after.pvalue <= 1 and after.hold_pvalue <= 0.05


def test_the_extension_stays_within_the_time_room_and_the_factor() -> None:
    x = np.random.default_rng(82).normal(0.45, 1.0, 80)  # wants 38 at factor 2
    _, unlimited = _run(x, Adaptation())
    _, roomy = _run(x, Adaptation(room=lambda: 13))  # 10 drawn, 13 more allowed: the last look at 23
    _, none = _run(x, Adaptation(room=lambda: 5))  # not even the planned last look: no extension
    _, capped = _run(x, Adaptation(factor=1.5))
    assert unlimited == 38 and roomy == 23 and none == 20 and capped == 30


def test_extension_size_bisects_to_the_target_power() -> None:
    view = outlook(0.5, 0.1, 10, 20, 1.645)
    assert 0.5 <= view.power < 0.8
    size = extension_size(view, 1.645, Adaptation())
    assert 20 < size < 40
    assert conditional_power(view.z, 10, size, 1.645) >= 0.8 > conditional_power(view.z, 10, size - 1, 1.645)


def test_an_inconclusive_reason_names_the_n_that_would_decide() -> None:
    x = np.random.default_rng(3).normal(0.3, 1.0, 20)
    decision, _ = _run(x, None, SequentialPlan(0.05, 20, 20, 1))
    assert decision.verdict is Verdict.INCONCLUSIVE
    needed = decision.details["needed_n"]
    assert needed > 20 and f"about {needed:,} samples would decide at this estimate" in decision.reason


def test_an_estimate_on_the_edge_says_no_n_would_decide() -> None:
    x = np.array([-1.0, 1.0] * 10)  # mean exactly on the threshold: both p-values 0.5
    decision, _ = _run(x, None, SequentialPlan(0.05, 20, 20, 1))
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert decision.details["needed_n"] is None
    assert "no n would decide: the estimate sits on the edge" in decision.reason


def test_a_paired_item_names_rounds() -> None:
    check = rules.make_check("ratio", {"threshold": 1.0, "bound": "at_least", "paired": True, "statistic": "mean"},
                             labels=("a", "b"))
    rng = np.random.default_rng(4)
    b = 100 + rng.normal(0, 1, 20)
    a = b * (1.002 + 0.01 * rng.standard_normal(20))
    decision = rules.sequential(check, lambda k: [("a", a), ("b", b)], SequentialPlan(0.05, 20, 20, 1))
    assert decision.verdict is Verdict.INCONCLUSIVE and "rounds would decide at this estimate" in decision.reason


# -- the runner: the extension is sized to the time budget on the item's own clock ---------------------
class FakeClock:
    """A clock that moves only when the probe draws: ``per_sample`` seconds a sample."""

    def __init__(self, per_sample: float) -> None:
        self.now, self.per_sample = 1000.0, per_sample

    def __call__(self) -> float:
        return self.now


def _item(clock: FakeClock, x: np.ndarray, max_seconds: float) -> tuple[Any, int]:
    taken = {"n": 0}

    def replay(ctx: ProbeContext) -> dict[str, list[float]]:
        start, stop = taken["n"], min(len(x), taken["n"] + ctx.n)
        taken["n"] = stop
        clock.now += clock.per_sample * (stop - start)
        return {"x": [float(v) for v in x[start:stop]]}

    probe = RegisteredProbe("replay", replay, {"x": Output("")})
    claim = Claim("fut", "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("replay"), CHECK,
                  budget=Budget(min_samples=10, max_samples=20, looks=2, max_seconds=max_seconds))
    result = runner.run_claim_item(claim, "fut", {}, probe, options=RunOptions(), machine={})
    return result, taken["n"]


@pytest.mark.parametrize("max_seconds", [15.0, 24.0, 31.0, 200.0])
def test_the_runner_never_extends_past_the_time_budget(monkeypatch: pytest.MonkeyPatch, max_seconds: float) -> None:
    clock = FakeClock(1.0)
    monkeypatch.setattr(runner, "_clock", clock)
    x = np.random.default_rng(82).normal(0.45, 1.0, 80)
    start = clock.now
    result, taken = _item(clock, x, max_seconds)
    assert clock.now - start <= max(max_seconds, 20.0)  # the planned looks, then an extension within the budget
    # 15 s: no room past the planned 20 (which the plan draws as before); 24 s and 31 s: up to the budget;
    # 200 s: the n the target power asks for (38, under twice the plan)
    assert taken == {15.0: 20, 24.0: 24, 31.0: 31, 200.0: 38}[max_seconds]
    assert result.duration_s == clock.now - start


# -- the between-run widening: an item it leaves undecided names the n too --------------------------
def _timing_item(x: np.ndarray, history: tuple[float, ...]) -> Any:
    from tests.simulation import harness as H

    check = rules.make_check("at_least", {"threshold": 100.0}, labels=("x",))
    result, _ = H.run_result(check, [("x", x)], timing=True, history=history)
    return result


def test_a_widened_inconclusive_names_the_n_with_the_between_run_spread() -> None:
    x = 101.5 + 2.0 * np.random.default_rng(5).standard_normal(30)  # above 100 within the run
    assumed = _timing_item(x, ())  # a first run: twice the within-run SE assumed, which falls with n too
    assert assumed.raw_verdict is Verdict.HOLDS and assumed.verdict is Verdict.INCONCLUSIVE
    needed = assumed.decision.details["between_run"]["needed_n"]
    assert needed > 30 and f"with it, about {needed:,} samples would decide at this estimate" in assumed.reason
    wide = _timing_item(x, (95.0, 101.0, 107.0))  # earlier runs 6 apart: no n in one run narrows that
    assert wide.verdict is Verdict.INCONCLUSIVE and wide.decision.details["between_run"]["needed_n"] is None
    assert "no n in one run would decide: the between-run spread alone is wider" in wide.reason


# -- a look the between-run component would undo samples on ------------------------------------------
def _paired_timing_item(a: np.ndarray, b: np.ndarray, history: tuple[float, ...] | None) -> Any:
    from tests.simulation import harness as H

    check = rules.make_check("ratio", {"threshold": 1.0, "bound": "at_least", "paired": True},
                             labels=("a", "b"))
    return H.run_result(check, [("a", a), ("b", b)], timing=True, history=history,
                        plan=SequentialPlan(0.05, 8, 30, 3))


def test_a_look_the_between_run_component_would_undo_samples_on_to_a_later_look() -> None:
    """Decisive within the run at 8 rounds, undone by the assumed spread: the item draws on instead of stopping."""
    rng = np.random.default_rng(13)
    b = 100 + rng.normal(0, 1, 30)
    a = b * np.exp(0.008 + 0.01 * rng.standard_normal(30))  # about 0.8% faster, 1% noise a round
    within, within_n = _paired_timing_item(a, b, None)  # no between-run component: stops where it decides
    first, first_n = _paired_timing_item(a, b, ())  # a first run: the component the item is adjudicated with
    assert within.verdict is Verdict.HOLDS and within_n < 30, within.reason
    assert first_n > within_n, (within_n, first_n)
    record = first.decision.details["sequential"]
    assert record["sampled_on_between_runs_at"][0] == len(within.decision.details["sequential"]["alpha_per_look"])
    assert first.verdict is Verdict.HOLDS, first.reason  # the later look survives the widening


def test_a_look_the_component_keeps_still_stops() -> None:
    settled = Adaptation(between_runs=lambda d: d)
    undone = Adaptation(between_runs=lambda d: replace(d, verdict=Verdict.INCONCLUSIVE))
    x = np.random.default_rng(3).normal(3.0, 1.0, 20)  # a mean far above 0: decisive at the first look
    kept, kept_n = _run(x, settled)
    sampled, sampled_n = _run(x, undone)
    assert kept.verdict is Verdict.HOLDS and kept_n == 10 and "sampled_on_between_runs_at" not in \
        kept.details["sequential"]
    assert sampled_n == 20 and sampled.details["sequential"]["sampled_on_between_runs_at"] == [1]


# -- the futility stop reads the chance of a verdict that survives the between-run component ---------------
def test_spread_ratio_is_constant_when_assumed_and_grows_with_a_history_as_the_se_shrinks() -> None:
    from tests.simulation import harness as H

    from claimcheck.stats import spread_ratio

    check = rules.make_check("at_least", {"threshold": 100.0}, labels=("x",))
    x = 101.5 + 2.0 * np.random.default_rng(5).standard_normal(30)
    raw = H.run_result(check, [("x", x)], timing=True, history=None)[0].decision  # not widened
    half = (raw.high - raw.low) / 2
    symmetric = replace(raw, low=raw.statistic - half, high=raw.statistic + half)
    assert math.isclose(spread_ratio(symmetric, 1.0, 0.05)(1.0), math.sqrt(1 + 2.0 ** 2))  # twice the SE assumed
    assumed = spread_ratio(raw, 1.0, 0.05)(1.0)
    facing = raw.statistic - raw.low  # the median's interval is asymmetric: the side facing the edge is read
    assert math.isclose(assumed, math.hypot(facing, 2.0 * half) / facing)
    assert spread_ratio(raw, 1.0, 0.05)(0.25) == assumed  # an assumed spread shrinks with the SE
    history = (99.0, 101.0, 103.0)
    ratio = spread_ratio(raw, 1.0, 0.05, history=history)
    now, later = ratio(1.0), ratio(0.25)
    assert 1.0 < now < later  # a spread read off earlier runs does not shrink: the ratio grows
    assert spread_ratio(raw, 1.0, 0.05, indifference=0.5)(1.0) == 1.0  # a short history's margin moves the edge
    assert spread_ratio(raw, 1.0, 0.05, history=history, indifference=0.5)(1.0) == now  # earlier runs win, as widened
    # an unbounded interval (a sign test at an early look's small level): the SE is the distance over z
    unbounded = replace(raw, low=-math.inf, high=math.inf)
    se = abs(raw.statistic - 100.0) / 2.0
    spread = float(np.std(history, ddof=1)) * float(__import__("scipy.stats").stats.t.ppf(0.95, 2)) / 1.6448536
    assert math.isclose(spread_ratio(unbounded, 2.0, 0.05, history=history)(0.5),
                        math.hypot(se * 0.5, spread) / (se * 0.5), rel_tol=1e-6)


def _ratio_rounds(effect: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    b = 100 + rng.normal(0, 1, 30)
    return b * np.exp(effect + 0.01 * rng.standard_normal(30)), b


def test_an_undecided_look_stops_where_the_between_run_spread_leaves_no_later_look_a_verdict() -> None:
    a, b = _ratio_rounds(0.004, 21)  # about 0.4% faster: undecided at 8 rounds within the run
    narrow, narrow_n = _paired_timing_item(a, b, (1.0039, 1.004, 1.0041))
    wide, wide_n = _paired_timing_item(a, b, (0.8, 1.0, 1.25))  # earlier runs 20% apart
    assert narrow_n > 8, narrow.reason  # the spread of its runs is no wider than its own: it samples on
    assert wide_n == 8 and wide.verdict is Verdict.INCONCLUSIVE, wide.reason
    record = wide.decision.details["sequential"]
    assert record["stopped"] == "futility" and record["futility"]["between_runs"] > 1
    assert "a verdict that survives the between-run spread by n = 30 had chance" in wide.reason
    assert "no n in one run would decide: the between-run spread alone is wider" in wide.reason
    assert narrow.decision.details["sequential"].get("futility") is None


def test_a_decisive_look_the_component_would_undo_stops_when_no_later_look_could_keep_it() -> None:
    from tests.simulation import harness as H

    a, b = _ratio_rounds(0.05, 22)  # 5% faster, 1% noise a round: every round agrees, decisive at 12 rounds
    check = rules.make_check("ratio", {"threshold": 1.0, "bound": "at_least", "paired": True}, labels=("a", "b"))

    def item(history: tuple[float, ...]) -> tuple[Any, int]:
        return H.run_result(check, [("a", a), ("b", b)], timing=True, history=history,
                            plan=SequentialPlan(0.05, 12, 30, 2))

    kept, kept_n = item((1.049, 1.05, 1.051))
    undone, undone_n = item((0.7, 1.0, 1.4))
    assert kept.verdict is Verdict.HOLDS and kept_n == 12, kept.reason
    assert undone_n == 12 and undone.raw_verdict is Verdict.HOLDS and undone.verdict is Verdict.INCONCLUSIVE
    assert undone.decision.details["sequential"]["stopped"] == "futility"
    assert "sampled_on_between_runs_at" not in undone.decision.details["sequential"]
    assert "a verdict that survives the between-run spread by n = 30 had chance" in undone.reason
    assert undone.reason.count("no n in one run would decide") == 1, undone.reason  # named once
