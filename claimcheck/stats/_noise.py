"""Noise gate for timing samples: too noisy or drifting samples decide nothing.

A timing claim measured on a busy or thermally throttling machine can come out REFUTED for
reasons that have nothing to do with the claim. The gate flags two symptoms:

- coefficient of variation above ``cv_bound`` (10% by default, the level at which pyperf
  warns that a benchmark is unstable);
- drift: the second half of the samples (in acquisition order) differs from the first by a
  Mann–Whitney test at ``drift_alpha`` *and* by more than ``drift_bound`` in median, so that a
  tiny but significant drift over many samples does not trip it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def noise_gate(
    samples: Sequence[float],
    *,
    cv_bound: float = 0.10,
    order: Sequence[float] | None = None,
    drift_alpha: float = 0.01,
    drift_bound: float = 0.02,
) -> str | None:
    """Reason the samples are too noisy to decide a timing claim, or None when they are fine.

    Args:
        samples: timing (or throughput) samples of one group.
        order: acquisition order of each sample (timestamps or indices); defaults to the given order.
    """
    x = np.asarray(samples, dtype=float)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise ValueError("`samples` must be a flat sequence of finite numbers")
    if order is not None:
        if len(order) != len(x):
            raise ValueError(f"`order` must have one entry per sample; got {len(order)} for {len(x)} samples")
        x = x[np.argsort(np.asarray(order), kind="stable")]
    if len(x) < 2:
        return None
    mean = float(np.mean(x))
    cv = float(np.std(x, ddof=1)) / abs(mean) if mean else np.inf
    if cv > cv_bound:
        return f"too noisy: coefficient of variation {cv:.1%} exceeds {cv_bound:.0%}"
    if len(x) >= 8:
        from scipy import stats  # slow to import; only needed here

        first, second = x[: len(x) // 2], x[len(x) // 2 :]
        shift = float(np.median(second) / np.median(first) - 1) if np.median(first) else np.inf
        p = float(stats.mannwhitneyu(first, second).pvalue)
        if p < drift_alpha and abs(shift) > drift_bound:
            return f"drifting: second half of the samples is {shift:+.1%} off the first (Mann–Whitney p = {p:.2g})"
    return None
