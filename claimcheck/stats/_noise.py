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

A flagged look keeps sampling within the budget (:func:`~._sequential.run_sequential`). At the
end a flagged mean becomes inconclusive; a decisive median stands, with the problem recorded.
:func:`noise_gate` adds the coefficient of variation for means of a positive timing output
(undefined for contrasts near zero, so it is not applied to them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from claimcheck.numbers import apart

OUTLIER_K = 6.0
ROBUST_SD = 1.4826  # MAD -> SD under normal noise


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
) -> str | None:
    """Why ``values`` (the tested quantity, in acquisition order) are too spiky or drifting, or None.

    Args:
        values: the per-round contrast, or the samples of one output.
        k: outlier distance from the median, in robust SDs.
        max_share: largest share of outliers that passes.
        order: acquisition order of each value; defaults to the given order.
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
) -> str | None:
    """:func:`quantity_gate` plus a coefficient-of-variation bound, for the mean of a timing output.

    Args:
        samples: timing (or throughput) samples of one group.
        cv_bound: largest coefficient of variation a mean is decided at (10%, the level at which
            pyperf warns that a benchmark is unstable).
        order: acquisition order of each sample (timestamps or indices); defaults to the given order.
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
    return quantity_gate(x.tolist(), order=order, drift_alpha=drift_alpha, drift_sd=drift_sd)
