"""SequentialPlan arithmetic and the run_sequential loop (error rates: test_simulation.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from claimcheck.claim import Budget
from claimcheck.rules import decide, run_sequential
from claimcheck.stats import SequentialPlan
from claimcheck.stats._sequential import sequential_pvalue, spent
from claimcheck.verdict import Verdict


@pytest.mark.parametrize("spending", ["pocock", "obf"])
def test_plan_spends_exactly_alpha(spending):
    plan = SequentialPlan(0.05, 10, 200, 4, spending)
    assert plan.sizes == (10, 74, 137, 200)
    assert sum(plan.alphas) == pytest.approx(0.05, rel=1e-12)
    assert all(a > 0 for a in plan.alphas)
    assert plan.alpha_for(3) == plan.alphas[3]
    with pytest.raises(IndexError):
        plan.alpha_for(4)


def test_spending_functions_match_their_definitions():
    # Lan & DeMets (1983): O'Brien-Fleming type 2 - 2 Phi(z_{1-a/2} / sqrt(t)); Pocock type a ln(1 + (e-1) t)
    assert spent(0.5, 0.05, "obf") == pytest.approx(2 - 2 * stats.norm.cdf(stats.norm.ppf(0.975) / math.sqrt(0.5)))
    assert spent(0.5, 0.05, "pocock") == pytest.approx(0.05 * math.log(1 + (math.e - 1) * 0.5))
    assert spent(1.0, 0.05, "obf") == pytest.approx(0.05)


def test_plan_edge_shapes_and_validation():
    assert SequentialPlan(looks=1).sizes == (200,) and SequentialPlan(looks=1).alphas == (0.05,)
    assert SequentialPlan(min_samples=5, max_samples=6, looks=4).sizes == (5, 6)
    assert SequentialPlan.from_budget(Budget(), alpha=0.01).alpha == 0.01
    with pytest.raises(ValueError, match="`min_samples` \\(20\\) must not exceed `max_samples` \\(10\\)"):
        SequentialPlan(min_samples=20, max_samples=10)
    with pytest.raises(ValueError, match="`looks` must be a positive integer; got 0"):
        SequentialPlan(looks=0)
    with pytest.raises(ValueError, match="`spending` must be 'pocock' or 'obf'"):
        SequentialPlan(spending="linear")


def stream(*means, sd=1.0, seed=0):
    rng = np.random.default_rng(seed)
    calls = []

    def draw(k):
        calls.append(k)
        return [(f"g{i}", rng.normal(m, sd, k)) for i, m in enumerate(means)]

    return draw, calls


def test_clear_claim_stops_at_the_first_look():
    draw, calls = stream(20.0)
    d = run_sequential(draw, "at_least", SequentialPlan(), threshold=10.0)
    seq = d.details["sequential"]
    assert d.verdict is Verdict.HOLDS and calls == [10] and seq["look"] == 1 and seq["stopped"] == "decided"
    assert d.alpha == 0.05 and d.n == 10


def test_undecided_claim_uses_every_look_and_draws_increments():
    draw, calls = stream(10.0, sd=5.0)
    plan = SequentialPlan()
    d = run_sequential(draw, "at_least", plan, threshold=10.0)
    assert calls == [10, 64, 63, 63] and d.n == 200
    seq = d.details["sequential"]
    assert seq["alpha_per_look"] == list(plan.alphas) and seq["stopped"] == "max_samples"
    assert d.pvalue == pytest.approx(sequential_pvalue(seq["pvalue_per_look"], plan.alphas, 0.05))
    assert d.confidence_level == pytest.approx(1 - 2 * plan.alphas[-1])


def test_sequential_pvalue_is_refuted_exactly_when_a_look_refutes():
    draw, _ = stream(8.0)
    d = run_sequential(draw, "at_least", SequentialPlan(), threshold=10.0)
    assert d.verdict is Verdict.REFUTED and d.pvalue <= 0.05
    assert sequential_pvalue([0.5, 0.01], [0.01, 0.04], 0.05) == pytest.approx(0.0125)
    assert sequential_pvalue([0.9], [0.01], 0.05) == 1.0


def test_deterministic_probe_returns_one_value_and_decides_at_once():
    d = run_sequential(lambda k: [("v", [4.0])], "exact", SequentialPlan(), expected=4.0)
    assert d.verdict is Verdict.HOLDS and d.n == 1 and d.details["sequential"]["alpha_per_look"] == [0.05]


def test_zero_rate_uses_full_alpha_at_every_look():
    plan = SequentialPlan(0.05, 100, 400, 4)
    d = run_sequential(lambda k: [("event", np.zeros(k))], "zero_rate", plan, threshold=0.01)
    assert d.verdict is Verdict.HOLDS and d.n == 300  # 0 of 299 already puts the bound at 0.01
    assert d.details["sequential"]["alpha_per_look"] == [0.05] * 3


def test_empty_draw_ends_sampling_with_the_last_decision():
    chunks = iter([[10.0, 11.0, 12.0] * 3 + [10.0], []])  # the probe ran out of time after one batch
    d = run_sequential(lambda k: [("x", next(chunks))], "at_least", SequentialPlan(), threshold=11.0)
    assert d.details["sequential"]["stopped"] == "no more samples" and d.n == 10
    with pytest.raises(ValueError, match="`draw` returned no samples"):
        run_sequential(lambda k: [("x", [])], "at_least", SequentialPlan(), threshold=1.0)


def test_params_are_validated_before_drawing():
    def draw(k):
        raise AssertionError("drew samples")

    with pytest.raises(ValueError, match="rule `at_least` needs `check.threshold`"):
        run_sequential(draw, "at_least", SequentialPlan())


def test_naive_retesting_would_inflate_false_refutations():
    """The reason for spending: re-testing at full alpha after every batch refutes true claims too often."""
    rng = np.random.default_rng(11)
    sizes = SequentialPlan(looks=6).sizes
    naive = 0
    for _ in range(400):
        x = rng.normal(10.0, 1.0, sizes[-1])
        naive += any(decide("at_least", [("x", x[:n])], threshold=10.0).verdict is Verdict.REFUTED for n in sizes)
    assert naive / 400 > 0.05 + 2 * math.sqrt(0.05 * 0.95 / 400)
