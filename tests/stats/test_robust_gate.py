"""Robust locations, the noise gate on the tested quantity, and the pairwise ordering refutation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from claimcheck import rules
from claimcheck.rules import make_check, run_sequential, sequential, timing_gate
from claimcheck.stats import SequentialPlan, quantity_gate
from claimcheck.stats._robust import ShiftEstimate, SignEstimate, mann_whitney_p
from claimcheck.verdict import Verdict

PLAN = SequentialPlan(0.05, 8, 30, 3)


def test_sign_estimate_is_scipys_quantile_test_and_binomtest():
    x = np.round(np.random.default_rng(0).normal(10, 1, 19), 1)
    est = SignEstimate(x)
    for value in (9.0, 10.0, float(np.median(x)), 11.0):
        assert est.p_greater(value) == pytest.approx(
            stats.binomtest(int(np.sum(x > value)), len(x), 0.5, alternative="greater").pvalue)
        assert est.p_less(value) == pytest.approx(
            stats.binomtest(int(np.sum(x < value)), len(x), 0.5, alternative="greater").pvalue)
    low = stats.quantile_test(x, q=0.0, p=0.5, alternative="greater").confidence_interval(0.95).low
    high = stats.quantile_test(x, q=0.0, p=0.5, alternative="less").confidence_interval(0.95).high
    assert est.bounds(0.05) == (pytest.approx(low), pytest.approx(high))


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_mann_whitney_is_scipys(alternative):
    rng = np.random.default_rng(1)
    for n, m in ((8, 8), (19, 11), (30, 30)):
        a, b = np.round(rng.normal(0, 1, n), 1), np.round(rng.normal(0.3, 1, m), 1)
        assert mann_whitney_p(a, b, alternative) == pytest.approx(
            stats.mannwhitneyu(a, b, alternative=alternative, method="asymptotic").pvalue, rel=1e-12)
    shift = ShiftEstimate(np.arange(10.0) + 3, np.arange(10.0))
    assert shift.estimate == 3.0 and shift.lower(0.05) < 3.0 < shift.upper(0.05)


def test_a_spike_moves_the_mean_ratio_but_not_the_median_of_per_round_ratios():
    rng = np.random.default_rng(2)
    b = 100 + 2 * rng.standard_normal(30)
    a = 0.80 * b * (1 + 0.01 * rng.standard_normal(30))
    a[[3, 17]] *= 1.3  # two preempted rounds in one arm
    mean = rules.decide("ratio", [("a", a), ("b", b)], threshold=0.82, bound="at_most", paired=True,
                        statistic="mean")
    median = rules.decide("ratio", [("a", a), ("b", b)], threshold=0.82, bound="at_most", paired=True,
                          statistic="median")
    assert mean.verdict is not Verdict.HOLDS and median.verdict is Verdict.HOLDS
    assert median.reason.startswith("median of per-round ratios 0.8")


def test_quantity_gate_flags_spikes_and_drift_not_normal_noise():
    rng = np.random.default_rng(3)
    quiet = 100 + 2 * rng.standard_normal(30)
    assert quantity_gate(quiet) is None
    spiky = quiet.copy()
    spiky[7] *= 1.3
    assert quantity_gate(spiky).startswith("spiky: 1 of 30 samples lie beyond the median ± 6 robust SD")
    drifting = quiet + np.r_[np.zeros(15), np.full(15, 6.0)]
    assert quantity_gate(drifting, dependence=False).startswith("drifting: second half of the samples is +")
    assert quantity_gate(drifting).startswith("serially dependent: lag-1 autocorrelation of the ranks +")  # a step
    near_zero = 0.01 * rng.standard_normal(30)  # a paired contrast: no coefficient of variation needed
    assert quantity_gate(near_zero) is None


def test_the_gate_measures_the_paired_contrast_not_each_arm():
    """Arms with 20% shared noise: the per-round log-ratio is quiet, so nothing is flagged."""
    rng = np.random.default_rng(4)
    common = 100 * (1 + 0.2 * rng.standard_normal(30))
    a, b = 0.55 * common * (1 + 0.01 * rng.standard_normal(30)), common * (1 + 0.01 * rng.standard_normal(30))
    check = rules.for_timing(make_check("ratio", {"threshold": 0.74, "bound": "at_least", "paired": True},
                                        labels=("a", "b")), timing=True)
    decision = rules.decide_check(check, [("a", a), ("b", b)], 0.05)
    assert decision.verdict is Verdict.REFUTED and decision.details["statistic"] == "median"
    assert timing_gate(check)([("a", a), ("b", b)], decision) is None


def test_a_gated_look_keeps_sampling_and_the_problem_is_kept():
    rng = np.random.default_rng(5)
    a, b = 100 + 2 * rng.standard_normal(30), 100 + 2 * rng.standard_normal(30)
    a[2] = 200.0  # a spike in the first look, in one arm
    params = {"threshold": 0.8, "bound": "at_least", "paired": True}
    check = rules.for_timing(make_check("ratio", params, labels=("a", "b")), timing=True)
    taken = []

    def draw(k):
        start = sum(taken)
        taken.append(k)
        return [("a", a[start:start + k]), ("b", b[start:start + k])]

    decision = sequential(check, draw, PLAN, gate=timing_gate(check))
    seq = decision.details["sequential"]
    assert seq["gate_per_look"][0] is not None and seq["look"] == 3  # decisive at 8, but flagged
    assert decision.verdict is Verdict.HOLDS and decision.details["noise_gate"].startswith("per-round log-ratio: spiky")


def test_a_one_sample_timing_check_decides_once_on_its_window():
    """Drift moves a timing output itself: the window, not an early look, is what its figure means."""
    x = 100 + 2 * np.random.default_rng(5).standard_normal(30)
    check = rules.for_timing(make_check("at_least", {"threshold": 90.0}, labels=("x",)), timing=True)
    taken = []

    def draw(k):
        start = sum(taken)
        taken.append(k)
        return [("x", x[start:start + k])]

    decision = sequential(check, draw, PLAN, gate=timing_gate(check))
    seq = decision.details["sequential"]
    assert taken == [8, 11, 11] and decision.n == 30  # decisive at 8, but the window is 30
    assert seq["boundary"] == "window" and seq["alpha_per_look"] == [PLAN.alpha]
    assert decision.verdict is Verdict.HOLDS and decision.confidence_level == pytest.approx(0.9)
    # the same check as a shared (non-timing) item stops at the first decisive look
    taken.clear()
    shared = rules.for_timing(make_check("at_least", {"threshold": 90.0}, labels=("x",)), timing=False)
    assert sequential(shared, draw, PLAN).n == 8


def test_ordering_refutes_on_the_extreme_pair():
    """Means 0 / 0.3 / 0.6 claimed decreasing: adjacent steps alone refuted them 0.26-0.29 of the time."""
    rng = np.random.default_rng(6)
    reps, refuted = 400, 0
    for _ in range(reps):
        data = [rng.normal(m, 1.0, 30) for m in (0.0, 0.3, 0.6)]
        taken = [0]

        def draw(k, data=data):
            out = [(f"L{i}", d[taken[0]:taken[0] + k]) for i, d in enumerate(data)]
            taken[0] += k
            return out

        refuted += run_sequential(draw, "ordering", PLAN).verdict is Verdict.REFUTED
    assert refuted / reps > 0.29 + 3 * math.sqrt(0.29 * 0.71 / reps)  # measured 0.465
    d = rules.decide("ordering", [(f"L{i}", rng.normal(m, 1.0, 30)) for i, m in enumerate((0.0, 0.3, 0.6))])
    assert [p["pair"] for p in d.details["pairs"]] == ["L0 > L1", "L0 > L2", "L1 > L2"]
