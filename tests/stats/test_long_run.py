"""The effect-size interval under dependence: it holds the median, at its level, on dependent and skewed noise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from claimcheck.stats import sign_test_n
from claimcheck.stats._long_run import LongRunEstimate, cosine_terms


def _ar1(rng: np.random.Generator, reps: int, n: int, rho: float) -> np.ndarray:
    z = rng.standard_normal((reps, n))
    e = np.empty_like(z)
    e[:, 0] = z[:, 0]
    for t in range(1, n):
        e[:, t] = rho * e[:, t - 1] + math.sqrt(1 - rho**2) * z[:, t]
    return e


def test_the_interval_always_holds_the_sample_median() -> None:
    """``|mean - median| <= SD`` on the sample itself: the interval never excludes what the sign test estimates."""
    rng = np.random.default_rng(3)
    for k in range(300):
        n = int(rng.integers(6, 40))
        x = np.exp(2 * rng.standard_normal(n)) + np.where(rng.random(n) < 0.1, 50.0, 0.0)  # skewed, spiky
        if k % 3 == 0:
            x = np.round(x)  # ties
        low, high = LongRunEstimate(x).bounds(0.4)
        assert low <= float(np.median(x)) <= high


def test_cosine_terms_follow_the_published_rule_with_a_floor_of_two() -> None:
    assert [cosine_terms(n) for n in (6, 8, 12, 30, 125)] == [2, 2, 2, 3, 10]


R = 1500
LEVEL = 0.01
NOISES = {  # (draw(rng, reps, n), the population median)
    "two-point p = 0.49": (lambda rng, r, n: (rng.random((r, n)) < 0.49).astype(float), 0.0),
    "AR(1) 0.8": (lambda rng, r, n: _ar1(rng, r, n, 0.8), 0.0),
    "AR(1) 0.5, 5% spikes x10 SD": (lambda rng, r, n: _ar1(rng, r, n, 0.5) + 10 * (rng.random((r, n)) < 0.05),
                                    None),
}


def _misses(x: np.ndarray, median: float, *, floor: bool = True) -> float:
    """The larger one-sided rate at which the interval at LEVEL misses ``median``."""
    low, high = [], []
    for row in x:
        estimate = LongRunEstimate(row)
        if not floor:  # the EWC standard error alone, without the AR(1) reading
            object.__setattr__(estimate, "factor", estimate.long_run_variance / estimate.gap**2)
        lo, hi = estimate.bounds(LEVEL)
        low.append(lo)
        high.append(hi)
    return max(float(np.mean(np.array(low) > median)), float(np.mean(np.array(high) < median)))


@pytest.mark.parametrize("n", [8, 12, 30])
@pytest.mark.parametrize("noise", list(NOISES))
def test_its_one_sided_error_stays_at_its_level_on_dependent_and_skewed_noise(noise: str, n: int) -> None:
    """The worst cases for each step: the mean-median gap at its bound, strong dependence at n = 8, spikes."""
    draw, median = NOISES[noise]
    rng = np.random.default_rng(11 + n)
    if median is None:  # the spiky model's median, from a large sample
        median = float(np.median(draw(np.random.default_rng(0), 4000, 30)))
    miss = _misses(draw(rng, R, n), median)
    assert miss <= LEVEL + 3 * math.sqrt(LEVEL * (1 - LEVEL) / R), (noise, n, miss)  # measured at most 0.010


def test_two_cosine_terms_alone_understate_strong_dependence_at_n_8() -> None:
    """Why the SE takes the larger of the EWC and the AR(1) reading: without it the bound misses twice as often."""
    x = _ar1(np.random.default_rng(19), 2 * R, 8, 0.8)
    without, with_floor = _misses(x, 0.0, floor=False), _misses(x, 0.0)
    assert without > 1.5 * LEVEL > with_floor, (without, with_floor)


def test_sign_test_n_is_the_smallest_n_whose_all_one_side_outcome_reaches_the_level() -> None:
    assert [sign_test_n(a) for a in (0.05, 0.0625, 0.03125, 0.0193, 0.01)] == [5, 4, 5, 6, 7]
    with pytest.raises(ValueError):
        sign_test_n(0.0)
