"""Parameter validation: every rule's parameters are checked up front, errors name the parameter."""

from __future__ import annotations

import pytest

from claimcheck import claim
from claimcheck.stats import RULES, decide, rule_info

GROUP = [("x", [1.0, 2.0, 3.0])]


def test_registry_covers_the_claim_schema_rules():
    assert set(RULES) == set(claim.RULES)
    for info in RULES.values():
        assert info.description and info.accepts <= {f for f in claim.Check.__dataclass_fields__}


@pytest.mark.parametrize(
    ("rule", "params", "message"),
    [
        ("at_least", {}, "rule `at_least` requires `threshold`"),
        ("at_least", {"threshold": 1, "margin": 2}, "`margin` is not a parameter of rule `at_least`"),
        ("at_least", {"threshold": "high"}, "`threshold` must be a finite number; got 'high'"),
        ("at_least", {"threshold": float("nan")}, "`threshold` must be a finite number; got nan"),
        ("at_least", {"threshold": True}, "`threshold` must be a finite number; got True"),
        ("at_least", {"threshold": 1, "statistic": "mode"}, "`statistic` must be one of 'mean', 'median'; got 'mode'"),
        ("equivalent", {"margin": 0}, "`margin` must be positive; got 0.0"),
        ("equivalent", {"margin": 1, "paired": "yes"}, "`paired` must be true or false; got 'yes'"),
        ("equivalent", {"margin": 1, "scale": "log"}, "`scale` must be one of 'difference', 'log-ratio'; got 'log'"),
        ("ratio", {"threshold": 2}, "rule `ratio` requires `bound`"),
        ("ratio", {"threshold": -1, "bound": "at_least"}, "`threshold` must be positive for rule `ratio`"),
        ("ratio", {"threshold": 1, "bound": "above"}, "`bound` must be one of 'at_least', 'at_most'; got 'above'"),
        ("monotone", {"direction": "up"}, "`direction` must be one of 'increasing', 'decreasing'; got 'up'"),
        ("rate_at_most", {"threshold": 1.5}, r"`threshold` must lie in \(0, 1\) for rule `rate_at_most`; got 1.5"),
        ("zero_rate", {"threshold": 0}, r"`threshold` must lie in \(0, 1\) for rule `zero_rate`"),
        ("exact", {"expected": 1, "tolerance": -1}, "`tolerance` must be non-negative; got -1.0"),
        ("exact", {"expected": 1, "unit": 3}, "`unit` must be a string; got 3"),
    ],
)
def test_bad_params_name_the_param(rule, params, message):
    with pytest.raises(ValueError, match=message):
        RULES[rule].validate(params)


def test_validate_fills_defaults_and_normalises():
    assert RULES["equivalent"].validate({"margin": 1}) == {
        "margin": 1.0, "scale": "difference", "paired": False, "unit": None,
    }
    assert RULES["at_least"].validate({"threshold": 3, "statistic": None}) == {
        "threshold": 3.0, "statistic": "mean", "unit": None,
    }


def test_select_reads_a_check_and_skips_unset_fields():
    check = claim.Check(rule="ratio", output="tps", reference="base", threshold=1.5, bound="at_least")
    assert RULES["ratio"].select(check) == {
        "bound": "at_least", "paired": False, "statistic": "mean", "threshold": 1.5,
    }
    assert RULES["exact"].select({"expected": 4, "margin": 1}) == {"expected": 4}


def test_unknown_rule_and_bad_alpha():
    with pytest.raises(ValueError, match="`rule` must be one of 'at_least', .*; got 'atleast'"):
        rule_info("atleast")
    with pytest.raises(ValueError, match=r"`alpha` must lie in \(0, 0.5\); got 0.7"):
        decide("at_least", GROUP, alpha=0.7, threshold=1)


def test_group_count_and_shape_errors():
    with pytest.raises(ValueError, match="rule `equivalent` needs 2 sample groups; got 1"):
        decide("equivalent", GROUP, margin=1)
    with pytest.raises(ValueError, match=r"`groups` must be a sequence of \(label, samples\) pairs"):
        decide("at_least", [1.0, 2.0], threshold=1)
    with pytest.raises(ValueError, match="group 'x': samples must be numbers"):
        decide("at_least", [("x", ["a", "b"])], threshold=1)
