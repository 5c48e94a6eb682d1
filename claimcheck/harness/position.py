"""Position within an interleaved round as a covariate.

ABBA interleaving balances a position effect (the first arm of a round runs on a colder cache,
or after the previous round's tail), so it biases no arm; but it still adds variance, because
a paired difference ``A - B`` carries ``+delta`` in one round and ``-delta`` in the next. This
module fits the additive model ``value = arm + position + noise`` by least squares and removes
the fitted position effects, which takes that variance out again.

The rules downstream treat the adjusted samples as ordinary samples, with ``n - 1`` degrees of
freedom per arm, while the fit used ``positions - 1`` more. So the residuals are scaled up by
``sqrt((n - 1) / (n - positions))`` (an unbiased variance) times the ratio of the t quantiles for
the true and the assumed degrees of freedom at a one-sided level of 0.005, the smallest a
sequential look spends; an interval from the adjusted samples is then at least as wide as the
covariate model's own interval at every level the runner uses.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

SMALLEST_LEVEL = 0.005


class PositionFit(NamedTuple):
    """Samples with the position effect removed, and the fitted effect of each position."""

    samples: dict[str, list[float]]
    effects: list[float]  # per position, relative to their mean (they sum to zero)


def positions_of(arms: Sequence[str], order: Sequence[str]) -> dict[str, list[int]]:
    """Each arm's position within its round, sample by sample, from the flattened run order."""
    width = len(arms)
    if width == 0 or len(order) % width:
        raise ValueError(f"order of {len(order)} runs does not split into rounds of {width} arms")
    out: dict[str, list[int]] = {arm: [] for arm in arms}
    for start in range(0, len(order), width):
        for position, arm in enumerate(order[start:start + width]):
            out[arm].append(position)
    return out


def position_adjusted(samples: Mapping[str, Sequence[float]], order: Sequence[str]) -> PositionFit:
    """Remove the position effect from interleaved samples (see the module docstring).

    Args:
        samples: arm -> one value per round, as :class:`~claimcheck.harness.timing.Interleaved` holds.
        order: the arms in the order they ran, flattened over rounds.

    Returns:
        The adjusted samples (each arm's mean kept where the design is balanced) and the effects.
        With fewer rounds than needed to estimate position and noise, the samples come back as given.
    """
    arms = list(samples)
    positions = positions_of(arms, order)
    width, rounds = len(arms), len(order) // len(arms) if arms else 0
    if width < 2 or rounds <= width:
        return PositionFit({arm: list(map(float, samples[arm])) for arm in arms}, [0.0] * width)
    values = np.array([v for arm in arms for v in samples[arm]], dtype=float)
    arm_index = np.repeat(np.arange(width), rounds)
    position_index = np.array([p for arm in arms for p in positions[arm]])
    design = np.zeros((values.size, 2 * width - 1))
    design[np.arange(values.size), arm_index] = 1.0
    for p in range(1, width):  # position 0 is the baseline; effects are centred afterwards
        design[position_index == p, width + p - 1] = 1.0
    coefficients, *_ = np.linalg.lstsq(design, values, rcond=None)
    raw_effects = np.r_[0.0, coefficients[width:]]
    effects = raw_effects - raw_effects.mean()
    fitted_arm = coefficients[:width] + raw_effects.mean()
    residuals = values - design @ coefficients
    scale = _inflation(rounds, width)
    adjusted = fitted_arm[arm_index] + scale * residuals
    out = {arm: adjusted[arm_index == i].tolist() for i, arm in enumerate(arms)}
    return PositionFit(out, effects.tolist())


@functools.lru_cache(maxsize=256)
def _inflation(rounds: int, positions: int) -> float:
    """Residual scale that makes ``n - 1``-df intervals cover the ``n - positions``-df model."""
    from scipy import stats

    assumed, true = rounds - 1, rounds - positions
    quantiles = stats.t.ppf(1 - SMALLEST_LEVEL, true) / stats.t.ppf(1 - SMALLEST_LEVEL, assumed)
    return float(np.sqrt(assumed / true) * quantiles)
