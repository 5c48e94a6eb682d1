"""Location estimates with a Student-t reference: one sample, paired differences, Welch.

Every mean-based rule reduces to "an estimate, its standard error and degrees of freedom",
so the one-sided bounds and p-values live here once. ``scipy.special.stdtr``/``stdtrit`` (t)
and ``bdtr`` (binomial) are the functions behind ``scipy.stats.t``/``binomtest``; they are
called directly because sequential simulations run them hundreds of thousands of times and
the ``scipy.stats`` wrappers add 0.1-10 ms of dispatch per call. The tests check equality with
``stats.ttest_1samp``/``ttest_rel``/``ttest_ind``/``binomtest``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy import special


def t_quantile(p: float, df: float) -> float:
    """Quantile of Student's t (``stats.t.ppf``)."""
    return float(special.stdtrit(df, p))


class Location(Protocol):
    """What a rule reads from an estimate: bounds and one-sided p-values (t, sign or rank based)."""

    @property
    def estimate(self) -> float: ...  # noqa: D102
    @property
    def se(self) -> float: ...  # noqa: D102
    @property
    def df(self) -> float: ...  # noqa: D102
    def lower(self, alpha: float) -> float: ...  # noqa: D102
    def upper(self, alpha: float) -> float: ...  # noqa: D102
    def bounds(self, alpha: float) -> tuple[float, float]: ...  # noqa: D102
    def interval(self, confidence_level: float) -> tuple[float, float]: ...  # noqa: D102
    def p_greater(self, value: float) -> float: ...  # noqa: D102
    def p_less(self, value: float) -> float: ...  # noqa: D102
    def p_inside(self, margin: float) -> float: ...  # noqa: D102
    def p_outside(self, margin: float) -> float: ...  # noqa: D102


@dataclass(frozen=True)
class TEstimate:
    """An estimate ``theta_hat`` with ``(theta_hat - theta) / se ~ t(df)``.

    A zero standard error (all samples equal) makes the estimate exact: bounds collapse onto it
    and p-values are 0 or 1; a tie with the hypothesised value proves nothing either way.
    """

    estimate: float
    se: float
    df: float

    def lower(self, alpha: float) -> float:
        """One-sided ``1 - alpha`` lower confidence bound."""
        return self.estimate if self.se == 0 else self.estimate - t_quantile(1 - alpha, self.df) * self.se

    def upper(self, alpha: float) -> float:
        """One-sided ``1 - alpha`` upper confidence bound."""
        return self.estimate if self.se == 0 else self.estimate + t_quantile(1 - alpha, self.df) * self.se

    def bounds(self, alpha: float) -> tuple[float, float]:
        """Both one-sided ``1 - alpha`` bounds: a central ``1 - 2 alpha`` interval."""
        half = 0.0 if self.se == 0 else t_quantile(1 - alpha, self.df) * self.se
        return self.estimate - half, self.estimate + half

    def interval(self, confidence_level: float) -> tuple[float, float]:
        """Central interval at ``confidence_level``."""
        return self.bounds((1 - confidence_level) / 2)

    def p_greater(self, value: float) -> float:
        """p-value against ``theta <= value``: small when the data show ``theta > value``."""
        if self.se == 0:
            return 0.0 if self.estimate > value else 1.0
        return float(special.stdtr(self.df, -(self.estimate - value) / self.se))

    def p_less(self, value: float) -> float:
        """p-value against ``theta >= value``: small when the data show ``theta < value``."""
        if self.se == 0:
            return 0.0 if self.estimate < value else 1.0
        return float(special.stdtr(self.df, (self.estimate - value) / self.se))

    def p_inside(self, margin: float) -> float:
        """TOST p-value against ``|theta| >= margin``: small when the data show ``|theta| < margin``."""
        return max(self.p_greater(-margin), self.p_less(margin))

    def p_outside(self, margin: float) -> float:
        """p-value against ``|theta| <= margin``: small when the data show ``|theta| > margin``.

        The size is taken at the least favourable point ``theta = +-margin``, where both tails
        of ``|theta_hat|`` count; the second tail is negligible unless ``margin << se``.
        """
        if self.se == 0:
            return 0.0 if abs(self.estimate) > margin else 1.0
        z = abs(self.estimate)
        far = special.stdtr(self.df, -(z - margin) / self.se)
        near = special.stdtr(self.df, (-z - margin) / self.se)
        return float(min(1.0, far + near))


ROUNDING = 1e-12  # an SD below this share of the values' magnitude is floating-point rounding, not noise


def mean_var(x: np.ndarray) -> tuple[float, float]:
    """Mean and unbiased variance (``np.var(ddof=1)``, without its dispatch cost).

    A variance that is only rounding counts as zero. Equal integer outputs of two arms that
    share a per-round offset (``(9 + c) - (9 + c)``) differ by ~1e-15, not 0; a t statistic
    of rounding over rounding is arbitrary (it decided 0.9% of integer-valued paired runs at
    n = 8 at random), while a zero variance makes the rule say the samples estimate no noise.
    """
    m = x.sum() / len(x)
    d = x - m
    v = float(d @ d) / (len(x) - 1)
    if v <= (ROUNDING * float(np.max(np.abs(x)))) ** 2:
        v = 0.0
    return float(m), v


def one_sample(x: np.ndarray) -> TEstimate:
    """Mean of ``x`` (or of paired differences) with its t reference, as in ``ttest_1samp``."""
    m, v = mean_var(x)
    return TEstimate(m, math.sqrt(v / len(x)), len(x) - 1.0)


def welch(a: np.ndarray, b: np.ndarray) -> TEstimate:
    """``mean(a) - mean(b)`` with the Welch–Satterthwaite t reference, as in ``ttest_ind(equal_var=False)``."""
    (ma, va), (mb, vb) = mean_var(a), mean_var(b)
    va, vb = va / len(a), vb / len(b)
    se2 = va + vb
    df = se2**2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1)) if se2 > 0 else len(a) + len(b) - 2.0
    return TEstimate(ma - mb, math.sqrt(se2), float(df))


def contrast(a: np.ndarray, b: np.ndarray, factor: float, paired: bool) -> TEstimate:
    """``mean(a) - factor * mean(b)``: a ratio claim ``mean(a)/mean(b) >= factor`` is a sign claim on it."""
    if paired:
        return one_sample(a - factor * b)
    return welch(a, factor * b)


def median_bounds(x: np.ndarray, alpha: float) -> tuple[float, float]:
    """Distribution-free one-sided ``1 - alpha`` bounds for the median from order statistics.

    ``x_(i+1)`` (sorted, 0-based ``i``) is a lower bound with coverage ``P(Bin(n, 1/2) > i)``;
    ``i`` is the largest index keeping that at least ``1 - alpha``. The bounds are the inversion
    of the sign test in :func:`sign_pvalues`. Too few samples give infinite bounds.
    """
    n = len(x)
    cdf = special.bdtr(np.arange(n + 1), n, 0.5)
    i = int(np.searchsorted(cdf, alpha, side="right")) - 1
    if i < 0:
        return -math.inf, math.inf
    xs = np.sort(x)
    return float(xs[i]), float(xs[n - 1 - i])


def sign_pvalues(x: np.ndarray, value: float) -> tuple[float, float]:
    """Sign-test p-values ``(against median <= value, against median >= value)``.

    ``binomtest(k, n, 0.5, alternative="less").pvalue`` is ``bdtr(k, n, 0.5)``; the tests check
    the equality. Ties with ``value`` count against the alternative, so the tests agree exactly
    with :func:`median_bounds` (``lower > value`` iff the first p-value <= alpha).
    """
    n = len(x)
    p_greater = special.bdtr(int(np.sum(x <= value)), n, 0.5)
    p_less = special.bdtr(int(np.sum(x >= value)), n, 0.5)
    return float(p_greater), float(p_less)
