"""The dependence path's sign test and the interval it reports say the same thing.

A median decision under dependence reports order-statistic bounds beside the sign test's
p-values. If the bounds are wider than the test, a refutation is published with an interval
that still holds the threshold, and the between-run step, which reads the SE off that interval,
undoes a decision the run made (a paired item refuted by its signs, adjudicated inconclusive
with a between-run spread of 0.006 against an SE of 0.2). So the bounds must be the test
inverted: a value lies outside the one-sided ``1 - alpha`` bound exactly when the test at
``alpha`` rejects it.
"""

from __future__ import annotations

import numpy as np
import pytest

from claimcheck.stats._dependent import _InflatedSign
from claimcheck.stats import Decision
from claimcheck.verdict import Verdict
from claimcheck.stats._between_run import widen_between_runs
from claimcheck.stats._hypothesis import Hypothesis


def _probes(x: np.ndarray) -> np.ndarray:
    """Values between and beyond the sorted samples, where the test's count changes."""
    s = np.sort(x)
    return np.concatenate([s[:1] - 1.0, (s[1:] + s[:-1]) / 2, s[-1:] + 1.0])


@pytest.mark.parametrize("n", [6, 7, 12, 13, 24, 30, 40])
@pytest.mark.parametrize("f", [1.0, 1.41, 2.3, 5.0])
@pytest.mark.parametrize("alpha", [0.0154, 0.02, 0.04, 0.05])
def test_bounds_are_the_inverted_sign_test(n: int, f: float, alpha: float) -> None:
    rng = np.random.default_rng(n * 1000 + int(f * 100) + int(alpha * 1e4))
    x = rng.standard_normal(n)
    sign = _InflatedSign(x, f)
    low, high = sign.bounds(alpha)
    for value in _probes(x):
        assert (sign.p_greater(value) <= alpha) == (value < low), (value, low, sign.p_greater(value))
        assert (sign.p_less(value) <= alpha) == (value > high), (value, high, sign.p_less(value))


def test_a_refutation_by_signs_survives_a_negligible_between_run_spread() -> None:
    """The item of the H100 run: 11 of 12 per-round ratios above 1, the signs decide; tau 0.006 must not undo it."""
    from claimcheck.stats._dependent import decide_dependent

    ratios = np.array([0.787, 1.08, 1.12, 1.19, 1.24, 1.28, 1.31, 1.36, 1.45, 1.52, 1.63, 1.812])
    order = np.random.default_rng(3).permutation(len(ratios))
    groups = [("spin", ratios[order]), ("baseline", np.ones(12))]  # the per-round ratio is the first arm over the second
    hypothesis = Hypothesis(statistic="median", bound="at_most", threshold=1.0, paired=True, scale="log", assumed_spread=1.0)
    start = Decision(rule="ratio", statistic=float(np.median(ratios)), low=0.0, high=np.inf, confidence_level=0.9, n=12,
                     verdict=Verdict.INCONCLUSIVE, reason="", pvalue=1.0, hold_pvalue=1.0, alpha=0.0193, mde=None,
                     hypothesis=hypothesis)
    decided = decide_dependent(start, groups, 0.0193, "per-round contrast", lags=3)
    assert decided is not None and decided.verdict is Verdict.REFUTED
    assert decided.low > 1.0, "a refutation of 'at most 1' whose interval still holds 1"
    history = [float(np.exp(v)) for v in (0.261, 0.255, 0.267, 0.262)]  # earlier runs agree: tau about 0.005
    assert widen_between_runs(decided, history).verdict is Verdict.REFUTED
