"""Rule objects: parameter validation, defaults, exact decisions for deterministic probes, words."""

from __future__ import annotations

import math

import numpy as np
import pytest

from claimcheck import rules
from claimcheck.claim import Check
from claimcheck.verdict import Verdict

GROUP = [("x", [1.0, 2.0, 3.0])]


def test_registry_discovers_every_rule_module_once() -> None:
    assert set(rules.names()) == {"at_least", "at_most", "equivalent", "ratio", "ordering", "monotone",
                                  "rate_at_most", "zero_rate", "exact", "two_proportions", "dispersion", "level_ratio",
                                  "level_equivalent", "relation"}
    for rule in rules.registry().values():
        assert rule.summary and rule.name in rules.names()


@pytest.mark.parametrize(
    ("rule", "check", "field", "message"),
    [
        ("at_least", {"output": "x"}, "check.rule", "rule `at_least` needs `check.threshold`"),
        ("at_least", {"output": "x", "threshold": 1, "margin": 2}, "check.margin", "is not used by rule `at_least`"),
        ("at_least", {"output": "x", "threshold": "high"}, "check.threshold", "must be a finite number; got 'high'"),
        ("at_least", {"output": "x", "threshold": math.nan}, "check.threshold", "must be a finite number; got nan"),
        ("at_least", {"output": "x", "threshold": True}, "check.threshold", "must be a finite number; got True"),
        ("at_least", {"output": "x", "threshold": 1, "statistic": "mode"}, "check.statistic", "must be one of auto, mean, median"),
        ("equivalent", {"output": "a", "reference": "b", "margin": 0}, "check.margin", "must be positive"),
        ("equivalent", {"output": "a", "reference": "b", "margin": 1, "paired": "yes"}, "check.paired", "true or false"),
        ("ratio", {"output": "a", "reference": "b", "threshold": 2}, "check.rule", "needs `check.bound`"),
        ("ratio", {"output": "a", "reference": "b", "threshold": -1, "bound": "at_least"}, "check.threshold",
         "must be positive"),
        ("monotone", {"output": "a", "over": "n", "direction": "up"}, "check.direction", "increasing, decreasing"),
        ("rate_at_most", {"output": "e", "threshold": 1.5}, "check.threshold", r"must lie in (0, 1)"),
        ("zero_rate", {"output": "e", "threshold": 0}, "check.threshold", r"must lie in (0, 1)"),
        ("exact", {"output": "v", "expected": 1, "tolerance": -1}, "check.tolerance", "must be non-negative"),
        ("ordering", {"outputs": ["a"]}, "check.outputs", "at least 2 outputs"),
        ("ordering", {"output": "a"}, "check.outputs", "either `check.outputs`"),
    ],
)
def test_every_problem_names_its_field(rule: str, check: dict[str, object], field: str, message: str) -> None:
    problems = rules.get(rule).problems({"rule": rule, **check})
    assert any(p.field == field and message in p.message for p in problems), problems


def test_all_problems_of_a_check_are_reported_not_just_the_first() -> None:
    problems = rules.get("ratio").problems({"rule": "ratio", "output": "a", "threshold": -1, "bound": "up", "margin": 1})
    assert {p.field for p in problems} == {"check.rule", "check.threshold", "check.bound", "check.margin"}


def test_defaults_are_the_rule_objects() -> None:
    check = rules.make_check("equivalent", {"margin": 1})
    assert dict(check.params) == {"margin": 1.0, "scale": "difference", "paired": False, "statistic": "auto"}


def test_unknown_rule_has_a_did_you_mean() -> None:
    with pytest.raises(ValueError, match="did you mean `at_least`"):
        rules.get("atleast")
    with pytest.raises(ValueError, match=r"`alpha` must lie in \(0, 0.5\); got 0.7"):
        rules.decide("at_least", GROUP, alpha=0.7, threshold=1)


def test_group_count_and_shape_errors() -> None:
    with pytest.raises(ValueError, match="rule `equivalent` needs 2 sample groups; got 1"):
        rules.decide("equivalent", GROUP, margin=1)
    with pytest.raises(ValueError, match=r"`groups` must be a sequence of \(label, samples\) pairs"):
        rules.decide("at_least", [1.0, 2.0], threshold=1)
    with pytest.raises(ValueError, match="group 'x': samples must be numbers"):
        rules.decide("at_least", [("x", ["a", "b"])], threshold=1)
    with pytest.raises(ValueError, match="samples must be finite"):
        rules.decide("at_least", [("x", [1.0, math.inf])], threshold=1)


def exact(rule: str, groups: list[tuple[str, list[float]]], **fields: object) -> Verdict:
    check = Check.from_record({"rule": rule, **fields})
    check = Check(rule=check.rule, output=check.output, reference=check.reference, outputs=check.outputs,
                  over=check.over, params=rules.get(rule).values(check.params))
    return rules.decide_check(check, groups, 0.05, deterministic=True).verdict


@pytest.mark.parametrize(
    ("rule", "groups", "fields", "verdict"),
    [
        ("ratio", [("a", [500.0]), ("b", [100.0])], {"output": "a", "reference": "b", "bound": "at_least",
                                                     "threshold": 2}, Verdict.HOLDS),
        ("ratio", [("a", [500.0]), ("b", [100.0])], {"output": "a", "reference": "b", "bound": "at_most",
                                                     "threshold": 2}, Verdict.REFUTED),
        ("monotone", [("n=1", [1.0]), ("n=2", [2.0]), ("n=3", [3.0])], {"output": "y", "over": "n"}, Verdict.HOLDS),
        ("monotone", [("n=1", [1.0]), ("n=2", [3.0]), ("n=3", [2.0])], {"output": "y", "over": "n"}, Verdict.REFUTED),
        ("monotone", [("n=1", [3.0]), ("n=2", [2.0]), ("n=3", [1.0])], {"output": "y", "over": "n",
                                                                          "direction": "decreasing"}, Verdict.HOLDS),
        ("ordering", [("a", [500.0]), ("b", [100.0])], {"outputs": ["a", "b"]}, Verdict.HOLDS),
        ("ordering", [("a", [100.0]), ("b", [500.0])], {"outputs": ["a", "b"]}, Verdict.REFUTED),
        ("equivalent", [("a", [100.0]), ("b", [100.0])], {"output": "a", "reference": "b", "margin": 0.1,
                                                          "scale": "log-ratio"}, Verdict.HOLDS),
        ("equivalent", [("a", [120.0]), ("b", [100.0])], {"output": "a", "reference": "b", "margin": 0.1,
                                                          "scale": "log-ratio"}, Verdict.REFUTED),
        ("equivalent", [("a", [3.0, 4.0]), ("b", [3.0, 3.0])], {"output": "a", "reference": "b", "margin": 0.5},
         Verdict.REFUTED),
        ("exact", [("v", [5.0, 0.0])], {"output": "v", "expected": 0, "tolerance": 0}, Verdict.REFUTED),
        ("exact", [("v", [0.0, 0.0])], {"output": "v", "expected": 0, "tolerance": 0}, Verdict.HOLDS),
        ("at_least", [("v", [5.0, 0.0])], {"output": "v", "threshold": 1}, Verdict.REFUTED),
        ("at_most", [("v", [5.0, 0.0])], {"output": "v", "threshold": 6}, Verdict.HOLDS),
        ("zero_rate", [("e", [0.0, 0.0, 1.0])], {"output": "e", "threshold": 0.1}, Verdict.REFUTED),
        ("rate_at_most", [("e", [0.0, 0.0, 1.0])], {"output": "e", "threshold": 0.5}, Verdict.HOLDS),
    ],
)
def test_exact_decisions_read_every_value(rule: str, groups: list[tuple[str, list[float]]],
                                          fields: dict[str, object], verdict: Verdict) -> None:
    assert exact(rule, groups, **fields) is verdict


def test_exact_ratio_with_a_zero_denominator_is_an_error_not_a_verdict() -> None:
    with pytest.raises(ValueError, match="the ratio is undefined"):
        exact("ratio", [("a", [1.0]), ("b", [0.0])], output="a", reference="b", bound="at_least", threshold=1)


def test_paired_checks_need_repeated_samples() -> None:
    check = rules.make_check("equivalent", {"margin": 1, "paired": True})
    assert "deterministic probe" in (rules.get("equivalent").needs_repeats(check) or "")
    assert rules.get("at_least").needs_repeats(rules.make_check("at_least", {"threshold": 1})) is None


def test_words_and_bands_come_from_the_rule() -> None:
    log_ratio = rules.make_check("equivalent", {"margin": 0.05, "scale": "log-ratio"}, labels=("a", "b"))
    claimed = rules.get("equivalent").claimed(log_ratio)
    assert claimed.kind == "band" and claimed.low == pytest.approx(1 / 1.05) and claimed.high == pytest.approx(1.05)
    ratio = rules.make_check("ratio", {"threshold": 0.74, "bound": "at_least"}, labels=("gbps", "raw"))
    assert rules.get("ratio").expectation(ratio) == "gbps / raw >= 0.74"  # auto: median if timing, else mean
    named = rules.make_check("ratio", {"threshold": 0.74, "bound": "at_least", "statistic": "mean"}, labels=("gbps", "raw"))
    assert rules.get("ratio").expectation(named) == "mean gbps / mean raw >= 0.74"
    rate = rules.make_check("zero_rate", {"threshold": 0.02}, labels=("match",))
    assert rules.get("zero_rate").stated_band(rate) == (0.0, 0.02)
    exact_check = rules.make_check("exact", {"expected": 2.57, "tolerance": 0.005}, labels=("ms",))
    assert rules.get("exact").stated_band(exact_check) == pytest.approx((2.565, 2.575))


def test_sampled_and_exact_paths_agree_on_clear_cases() -> None:
    rng = np.random.default_rng(3)
    samples = list(rng.normal(10, 0.1, 30))
    assert rules.decide("at_least", [("x", samples)], threshold=5).verdict is Verdict.HOLDS
    assert exact("at_least", [("x", samples)], output="x", threshold=5) is Verdict.HOLDS
