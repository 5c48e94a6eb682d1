"""Noise gate on the tested quantity: outliers and drift that an interval may not survive.

The gate looks at the quantity the rule tests, not at each arm: the per-round contrast or
log-ratio for a paired rule (noise shared by both arms cancels there), the output itself for a
one-sample rule, each arm for an unpaired one. It flags two symptoms:

- outliers: any sample beyond ``median +- k robust SD`` (robust SD = 1.4826 MAD). With k = 6,
  chosen by simulation, normal noise trips it on 2.4% of looks at n = 8, 0.6% at 19 and 0.1%
  at 30, t(3) noise on 10-21%, and 5% spikes of x1.3 on N(100, 2) whenever a spike is in the
  sample. A mean's interval is not valid under such spikes; a median's is.
- drift: the second half of the samples (in acquisition order) differs from the first by a
  Mann–Whitney test at ``drift_alpha`` *and* by more than ``drift_sd`` robust SDs in median, so
  that a tiny but significant drift over many samples does not trip it.

- serial dependence: the lag-1 autocorrelation of the ranks (robust to spikes) exceeds what
  independent samples give at ``dependence_alpha`` (one-sided, ``r1 + 1/n`` against
  ``z / sqrt(n)``). Samples that depend on each other (AR(1) noise, a clock that switches state
  in blocks) carry less information than their count: an interval that treats them as
  independent is too narrow (AR(1) rho = 0.5 made a median's false refutations 0.10-0.17 at
  n = 30). It is reported first, since a drift is one kind of it.

A flagged look keeps sampling within the budget (:func:`~._sequential.run_sequential`). At the
end a flagged mean becomes inconclusive; a decisive median stands, with the problem recorded,
unless the problem is serial dependence (:func:`is_dependence`): no interval that assumes
independent samples holds under it, so a median is decided again on its effective n and its
effect's size (:mod:`._dependent`), and any other statistic stays inconclusive with that reason.

:func:`warm_up_count` finds warm-up samples: a leading run of samples, at most a fifth of them
and at most :data:`WARM_UP_MAX`, each beyond ``WARM_UP_K`` robust SDs of the samples after
them, on one side; none below :data:`WARM_UP_MIN_N` samples. The sequential loop drops them
from a timing item and says so.
:func:`noise_gate` adds the coefficient of variation for means of a positive timing output
(undefined for contrasts near zero, so it is not applied to them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from claimcheck.numbers import apart

OUTLIER_K = 6.0
ROBUST_SD = 1.4826  # MAD -> SD under normal noise
DEPENDENCE_ALPHA = 0.10  # chosen by simulation: detection power is what keeps the error rates
EARLY_DEPENDENCE_ALPHA = 0.30  # at a look that could stop early: a flag costs samples, not a verdict
DEPENDENT = "serially dependent"
WARM_UP_K = 4.0
WARM_UP_MAX = 5
WARM_UP_MIN_N = 10  # below it a dropped sample costs more decisiveness than a warm-up costs bias


def is_dependence(problem: str | None) -> bool:
    """Whether a gate's problem is serial dependence (the item cannot be decided under it)."""
    return problem is not None and DEPENDENT in problem


def rank_lag1(x: np.ndarray) -> float:
    """Lag-1 autocorrelation of the ranks of ``x`` (0 for a constant series)."""
    return rank_lag(x, 1)


def rank_lag(x: np.ndarray, lag: int) -> float:
    """Lag-``lag`` autocorrelation of the ranks of ``x`` (0 for a constant series)."""
    from scipy import stats  # slow to import; only needed here

    ranks = stats.rankdata(x)
    centred = ranks - ranks.mean()
    total = float(centred @ centred)
    return float(centred[:-lag] @ centred[lag:]) / total if total else 0.0


def lag1_dependence(x: np.ndarray, alpha: float = DEPENDENCE_ALPHA) -> str | None:
    """Why ``x`` (in acquisition order) looks serially dependent, or None.

    The lag-1 autocorrelation of the ranks, tested one-sided against independence with its
    normal approximation (mean ``-1/n``, SD ``1/sqrt(n)``); ties share a rank.
    """
    n = len(x)
    if n < 6:
        return None
    from scipy import special  # slow to import; only needed here

    r1 = rank_lag1(x)
    p = float(special.ndtr(-(r1 + 1 / n) * math.sqrt(n)))
    if p >= alpha:
        return None
    return (f"{DEPENDENT}: lag-1 autocorrelation of the ranks {r1:+.2f} over {n} samples (p = {p:.2g}); "
            "samples that depend on each other carry less information than their count")


def warm_up_count(x: np.ndarray, *, k: float = WARM_UP_K, limit: int = WARM_UP_MAX) -> int:
    """How many leading samples of ``x`` (in acquisition order) are warm-up (see the module docstring)."""
    n = len(x)
    most = min(limit, n // 5)
    if n < WARM_UP_MIN_N:
        return 0
    rest = x[most:]
    centre, scale = float(np.median(rest)), robust_sd(rest)
    if scale <= 0:
        return 0
    side = np.sign(x[0] - centre)
    count = 0
    while count < most and np.sign(x[count] - centre) == side and abs(x[count] - centre) > k * scale:
        count += 1
    return count


def robust_sd(x: np.ndarray) -> float:
    """``1.4826 * MAD``: the SD under normal noise, unmoved by a few spikes."""
    return ROBUST_SD * float(np.median(np.abs(x - np.median(x))))


def quantity_gate(
    values: Sequence[float],
    *,
    k: float = OUTLIER_K,
    max_share: float = 0.0,
    drift_alpha: float = 0.01,
    drift_sd: float = 1.0,
    order: Sequence[float] | None = None,
    dependence: bool = True,
) -> str | None:
    """Why ``values`` (the tested quantity, in acquisition order) are dependent, spiky or drifting, or None.

    Args:
        values: the per-round contrast, or the samples of one output.
        k: outlier distance from the median, in robust SDs.
        max_share: largest share of outliers that passes.
        order: acquisition order of each value; defaults to the given order.
        dependence: test serial dependence too.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise ValueError("`samples` must be a flat sequence of finite numbers")
    if order is not None:
        if len(order) != len(x):
            raise ValueError(f"`order` must have one entry per sample; got {len(order)} for {len(x)} samples")
        x = x[np.argsort(np.asarray(order), kind="stable")]
    if len(x) < 3:
        return None
    dependent = lag1_dependence(x) if dependence else None
    if dependent is not None:
        return dependent
    scale = robust_sd(x)
    if scale > 0:
        far = int(np.sum(np.abs(x - np.median(x)) > k * scale))
        if far / len(x) > max_share:
            return (f"spiky: {far} of {len(x)} samples lie beyond the median ± {k:g} robust SD "
                    f"({far / len(x):.0%} outliers)")
    if len(x) >= 8:
        from scipy import stats  # slow to import; only needed here

        first, second = x[: len(x) // 2], x[len(x) // 2 :]
        spread = scale or float(np.std(x, ddof=1))
        shift = float(np.median(second) - np.median(first))
        p = float(stats.mannwhitneyu(first, second).pvalue)
        if spread > 0 and p < drift_alpha and abs(shift) > drift_sd * spread:
            base = float(np.median(first))
            relative = f"{shift / abs(base):+.1%} " if base else ""
            return (f"drifting: second half of the samples is {relative}off the first "
                    f"({shift / spread:+.1f} robust SD, Mann–Whitney p = {p:.2g})")
    return None


def noise_gate(
    samples: Sequence[float],
    *,
    cv_bound: float = 0.10,
    order: Sequence[float] | None = None,
    drift_alpha: float = 0.01,
    drift_sd: float = 1.0,
    dependence: bool = True,
) -> str | None:
    """:func:`quantity_gate` plus a coefficient-of-variation bound, for the mean of a timing output.

    Args:
        samples: timing (or throughput) samples of one group.
        cv_bound: largest coefficient of variation a mean is decided at (10%, the level at which
            pyperf warns that a benchmark is unstable).
        order: acquisition order of each sample (timestamps or indices); defaults to the given order.
        dependence: test serial dependence too (:func:`quantity_gate`).
    """
    x = np.asarray(samples, dtype=float)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise ValueError("`samples` must be a flat sequence of finite numbers")
    if len(x) >= 2:
        mean = float(np.mean(x))
        cv = float(np.std(x, ddof=1)) / abs(mean) if mean else np.inf
        if cv > cv_bound:
            shown, bound = apart(cv, cv_bound, as_percent=True) if np.isfinite(cv) else ("infinite", f"{cv_bound:.0%}")
            return f"too noisy: coefficient of variation {shown} exceeds {bound}"
    return quantity_gate(x.tolist(), order=order, drift_alpha=drift_alpha, drift_sd=drift_sd, dependence=dependence)
