"""Constant outputs decided exactly, counts read as events, and what a paired ratio says it tests."""

from __future__ import annotations

import numpy as np
import pytest

from claimcheck import rules
from claimcheck.stats import SequentialPlan
from claimcheck.stats._constant import constant_value, samples_to_decide
from claimcheck.verdict import Verdict


@pytest.mark.parametrize(("statistic", "n", "p"), [("median", 20, 0.5**20), ("mean", 60, 0.95**60)])
def test_an_output_exactly_zero_in_every_sample_holds_at_most_its_threshold(statistic: str, n: int, p: float) -> None:
    decision = rules.decide("at_most", [("err", [0.0] * n)], threshold=3e-5, statistic=statistic)
    assert decision.verdict is Verdict.HOLDS and "decided exactly: 0 <= 3.00e-05" in decision.reason
    assert decision.details["reading"] == f"constant ({statistic})" and decision.hold_pvalue == pytest.approx(p)


@pytest.mark.parametrize(("statistic", "n"), [("median", 20), ("mean", 60)])
def test_a_constant_error_three_times_over_is_refuted(statistic: str, n: int) -> None:
    decision = rules.decide("at_most", [("err", [9e-5] * n)], threshold=3e-5, statistic=statistic)
    assert decision.verdict is Verdict.REFUTED and "9.00e-05 > 3.00e-05" in decision.reason


def test_a_mean_needs_the_stronger_reading_and_says_which_n_would_do() -> None:
    """Equal samples do not bound a mean: 20 zeros show only that departures are rarer than 1 in 7."""
    decision = rules.decide("at_most", [("err", [0.0] * 20)], threshold=3e-5, statistic="mean")
    assert decision.verdict is Verdict.INCONCLUSIVE and decision.details["required_n"] == 59
    assert "59 would, or 5 with `statistic: median`" in decision.reason


def test_equal_within_float32_rounding_counts_as_constant_and_real_noise_does_not() -> None:
    base = np.float32(0.1)
    assert constant_value(np.array([base, np.nextafter(base, np.float32(1))], dtype=float)) is not None
    assert constant_value(np.array([1.0, 1.0001])) is None


def test_too_few_constant_samples_stay_inconclusive_with_the_n_that_would_decide() -> None:
    decision = rules.decide("at_least", [("x", [2.0] * 3)], threshold=1.0, statistic="median")
    assert decision.verdict is Verdict.INCONCLUSIVE and decision.details["required_n"] == 5
    assert "5 would" in decision.reason
    assert samples_to_decide(0.05) == 5 and samples_to_decide(1e-12) == 40 and samples_to_decide(0.05, "mean") == 59


def test_a_constant_reading_keeps_the_error_rate_of_a_sequential_plan() -> None:
    """Through the plan: a constant output holds at the first look that can spend enough alpha."""
    decision = rules.run_sequential(lambda k: [("err", [0.0] * k)], "at_most", SequentialPlan(0.05, 8, 30, 3),
                                    threshold=3e-5, statistic="median")
    assert decision.verdict is Verdict.HOLDS and decision.hold_pvalue <= 0.05


def test_constant_arms_decide_a_ratio_and_an_equivalence_exactly() -> None:
    ratio = rules.decide("ratio", [("a", [3.0] * 10), ("b", [1.0] * 10)], threshold=2.0, bound="at_most",
                         statistic="median", paired=True)
    assert ratio.verdict is Verdict.REFUTED and ratio.statistic == 3.0
    same = rules.decide("equivalent", [("a", [1.0] * 10), ("b", [1.0] * 10)], margin=0.01, scale="log-ratio",
                        statistic="median")
    assert same.verdict is Verdict.HOLDS and "lies within" in same.reason


@pytest.mark.parametrize("rule", ["zero_rate", "rate_at_most"])
def test_a_non_zero_count_is_an_event(rule: str) -> None:
    counts = [0.0] * 40 + [3.0, 1.0, 2.0] * 20
    decision = rules.decide(rule, [("mismatches", counts)], threshold=0.1)
    assert decision.verdict is Verdict.REFUTED and decision.details["events"] == 60
    assert "counts read as events" in decision.reason


def test_zero_counts_hold_and_a_negative_or_fractional_count_is_one_clear_error() -> None:
    assert rules.decide("zero_rate", [("m", [0.0] * 100)], threshold=0.05).verdict is Verdict.HOLDS
    with pytest.raises(ValueError, match=r"0/1 samples or non-negative counts; group 'm' has 0.5"):
        rules.decide("zero_rate", [("m", [0.0, 0.5])], threshold=0.05)
    with pytest.raises(ValueError, match=r"has -1.0"):
        rules.decide("rate_at_most", [("m", [0.0, -1.0])], threshold=0.05)


def test_the_paired_median_ratio_says_it_tests_the_median_of_per_round_ratios() -> None:
    check = rules.make_check("ratio", {"threshold": 1.2, "bound": "at_least", "statistic": "median", "paired": True})
    assert rules.get("ratio").expectation(check) == "median of per-round x / reference >= 1.2"
    rng = np.random.default_rng(3)
    a, b = 2 + 0.01 * rng.standard_normal(20), 1 + 0.01 * rng.standard_normal(20)
    decision = rules.decide_check(check, [("x", a), ("reference", b)], 0.05)
    assert decision.estimate_label == "median of per-round ratios"
    assert decision.statistic == pytest.approx(float(np.median(a / b)))
