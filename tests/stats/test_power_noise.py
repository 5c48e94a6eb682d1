"""Minimum detectable effect, required n, the resolution note of equivalence, and the noise gate."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats

from claimcheck.rules import decide
from claimcheck.stats import mde, noise_gate, required_n, zero_rate_n
from claimcheck.verdict import Verdict


def exact_sd(n: int, sd: float, mean: float = 0.0) -> np.ndarray:
    """n values with sample mean and SD exactly as given (normal quantiles, standardised)."""
    z = stats.norm.ppf((np.arange(n) + 0.5) / n)
    z = (z - z.mean()) / z.std(ddof=1)
    return mean + sd * z[np.random.default_rng(n).permutation(n)]


def test_required_n_against_the_normal_formula():
    # normal approximation: n = ((z_0.95 + z_0.8) sd / effect)^2 = 24.7 for effect 0.5 sd;
    # the t quantiles make the exact answer a little larger
    n = required_n(0.5, 1.0)
    assert 25 <= n <= 28
    assert mde(1 / math.sqrt(n), n - 1) <= 0.5 < mde(1 / math.sqrt(n - 1), n - 2)
    assert 50 <= required_n(0.5, 1.0, arms=2) <= 52  # normal: 2 x 24.7 per arm, t(~100 df) adds ~1
    assert required_n(0.5, 1.0, test="tost") > n
    assert required_n(1.0, 0.0) == 2
    with pytest.raises(ValueError, match="`effect` must be a positive finite number"):
        required_n(0.0, 1.0)


def test_power_of_the_t_test_at_the_mde_is_80_percent():
    """Noncentral t (scipy) gives the exact power of a one-sided t test at the MDE: ~0.8."""
    n = 30
    delta = mde(1 / math.sqrt(n), n - 1)
    power = stats.nct.sf(stats.t.ppf(0.95, n - 1), n - 1, delta * math.sqrt(n))
    assert power == pytest.approx(0.8, abs=0.01)


def test_zero_rate_n_is_the_rule_of_three():
    assert zero_rate_n(0.01) == 299  # log(0.05) / log(0.99) = 298.07
    assert zero_rate_n(3.24e-3) <= 924


def test_decisions_carry_their_mde():
    x = exact_sd(40, 2.0, 100.0)
    d = decide("at_least", [("x", x)], threshold=90)
    assert d.mde == pytest.approx(mde(2.0 / math.sqrt(40), 39))


def test_tost_hold_stands_at_small_n_and_the_mde_explains_an_inconclusive_verdict():
    """Paired differences with mean 0, SD 1, margin 0.8: TOST holds at n = 10 even though the run
    could not refute a difference of twice the margin with 80% power; TOST bounds both errors."""
    small = decide("equivalent", [("a", exact_sd(10, 1.0)), ("b", np.zeros(10))], margin=0.8, paired=True)
    assert small.verdict is Verdict.HOLDS, small.reason
    assert small.mde > 0.8  # finer than its resolution, and still a valid hold
    tight = decide("equivalent", [("a", exact_sd(10, 1.0)), ("b", np.zeros(10))], margin=0.5, paired=True)
    assert tight.verdict is Verdict.INCONCLUSIVE
    match = re.search(r"about (\d+) pairs would resolve it", tight.reason)
    assert match, tight.reason
    assert int(match.group(1)) == required_n(0.5, 1.0) == tight.details["required_n"]


def test_noisy_timing_sample_is_inconclusive_not_refuted():
    """20% CV: the raw decision refutes "latency <= 9.5 ms", the gate turns it inconclusive."""
    x = exact_sd(200, 2.0, 10.0)  # CV exactly 20%
    raw = decide("at_most", [("ms", x)], threshold=9.5)
    assert raw.verdict is Verdict.REFUTED
    reason = noise_gate(x)
    assert reason == "too noisy: coefficient of variation 20.0% exceeds 10%"
    # the verdict change itself is the adjudication module's: tests/engine/test_adjudicate.py


def test_noise_gate_flags_drift_in_acquisition_order():
    rng = np.random.default_rng(5)
    steady = rng.normal(10.0, 0.2, 60)
    assert noise_gate(steady) is None
    drifting = np.r_[rng.normal(10.0, 0.2, 30), rng.normal(10.6, 0.2, 30)]  # +6% halfway, CV ~3%
    assert noise_gate(drifting, dependence=False).startswith("drifting: second half of the samples is +6")
    assert noise_gate(drifting).startswith("serially dependent: lag-1 autocorrelation")  # a step is dependence
    shuffled = rng.permutation(60)
    assert noise_gate(drifting[shuffled], order=shuffled) is not None  # order restores the drift
    assert noise_gate(np.r_[steady[:30], steady[30:] * 1.005]) is None  # significant maybe, but tiny
    assert noise_gate([5.0]) is None
    with pytest.raises(ValueError, match="`order` must have one entry per sample"):
        noise_gate(steady, order=[1, 2])
