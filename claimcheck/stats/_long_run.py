"""The size of a serially dependent effect: a median's interval from the mean with a long-run variance.

The sign test under dependence (:mod:`._dependent`) reads only which side of the claimed value
each sample lies on, so twelve per-round ratios of 0.04-0.07 against a threshold of 1 count as
twelve signs, which an effective n of 3.7 cannot decide. Their size can: a mean 3 log units
from the threshold with a spread of 0.2 is decided by any interval whose width follows the spread.

:class:`LongRunEstimate` gives that interval for the *median* (the quantity the timing rules
decide), in two steps, each valid without a noise model:

- the mean ``m`` of the series with a dependence-robust standard error: the equal-weighted cosine
  (EWC) long-run variance, ``omega = (1/q) sum_{j<=q} (sqrt(2/n) sum_t cos(pi j (t - 1/2) / n) x_t)^2``
  (Müller 2007; Lazarus, Lewis, Stock and Watson 2018, "HAR inference: recommendations for
  practice"), whose t statistic ``(m - mu) / sqrt(omega / n)`` is Student's t with ``q`` degrees of
  freedom for independent normal samples and, for fixed ``q``, for any weakly dependent series
  (fixed-b asymptotics), so small n stays calibrated; ``q = max(2, floor(0.4 n^(2/3)))``, the
  cited recommendation with a floor of 2 (``t_1`` has no useful quantiles). At n = 8 and AR(1)
  0.8 two cosine terms understate omega (one-sided error 0.020 at alpha = 0.01), so the SE is the
  larger of it and the AR(1) reading ``s sqrt(f / n)``, ``f = (1 + r1) / (1 - r1)`` with ``r1``
  the lag-1 rank autocorrelation (0.010 there). Kendall's bias correction, which the sign test
  adds, is left out here: at n = 12 it added 0.3 to ``r1`` and put a 10x effect's SE up fourfold;
- the gap between the mean and the median: ``|mu - median| <= sigma`` for every distribution of
  finite variance, read as the sample SD ``s``, so the median lies in ``[m - s - t_q se, m + s + t_q se]``.
  On the sample itself ``|m - median_hat| <= s`` always holds, so the interval always contains the
  sample median. (The mean absolute deviation about the median is the tighter bound in theory,
  but its estimate undercovered a two-point law at p = 0.49 by 3-4x at alpha = 0.01.)

The second step costs ``s`` on each side: the interval decides an effect larger than about one
SD of the series and leaves a smaller one to the sign test, which is why the two are combined
(:mod:`._dependent`), not swapped. Spikes and heavy tails raise ``s`` and ``omega`` together, so
they widen the interval rather than move it past the median. It runs on the scale the hypothesis
declares (a paired ratio's per-round log-ratios, otherwise the samples). Its weak spot is a
spread that moves with the level: on log-normal noise (log SD 1) of AR(1) 0.8 a slow excursion
shrinks the spread, and the interval alone missed the median on one side 0.050 of the time at
n = 8 and 0.022 at n = 12 for alpha = 0.01 (0.004 at n = 30). Through the claim path, where it
runs at a fifth of the level beside the sign test, one-sample windows of that noise kept the
error rates they had before it at n = 8, 12 and 30.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import special

from ._noise import rank_lag1

MIN_DF = 2  # cosine terms at the smallest n: t_1 quantiles at a look's level are in the hundreds
MAX_CORRELATION = 0.95  # the AR(1) reading's cap (a factor of 39)


def cosine_terms(n: int) -> int:
    """Degrees of freedom ``q`` of the EWC long-run variance at ``n`` samples (see the module docstring)."""
    return max(MIN_DF, math.floor(0.4 * n ** (2 / 3)))


@dataclass(frozen=True)
class LongRunEstimate:
    """The median of a dependent series bounded through its mean (EWC standard error) and the mean-median gap."""

    x: np.ndarray = field(repr=False)

    @cached_property
    def q(self) -> int:
        """Cosine terms (the t reference's degrees of freedom)."""
        return cosine_terms(len(self.x))

    @cached_property
    def mean(self) -> float:
        """The series' mean."""
        return float(np.mean(self.x))

    @cached_property
    def long_run_variance(self) -> float:
        """EWC estimate of the long-run variance (``n`` times the variance of the mean)."""
        n = len(self.x)
        t = np.arange(n) + 0.5
        basis = math.sqrt(2 / n) * np.cos(math.pi * np.outer(np.arange(1, self.q + 1), t) / n)
        return float(np.mean((basis @ self.x) ** 2))

    @cached_property
    def gap(self) -> float:
        """The sample SD: bounds how far the mean lies from the median."""
        return float(np.std(self.x, ddof=1))

    @cached_property
    def factor(self) -> float:
        """Dependence factor of the SE: the larger of ``omega / s^2`` and the AR(1) one (1: independent)."""
        var = self.gap**2
        if not var > 0:
            return 1.0
        r1 = min(MAX_CORRELATION, max(0.0, rank_lag1(self.x)))
        return max(self.long_run_variance / var, (1 + r1) / (1 - r1))

    @cached_property
    def se(self) -> float:
        """Standard error of the mean: ``s sqrt(factor / n)``."""
        return self.gap * math.sqrt(self.factor / len(self.x))

    def _t(self, alpha: float) -> float:
        return float(special.stdtrit(self.q, 1 - alpha))

    def bounds(self, alpha: float) -> tuple[float, float]:
        """One-sided ``1 - alpha`` bounds on the median (unbounded for a series with no spread)."""
        if not self.se > 0:
            return -math.inf, math.inf
        half = self.gap + self._t(alpha) * self.se
        return self.mean - half, self.mean + half

    def _p(self, distance: float) -> float:
        """P(t_q >= distance / se): the level at which a bound reaches past the value by ``distance``."""
        if not self.se > 0:
            return 1.0
        return float(special.stdtr(self.q, -distance / self.se))

    def p_greater(self, value: float) -> float:
        """p-value against ``median <= value``."""
        return self._p(self.mean - self.gap - value)

    def p_less(self, value: float) -> float:
        """p-value against ``median >= value``."""
        return self._p(value - self.mean - self.gap)
