"""Every decision carries the p-value of its hold test, and it agrees with the verdict."""

from __future__ import annotations

import numpy as np
import pytest

from claimcheck.rules import decide, decide_check, make_check, run_sequential
from claimcheck.stats import SequentialPlan
from claimcheck.verdict import Verdict

ALPHA = 0.05

CASES = [
    ("at_least", {"threshold": 10.0}, 1),
    ("at_most", {"threshold": 10.0}, 1),
    ("at_least", {"threshold": 10.0, "statistic": "median"}, 1),
    ("ratio", {"threshold": 1.0, "bound": "at_least"}, 2),
    ("ratio", {"threshold": 1.0, "bound": "at_least", "paired": True}, 2),
    ("equivalent", {"margin": 0.5}, 2),
    ("ordering", {}, 3),
]


@pytest.mark.parametrize(("rule", "params", "groups"), CASES)
@pytest.mark.parametrize("shift", [-1.5, -0.2, 0.0, 0.2, 1.5])
def test_hold_pvalue_decides_holds(rule, params, groups, shift):
    rng = np.random.default_rng(7)
    # group i sits at 10 + shift * (groups - i): the claimed side for positive shifts
    data = [(f"g{i}", 10.0 + shift * (groups - i) + rng.normal(0, 1, 20)) for i in range(groups)]
    if rule == "at_most":
        data = [("g0", 20.0 - data[0][1])]
    if rule == "equivalent":
        data = [("g0", data[0][1]), ("g1", data[0][1] + rng.normal(abs(shift) - 0.2, 0.3, 20))]
    d = decide(rule, data, alpha=ALPHA, **params)
    assert 0.0 <= d.hold_pvalue <= 1.0
    assert (d.verdict is Verdict.HOLDS) == (d.hold_pvalue <= ALPHA)
    if d.verdict is Verdict.REFUTED:
        assert d.hold_pvalue > ALPHA


def test_rates_carry_their_hold_pvalue():
    d = decide("rate_at_most", [("e", [0] * 100 + [1] * 2)], threshold=0.1)
    assert d.verdict is Verdict.HOLDS and d.hold_pvalue == pytest.approx(d.details["p_holds"]) and d.hold_pvalue <= ALPHA
    zero = decide("zero_rate", [("e", [0] * 100)], threshold=0.05)
    assert zero.verdict is Verdict.HOLDS and zero.hold_pvalue == pytest.approx(0.95**100)
    short = decide("zero_rate", [("e", [0] * 20)], threshold=0.05)
    assert short.verdict is Verdict.INCONCLUSIVE and short.hold_pvalue == pytest.approx(0.95**20)
    assert short.hold_pvalue > ALPHA
    assert decide("zero_rate", [("e", [0, 1])], threshold=0.05).hold_pvalue == 1.0


def test_deterministic_decisions_hold_at_zero_and_otherwise_at_one():
    holds = decide_check(make_check("at_least", {"threshold": 1.0}, labels=["x"]), [("x", [2.0])], ALPHA,
                         deterministic=True)
    fails = decide_check(make_check("at_least", {"threshold": 3.0}, labels=["x"]), [("x", [2.0])], ALPHA,
                         deterministic=True)
    assert (holds.verdict, holds.hold_pvalue, fails.verdict, fails.hold_pvalue) == (
        Verdict.HOLDS, 0.0, Verdict.REFUTED, 1.0)
    exact = decide("exact", [("x", [4.0])], expected=4.0)
    assert exact.hold_pvalue == 0.0 and decide("exact", [("x", [4.0])], expected=5.0).hold_pvalue == 1.0


@pytest.mark.parametrize("mean", [10.3, 10.8, 12.0])
def test_sequential_hold_pvalue_is_below_alpha_exactly_when_some_look_held(mean):
    rng = np.random.default_rng(3)
    plan = SequentialPlan(ALPHA, 8, 30, 3)
    d = run_sequential(lambda k: [("x", rng.normal(mean, 1.0, k))], "at_least", plan, threshold=10.0)
    looks = d.details["sequential"]
    held = any(p <= a for p, a in zip(looks["hold_pvalue_per_look"], looks["alpha_per_look"]))
    assert (d.hold_pvalue <= ALPHA) == held == (d.verdict is Verdict.HOLDS)
    assert d.hold_pvalue >= min(looks["hold_pvalue_per_look"])
