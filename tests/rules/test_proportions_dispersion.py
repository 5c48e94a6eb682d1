"""``two_proportions`` and ``dispersion``: fields, the procedures against scipy, decisions at 0 events, words."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize, stats

from claimcheck import rules
from claimcheck.stats import Counts
from claimcheck.stats._dispersion import (
    N_RESAMPLES, _SEED, _acceleration, bca_pvalue, chi2_bounds, normal_range_factor, spread, t3_bounds, t3_pvalue,
    t3_range_factor,
)
from claimcheck.stats._proportions import _restricted_difference, _restricted_ratio, p_above, p_below, score_bounds
from claimcheck.stats._proportions import corrected_z, score_z
from claimcheck.verdict import Verdict

PAIR = {"output": "a", "reference": "b"}


@pytest.mark.parametrize(
    ("rule", "check", "field", "message"),
    [
        ("two_proportions", {**PAIR, "bound": "at_most"}, "check.rule", "needs `check.threshold`"),
        ("two_proportions", {**PAIR, "threshold": 0.1, "bound": "up"}, "check.bound",
         "must be one of at_least, at_most, equivalent"),
        ("two_proportions", {**PAIR, "threshold": 1.5, "bound": "at_most"}, "check.threshold", "(-1, 1)"),
        ("two_proportions", {**PAIR, "threshold": 0.9, "bound": "equivalent", "scale": "ratio"}, "check.threshold",
         "must be > 1"),
        ("two_proportions", {**PAIR, "threshold": -0.2, "bound": "equivalent"}, "check.threshold", "(0, 1)"),
        ("two_proportions", {**PAIR, "threshold": 0, "bound": "at_least", "scale": "ratio"}, "check.threshold",
         "must be positive"),
        ("two_proportions", {**PAIR, "threshold": 0.1, "bound": "at_most", "trials": 2.5}, "check.trials",
         "whole number"),
        ("two_proportions", {"output": "a", "threshold": 0.1, "bound": "at_most"}, "check.rule",
         "needs `check.reference`"),
        ("dispersion", {"output": "s", "threshold": 0.1, "bound": "at_most", "measure": "range"}, "check.seeds",
         "needs `check.seeds`"),
        ("dispersion", {"output": "s", "threshold": 0.1, "bound": "at_most", "seeds": 5}, "check.seeds",
         "belongs to `measure: range`"),
        ("dispersion", {"output": "s", "threshold": -1, "bound": "at_most"}, "check.threshold", "non-negative"),
        ("dispersion", {"output": "s", "threshold": 1, "bound": "equivalent"}, "check.bound", "at_most, at_least"),
    ],
)
def test_every_problem_names_its_field(rule: str, check: dict[str, object], field: str, message: str) -> None:
    problems = rules.get(rule).problems({"rule": rule, **check})
    assert any(p.field == field and message in p.message for p in problems), problems


# -- the score test ----------------------------------------------------------------------------------
CASES = [Counts(3, 40, 7, 50), Counts(0, 300, 0, 300), Counts(0, 30, 5, 30), Counts(30, 30, 12, 40),
         Counts(2, 100, 0, 80)]


def _restricted_numerically(c: Counts, null: float, scale: str) -> float:
    """The arm-b rate of largest likelihood under the null, by bounded scalar optimisation."""

    def nll(pb: float) -> float:
        pa = pb + null if scale == "difference" else null * pb
        out = 0.0
        for x, n, p in ((c.events_a, c.trials_a, pa), (c.events_b, c.trials_b, pb)):
            p = min(max(p, 1e-15), 1 - 1e-15)
            out -= x * math.log(p) + (n - x) * math.log(1 - p)
        return out

    lo, hi = (max(0.0, -null), min(1.0, 1 - null)) if scale == "difference" else (0.0, min(1.0, 1 / null))
    return float(optimize.minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12}).x)


@pytest.mark.parametrize("counts", CASES)
def test_restricted_rates_maximise_the_likelihood_under_the_null(counts: Counts) -> None:
    for d0 in (-0.3, -0.05, 0.0, 0.02, 0.1):
        assert _restricted_difference(counts, d0)[1] == pytest.approx(_restricted_numerically(counts, d0, "difference"),
                                                                      abs=1e-5)
    for r0 in (0.3, 1.0, 2.0, 5.0):
        assert _restricted_ratio(counts, r0)[1] == pytest.approx(_restricted_numerically(counts, r0, "ratio"), abs=1e-5)


def test_score_statistic_at_no_difference_is_barnards_pooled_z() -> None:
    for c in (Counts(3, 40, 7, 50), Counts(12, 30, 4, 25)):
        table = [[c.events_a, c.events_b], [c.trials_a - c.events_a, c.trials_b - c.events_b]]
        total = c.trials_a + c.trials_b
        barnard = stats.barnard_exact(table, pooled=True).statistic
        assert score_z(c, 0.0, "difference") == pytest.approx(barnard * math.sqrt((total - 1) / total), rel=1e-9)


def test_skewness_correction_vanishes_for_a_symmetric_contrast_and_shrinks_a_skewed_one() -> None:
    even = Counts(50, 100, 50, 100)  # restricted rates 0.5 at no difference: no skewness
    assert corrected_z(even, 0.0, "difference") == pytest.approx(score_z(even, 0.0, "difference"), abs=1e-12)
    rare = Counts(9, 100, 1, 100)  # events near 0, null 0.02: the contrast's right tail is long, so z shrinks
    assert 0 < corrected_z(rare, 0.02, "difference") < score_z(rare, 0.02, "difference")


@pytest.mark.parametrize("counts", CASES)
@pytest.mark.parametrize("scale", ["difference", "ratio"])
def test_score_interval_is_the_set_of_nulls_the_test_keeps(counts: Counts, scale: str) -> None:
    low, high = score_bounds(counts, 0.05, scale)
    if math.isfinite(low) and low not in (-1.0, 0.0):
        assert p_above(counts, low, scale) == pytest.approx(0.05, abs=1e-6)
    if math.isfinite(high) and high != 1.0:
        assert p_below(counts, high, scale) == pytest.approx(0.05, abs=1e-6)


def test_zero_events_in_both_arms_bound_the_difference_but_not_the_ratio() -> None:
    none = [("a", [0.0] * 300), ("b", [0.0] * 300)]
    held = rules.decide("two_proportions", none, threshold=0.02, bound="at_most")
    assert held.verdict is Verdict.HOLDS and held.high < 0.02 and "0 of 300 vs 0 of 300" in held.reason
    tied = rules.decide("two_proportions", none, threshold=0.0, bound="at_most")
    assert tied.verdict is Verdict.INCONCLUSIVE  # equal at 0 events: no evidence either way
    ratio = rules.decide("two_proportions", none, threshold=2.0, bound="at_most", scale="ratio")
    assert ratio.verdict is Verdict.INCONCLUSIVE and "undefined" in ratio.reason


def test_one_arm_without_events_still_decides_a_ratio() -> None:
    groups = [("a", [0.0] * 200), ("b", [1.0] * 20 + [0.0] * 180)]
    decision = rules.decide("two_proportions", groups, threshold=0.5, bound="at_most", scale="ratio")
    assert decision.verdict is Verdict.HOLDS and decision.statistic == 0.0 and decision.high < 0.5


def test_equivalence_holds_inside_and_is_refuted_outside_the_band() -> None:
    same = [("a", [1.0] * 50 + [0.0] * 950), ("b", [1.0] * 52 + [0.0] * 948)]
    assert rules.decide("two_proportions", same, threshold=0.03, bound="equivalent").verdict is Verdict.HOLDS
    apart = [("a", [1.0] * 150 + [0.0] * 850), ("b", [1.0] * 50 + [0.0] * 950)]
    far = rules.decide("two_proportions", apart, threshold=0.03, bound="equivalent")
    assert far.verdict is Verdict.REFUTED and "lies outside [-0.03, 0.03]" in far.reason


def test_counts_of_trials_pool_into_rates() -> None:
    groups = [("a", [3.0, 0.0, 1.0]), ("b", [0.0, 0.0, 2.0])]
    decision = rules.decide("two_proportions", groups, threshold=0.1, bound="at_most", trials=10)
    assert decision.details["events"] == [4, 2] and decision.details["trials"] == [30, 30]
    with pytest.raises(ValueError, match="whole counts from 0 to 10"):
        rules.decide("two_proportions", [("a", [11.0, 0.0]), ("b", [0.0, 1.0])], threshold=0.1, bound="at_most",
                     trials=10)
    with pytest.raises(ValueError, match="needs 0/1 samples; group 'a' has 2.0"):
        rules.decide("two_proportions", [("a", [2.0, 0.0]), ("b", [0.0, 1.0])], threshold=0.1, bound="at_most")


def test_exact_decision_and_words() -> None:
    check = rules.make_check("two_proportions", {"threshold": 0.05, "bound": "at_most"}, labels=("a", "b"))
    rule = rules.get("two_proportions")
    groups = rule.groups([("a", [1, 0, 0, 0]), ("b", [0, 0, 0, 0])], check)
    decision = rule.decide_exactly(groups, check)
    assert decision.verdict is Verdict.REFUTED and decision.statistic == 0.25
    assert rule.expectation(check) == "rate(a) - rate(b) <= 0.05"
    assert rule.claimed(check).kind == "max" and rule.claimed(check).high == 0.05
    ratio = rules.make_check("two_proportions", {"threshold": 1.5, "bound": "equivalent", "scale": "ratio"},
                             labels=("a", "b"))
    band = rule.claimed(ratio)
    assert band.kind == "band" and band.low == pytest.approx(1 / 1.5) and band.high == 1.5
    assert rule.expectation(ratio) == "rate(a) / rate(b) within [0.6667, 1.5]"


def test_schema_accepts_a_number_per_grid_point_and_a_level_of_any_scalar_type() -> None:
    from claimcheck.claims.schema import json_schema

    check = json_schema()["properties"]["check"]["properties"]
    assert check["threshold"]["oneOf"][0] == {"type": "number"}
    assert check["threshold"]["oneOf"][1]["required"] == ["by", "values"]
    assert check["level"]["type"] == ["string", "number", "boolean"]
    assert check["bound"]["enum"] == ["at_most", "at_least", "equivalent"]  # each rule checks its own choices


# -- dispersion --------------------------------------------------------------------------------------
def test_mean_range_of_k_seeds_is_the_average_over_every_subset() -> None:
    x = np.random.default_rng(3).normal(size=9)
    for k in (2, 3, 5):
        brute = np.mean([max(c) - min(c) for c in itertools.combinations(x, k)])
        assert float(spread(x, "range", k)) == pytest.approx(brute, rel=1e-12)
    assert normal_range_factor(2) == pytest.approx(2 / math.sqrt(math.pi), rel=1e-9)
    assert normal_range_factor(5) == pytest.approx(2.3259, abs=1e-4)  # d2(5) of the control-chart tables


@pytest.mark.parametrize("measure", ["sd", "range"])
def test_bca_pvalue_is_alpha_at_scipys_bound(measure: str) -> None:
    x = np.random.default_rng(4).gamma(3.0, size=25)

    def statistic(sample: np.ndarray, axis: int = -1) -> np.ndarray:
        return spread(sample, measure, 3, axis=axis)

    boot = stats.bootstrap((x,), statistic, vectorized=True, n_resamples=N_RESAMPLES, confidence_level=0.9,
                           method="BCa", rng=np.random.default_rng(_SEED))
    accel, value, dist = _acceleration(x, measure, 3), float(statistic(x)), boot.bootstrap_distribution
    assert bca_pvalue(dist, value, accel, boot.confidence_interval.high, upper=True) == pytest.approx(0.05, abs=3e-3)
    assert bca_pvalue(dist, value, accel, boot.confidence_interval.low, upper=False) == pytest.approx(0.05, abs=3e-3)


def test_normal_theory_bounds_are_the_chi_square_interval() -> None:
    x = np.random.default_rng(5).normal(size=12)
    s, df = float(np.std(x, ddof=1)), 11
    low, high = chi2_bounds(x, "sd", 0, 0.05)
    assert low == pytest.approx(s * math.sqrt(df / stats.chi2.ppf(0.95, df)))
    assert high == pytest.approx(s * math.sqrt(df / stats.chi2.ppf(0.05, df)))


def test_t3_range_factor_is_the_expected_range_of_t3_draws() -> None:
    draws = np.random.default_rng(8).standard_t(3, size=(400_000, 5))
    monte_carlo = float(np.mean(draws.max(axis=1) - draws.min(axis=1)))  # SE about 0.2% of the value
    assert t3_range_factor(5) == pytest.approx(monte_carlo, rel=1e-2)
    pair = np.abs(draws[:, 0] - draws[:, 1]).mean()
    assert t3_range_factor(2) == pytest.approx(float(pair), rel=1e-2)


@pytest.mark.parametrize("measure", ["sd", "range"])
def test_t3_pvalue_is_alpha_at_the_t3_bounds(measure: str) -> None:
    x = np.random.default_rng(9).standard_t(3, size=14)
    low, high = t3_bounds(x, measure, 3, 0.05)
    assert low < float(spread(x, measure, 3)) < high
    assert t3_pvalue(x, measure, 3, high, upper=True) == pytest.approx(0.05, abs=1e-3)
    assert t3_pvalue(x, measure, 3, low, upper=False) == pytest.approx(0.05, abs=1e-3)


def test_a_sample_that_misses_the_tail_does_not_hold_an_upper_bound() -> None:
    """Ten values spread like normal ones with SD 1: chi-square alone would hold SD <= 1.7, t(3) tails may not."""
    x = np.array([-1.55, -1.0, -0.65, -0.35, -0.1, 0.1, 0.35, 0.65, 1.0, 1.55])
    s = float(np.std(x, ddof=1))
    assert chi2_bounds(x, "sd", 0, 0.05)[1] < 1.7 * s < t3_bounds(x, "sd", 0, 0.05)[1]
    decision = rules.decide("dispersion", [("score", x.tolist())], threshold=1.7 * s, bound="at_most")
    assert decision.verdict is Verdict.INCONCLUSIVE and "t(3) tails" in decision.reason


def test_dispersion_decides_both_ways_and_not_on_equal_values() -> None:
    rng = np.random.default_rng(6)
    tight = [("score", (0.7 + 0.01 * rng.standard_normal(30)).tolist())]
    assert rules.decide("dispersion", tight, threshold=0.05, bound="at_most").verdict is Verdict.HOLDS
    assert rules.decide("dispersion", tight, threshold=0.05, bound="at_least").verdict is Verdict.REFUTED
    ranged = rules.decide("dispersion", tight, threshold=0.1, bound="at_most", measure="range", seeds=5)
    assert ranged.verdict is Verdict.HOLDS and "mean range of 5 seeds" in ranged.reason
    equal = rules.decide("dispersion", [("score", [0.5] * 12)], threshold=0.05, bound="at_most")
    assert equal.verdict is Verdict.INCONCLUSIVE and "all 12 samples are equal" in equal.reason
    few = rules.decide("dispersion", [("score", [0.5, 0.6, 0.7])], threshold=0.05, bound="at_most", measure="range",
                       seeds=5)
    assert few.verdict is Verdict.INCONCLUSIVE and "6 seeds" in few.reason


def test_dispersion_exact_decision_and_words() -> None:
    rule = rules.get("dispersion")
    check = rules.make_check("dispersion", {"threshold": 0.2, "bound": "at_most", "measure": "range", "seeds": 2},
                             labels=("score",))
    groups = rule.groups([("score", [1.0, 1.1, 1.5])], check)
    decision = rule.decide_exactly(groups, check)
    assert decision.statistic == pytest.approx((0.1 + 0.5 + 0.4) / 3) and decision.verdict is Verdict.REFUTED
    assert rule.expectation(check) == "range of 2 seeds of score across seeds <= 0.2"
    assert rule.claimed(check).high == 0.2
