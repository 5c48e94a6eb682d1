"""Each rule on hand-made samples: verdicts, agreement with scipy's tests, and edge cases.

Reference values come from scipy.stats (ttest_1samp / ttest_rel / ttest_ind / t.interval /
binomtest), computed independently of claimcheck's own code paths; 1e-9 relative tolerance
covers floating-point differences only.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from claimcheck.rules import decide
from claimcheck.verdict import Verdict

H, R, I = Verdict.HOLDS, Verdict.REFUTED, Verdict.INCONCLUSIVE
rng = np.random.default_rng(7)
X = rng.normal(10.0, 1.0, 30)
Y = rng.normal(9.0, 1.0, 25)


def one(x, label="x"):
    return [(label, x)]


# --- at_least / at_most -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "threshold", "verdict"),
    [("at_least", 9.0, H), ("at_least", 11.0, R), ("at_least", 9.6, I), ("at_most", 11.0, H), ("at_most", 9.0, R)],
)
def test_bound_mean_verdicts(rule, threshold, verdict):
    assert decide(rule, one(X), threshold=threshold).verdict is verdict


def test_bound_mean_matches_scipy():
    d = decide("at_least", one(X), threshold=10.2, alpha=0.05)
    assert d.pvalue == pytest.approx(stats.ttest_1samp(X, 10.2, alternative="less").pvalue, rel=1e-9)
    assert d.details["p_holds"] == pytest.approx(stats.ttest_1samp(X, 10.2, alternative="greater").pvalue, rel=1e-9)
    ref = stats.t.interval(0.9, len(X) - 1, loc=X.mean(), scale=stats.sem(X))
    assert (d.low, d.high) == pytest.approx(ref, rel=1e-9)
    assert d.confidence_level == pytest.approx(0.9)
    wide = stats.t.interval(0.99, len(X) - 1, loc=X.mean(), scale=stats.sem(X))
    assert d.confidence_interval(0.99) == pytest.approx(wide, rel=1e-9)


def test_bound_reason_reads_as_one_line():
    d = decide("at_least", one(X), threshold=9.0, unit="GB/s")
    assert d.reason.startswith("mean ") and "GB/s" in d.reason and "lies above the threshold 9" in d.reason
    assert "\n" not in d.reason


def test_bound_median_matches_sign_test():
    d = decide("at_most", one(X), threshold=10.5, statistic="median")
    below = int(np.sum(X <= 10.5))
    assert d.pvalue == pytest.approx(stats.binomtest(below, len(X), 0.5, alternative="less").pvalue, rel=1e-9)
    assert d.statistic == np.median(X)
    assert d.low < d.statistic < d.high


def test_median_bounds_cover_at_the_stated_level():
    """Order-statistic bounds are exact: coverage of the true median >= 1 - alpha per side."""
    samples = np.random.default_rng(3).standard_exponential((2000, 15))  # median log 2, skewed
    covered = [decide("at_least", one(s), threshold=0.1, statistic="median").low <= math.log(2) for s in samples]
    assert np.mean(covered) >= 0.95 - 2 * math.sqrt(0.95 * 0.05 / 2000)


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_bound_single_sample_is_inconclusive(statistic):
    d = decide("at_least", one([5.0]), threshold=1.0, statistic=statistic)
    assert d.verdict is I and d.n == 1


@pytest.mark.parametrize("value", [5.0, 0.5, 1.0])
def test_identical_samples_leave_a_mean_undecided_never_p_zero(value):
    """An output that is 9 two times in three repeats itself 6 times with probability 0.09: no evidence
    about its mean. Read as a constant it needs 59 samples (departures rarer than 1 in 20), never p = 0."""
    d = decide("at_least", one([value] * 6), threshold=1.0)
    assert d.verdict is I and d.pvalue > 0.05 and d.hold_pvalue > 0.05
    assert "all 6 samples equal within rounding, read as a constant" in d.reason and "59 would" in d.reason
    for rule, groups, params in [
        ("ratio", [("a", [2.0] * 4), ("b", [1.0] * 4)], {"threshold": 1.5, "bound": "at_least", "paired": True}),
        ("equivalent", [("a", [2.0] * 4), ("b", [1.0] * 4)], {"margin": 0.5}),
    ]:
        other = decide(rule, groups, **params)
        assert other.verdict is I and other.pvalue > 0.05 and "read as a constant" in other.reason, rule
    ordering = decide("ordering", [("a", [2.0] * 4), ("b", [1.0] * 4)])
    assert ordering.verdict is I and ordering.pvalue == 1.0 and "estimate no noise" in ordering.reason


def test_bound_all_equal_median_needs_enough_samples():
    assert decide("at_least", one([5.0] * 4), threshold=1.0, statistic="median").verdict is I  # 0.5**4 > 0.05
    assert decide("at_least", one([5.0] * 5), threshold=1.0, statistic="median").verdict is H


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_sample_is_a_clear_error(bad):
    with pytest.raises(ValueError, match=r"group 'x': sample 2 is .* must be finite"):
        decide("at_least", one([1.0, 2.0, bad]), threshold=1.0)


def test_empty_group_is_an_error():
    with pytest.raises(ValueError, match="non-empty"):
        decide("at_least", one([]), threshold=1.0)


# --- equivalent ---------------------------------------------------------------------------


def test_equivalent_paired_is_tost_on_differences():
    a = X[:25]
    b = a + rng.normal(0.0, 0.2, 25)
    d = decide("equivalent", [("a", a), ("b", b)], margin=0.3, paired=True)
    diff = a - b
    tost = max(
        stats.ttest_1samp(diff, -0.3, alternative="greater").pvalue,
        stats.ttest_1samp(diff, 0.3, alternative="less").pvalue,
    )
    assert d.details["p_holds"] == pytest.approx(tost, rel=1e-9)
    se = (d.high - d.statistic) / stats.t.ppf(0.95, 24)
    assert stats.ttest_rel(a, b).statistic == pytest.approx(d.statistic / se)
    assert d.verdict is H


def test_equivalent_welch_refutes_a_clear_difference():
    d = decide("equivalent", [("a", X), ("b", Y)], margin=0.2)
    assert d.verdict is R and "lies outside +-0.2" in d.reason
    # size at the band edge counts both tails of |difference|: beyond +0.2 and below -0.2
    far = stats.ttest_ind(X - 0.2, Y, equal_var=False, alternative="greater").pvalue
    near = stats.ttest_ind(X + 0.2, Y, equal_var=False, alternative="greater").pvalue
    assert d.pvalue == pytest.approx(far + near, rel=1e-9)
    assert near < far / 10


def test_equivalent_log_ratio_reports_a_ratio():
    a, b = np.exp(rng.normal(np.log(100), 0.02, 40)), np.exp(rng.normal(np.log(100), 0.02, 40))
    d = decide("equivalent", [("a", a), ("b", b)], margin=0.05, scale="log-ratio")
    assert d.verdict is H and "ratio of geometric means" in d.reason and "[0.9524, 1.05]" in d.reason
    assert 1 / 1.05 < d.low < d.statistic < d.high < 1.05


def test_equivalent_log_ratio_rejects_non_positive_samples():
    with pytest.raises(ValueError, match=r"`scale: log-ratio` needs positive samples; group 'b'"):
        decide("equivalent", [("a", [1.0, 2.0]), ("b", [0.0, 1.0])], margin=0.1, scale="log-ratio")


def test_equivalent_zero_variance_and_small_n():
    same = [("a", [3.0] * 5), ("b", [3.0] * 5)]
    assert decide("equivalent", same, margin=0.1).verdict is I  # constant arms do not bound a mean at n = 5
    apart = [("a", [3.5] * 6), ("b", [3.0] * 6)]
    assert decide("equivalent", apart, margin=0.1, paired=True).verdict is I
    # the median of per-round differences decides by the sign test, ties counting against the claim
    assert decide("equivalent", apart, margin=0.1, paired=True, statistic="median").verdict is R
    assert decide("equivalent", same, margin=0.1, paired=True, statistic="median").verdict is H
    assert decide("equivalent", [("a", [1.0]), ("b", [1.0])], margin=0.1, paired=True).verdict is I


def test_equivalent_paired_needs_equal_lengths():
    with pytest.raises(ValueError, match="`paired: true` needs groups of equal length; got 3, 2"):
        decide("equivalent", [("a", [1.0, 2.0, 3.0]), ("b", [1.0, 2.0])], margin=0.1, paired=True)


# --- ratio --------------------------------------------------------------------------------

A = rng.normal(30.0, 1.5, 40)
B = rng.normal(20.0, 1.0, 40)


def test_ratio_decision_is_welch_on_the_contrast():
    d = decide("ratio", [("a", A), ("b", B)], threshold=1.45, bound="at_least")
    ref = stats.ttest_ind(A, 1.45 * B, equal_var=False, alternative="less").pvalue
    assert d.pvalue == pytest.approx(ref, rel=1e-9)
    assert d.statistic == pytest.approx(A.mean() / B.mean())


@pytest.mark.parametrize("threshold", [1.40, 1.46, 1.5, 1.54, 1.6])
def test_ratio_fieller_interval_agrees_with_the_verdict(threshold):
    d = decide("ratio", [("a", A), ("b", B)], threshold=threshold, bound="at_least")
    assert d.low <= d.statistic <= d.high
    expected = H if threshold < d.low else R if threshold > d.high else I
    assert d.verdict is expected


def test_ratio_paired_and_at_most():
    noise = rng.normal(0.0, 1.0, 30)
    a, b = 40.0 + noise + rng.normal(0, 0.1, 30), 20.0 + noise + rng.normal(0, 0.1, 30)
    d = decide("ratio", [("a", a), ("b", b)], threshold=2.1, bound="at_most", paired=True)
    assert d.verdict is H
    ref = stats.ttest_1samp(a - 2.1 * b, 0.0, alternative="greater").pvalue
    assert d.pvalue == pytest.approx(ref, rel=1e-9)


def test_ratio_median_bootstrap_decides_a_clear_case():
    d = decide("ratio", [("a", A), ("b", B)], threshold=1.2, bound="at_least", statistic="median")
    assert d.verdict is H and d.low > 1.2 and d.estimate_label == "ratio of medians"
    assert decide("ratio", [("a", A), ("b", B)], threshold=1.2, bound="at_least", statistic="median") == d


def test_ratio_edge_cases():
    assert decide("ratio", [("a", [3.0] * 4), ("b", [2.0] * 4)], threshold=1.4, bound="at_least").verdict is I
    assert decide("ratio", [("a", [1.0]), ("b", [1.0])], threshold=1.0, bound="at_least").verdict is I
    negative = decide("ratio", [("a", [1.0, 2.0]), ("b", [-1.0, -2.0])], threshold=1.0, bound="at_least")
    assert negative.verdict is I and "not positive" in negative.reason
    noisy = decide("ratio", [("a", [1.0, 2.0, 3.0]), ("b", [-5.0, 1.0, 6.0])], threshold=1.0, bound="at_least")
    assert noisy.verdict is I and math.isinf(noisy.high)


# --- ordering / monotone ------------------------------------------------------------------

G = [("fast", rng.normal(30, 1, 20)), ("mid", rng.normal(20, 1, 20)), ("slow", rng.normal(10, 1, 20))]


def test_ordering_holds_refutes_and_reports_steps():
    d = decide("ordering", G)
    assert d.verdict is H and [s["step"] for s in d.details["steps"]] == ["fast > mid", "mid > slow"]
    p = stats.ttest_ind(G[0][1], G[1][1], equal_var=False, alternative="greater").pvalue
    assert d.details["steps"][0]["p_holds"] == pytest.approx(p, rel=1e-9)
    r = decide("ordering", [G[0], G[2], G[1]])
    assert r.verdict is R and "pair slow > mid is reversed" in r.reason
    assert r.pvalue == pytest.approx(
        min(1, 2 * stats.ttest_ind(G[2][1], G[1][1], equal_var=False, alternative="less").pvalue), rel=1e-9
    )


def test_ordering_edge_cases():
    for values in ([3.0, 2.0], [2.0, 2.0], [2.0, 3.0]):  # identical samples: no noise estimate
        assert decide("ordering", [("a", [values[0]] * 4), ("b", [values[1]] * 4)]).verdict is I
    assert decide("ordering", [("a", [3.0] * 5), ("b", [2.0] * 5)], paired=True, statistic="median").verdict is H
    assert decide("ordering", [("a", [2.0] * 5), ("b", [3.0] * 5)], paired=True, statistic="median").verdict is R
    assert decide("ordering", [("a", [2.0]), ("b", [3.0])]).verdict is I
    with pytest.raises(ValueError, match="rule `ordering` needs at least 2 sample groups; got 1"):
        decide("ordering", [("a", [1.0, 2.0])])


def test_monotone_increasing_reports_steps_in_level_order():
    up = [(f"bs={b}", rng.normal(m, 1, 20)) for b, m in [(1, 10), (2, 20), (4, 30)]]
    d = decide("monotone", up, direction="increasing")
    assert d.verdict is H
    assert [s["step"] for s in d.details["steps"]] == ["bs=2 > bs=1", "bs=4 > bs=2"]
    assert decide("monotone", up, direction="decreasing").verdict is R


# --- rates --------------------------------------------------------------------------------


def test_rate_at_most_matches_binomtest():
    x = np.r_[np.ones(3), np.zeros(97)]
    d = decide("rate_at_most", one(x), threshold=0.1)
    ref = stats.binomtest(3, 100, 0.1, alternative="greater").pvalue
    assert d.pvalue == pytest.approx(ref, rel=1e-9) and d.verdict is H
    assert (d.low, d.high) == pytest.approx(tuple(stats.binomtest(3, 100).proportion_ci(0.9, "exact")), rel=1e-9)
    assert d.confidence_interval(0.99) == pytest.approx(
        tuple(stats.binomtest(3, 100).proportion_ci(0.99, "exact")), rel=1e-9
    )
    assert decide("rate_at_most", one(np.ones(20)), threshold=0.1).verdict is R
    assert decide("rate_at_most", one([0.0]), threshold=0.1).verdict is I


def test_zero_rate_bound_and_refutation():
    d = decide("zero_rate", one(np.zeros(924)), threshold=0.005)
    # rule of three: the exact upper 95% bound for 0 of n is 1 - 0.05**(1/n)
    assert d.high == pytest.approx(1 - 0.05 ** (1 / 924), rel=1e-9) and d.high == pytest.approx(3.24e-3, abs=1e-5)
    assert d.verdict is H and d.confidence_level == 0.95
    small = decide("zero_rate", one(np.zeros(100)), threshold=0.005)
    assert small.verdict is I and "needs n >= 598" in small.reason  # log(0.05) / log(0.995) = 597.6
    hit = decide("zero_rate", one(np.r_[np.zeros(5000), 1.0]), threshold=0.005)
    assert hit.verdict is R and hit.pvalue == 0.0


def test_rates_reject_non_binary_samples():
    with pytest.raises(ValueError, match="rule `zero_rate` needs 0/1 samples or non-negative counts; group 'x' has 0.5"):
        decide("zero_rate", one([0.0, 0.5]), threshold=0.01)


# --- exact --------------------------------------------------------------------------------


def test_exact():
    assert decide("exact", one([42.0]), expected=42).verdict is H
    d = decide("exact", one([42.0, 42.3]), expected=42, tolerance=0.1)
    assert d.verdict is R and d.statistic == 42.3 and d.pvalue == 0.0 and d.mde is None
    assert decide("exact", one([0.1 + 0.2]), expected=0.3, tolerance=1e-12).verdict is H


# --- result object ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "groups", "params"),
    [
        ("at_least", one([1.0]), {"threshold": 0.0}),
        ("ratio", [("a", [1.0, 2.0, 3.0]), ("b", [-5.0, 1.0, 6.0])], {"threshold": 1.0, "bound": "at_least"}),
        ("ordering", G, {}),
        ("zero_rate", one(np.zeros(10)), {"threshold": 0.01}),
    ],
)
def test_to_dict_is_strict_json(rule, groups, params):
    out = decide(rule, groups, **params).to_dict()
    text = json.dumps(out, allow_nan=False)
    assert json.loads(text)["verdict"] in ("holds", "refuted", "inconclusive")
    assert "_interval_at" not in out
