"""Position within an interleaved round as a covariate.

ABBA interleaving balances a position effect (the first arm of a round runs on a colder cache,
or after the previous round's tail), so it biases no arm; but it still adds variance, because
a paired difference ``A - B`` carries ``+delta`` in one round and ``-delta`` in the next. This
module fits the additive model ``value = arm + position + noise`` by least squares and removes
the fitted position effects, which takes that variance out again.

A probe that interleaves arms reports each sample's position beside the sample, as the output
``<output>.position`` (0 = ran first in its round); for a ``paired: true`` check the sampler then
hands the rule each call's samples with the position effect removed (:func:`adjust_by_positions`),
so no probe has to fit anything. Without it, the median of per-round contrasts is biased: ABBA
restarts with every call, an odd call puts one arm first once more than the other, and the
median of a two-humped contrast (``+delta`` in one kind of round, ``-delta`` in the other) lands
in the larger hump. ``robust=True`` (for a median) estimates the effect from the medians of the
two kinds of rounds, so one spike does not set it; least squares (for a mean) is the default.

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
ROBUST_ROUNDS = 3  # rounds of each kind (which arm ran first) the robust fit needs
POSITION = ".position"  # suffix of the probe output that holds each sample's position in its round


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


def order_from_positions(positions: Mapping[str, Sequence[float]]) -> list[str]:
    """The flattened run order that per-arm positions describe: round ``i`` runs its arms by position.

    Raises:
        ValueError: the arms do not have one position per round each, or a round's positions are
            not ``0 .. arms - 1`` once each.
    """
    arms = list(positions)
    lengths = {len(values) for values in positions.values()}
    if len(lengths) != 1:
        shown = ", ".join(f"{arm}: {len(values)}" for arm, values in positions.items())
        raise ValueError(f"positions need one entry per round for every arm; got {shown}")
    order: list[str] = []
    for i in range(lengths.pop()):
        seen = {arm: positions[arm][i] for arm in arms}
        if sorted(seen.values()) != list(range(len(arms))):
            raise ValueError(f"round {i}: positions {seen} are not 0..{len(arms) - 1} once each")
        order.extend(sorted(arms, key=lambda arm: seen[arm]))
    return order


def adjust_by_positions(samples: Mapping[str, Sequence[float]], positions: Mapping[str, Sequence[float]], *,
                        robust: bool = False) -> PositionFit:
    """:func:`position_adjusted` for samples whose positions a probe reported per arm and round."""
    return position_adjusted(samples, order_from_positions({arm: positions[arm] for arm in samples}), robust=robust)


def position_adjusted(samples: Mapping[str, Sequence[float]], order: Sequence[str], *,
                      robust: bool = False) -> PositionFit:
    """Remove the position effect from interleaved samples (see the module docstring).

    Args:
        samples: arm -> one value per round, as :class:`~claimcheck.harness.timing.Interleaved` holds.
        order: the arms in the order they ran, flattened over rounds.
        robust: two arms only: the effect is half the gap between the median contrast of the rounds
            one arm ran first and the rounds the other did; the samples move by it and nothing else.

    Returns:
        The adjusted samples (each arm's mean kept where the design is balanced) and the effects.
        With fewer rounds than needed to estimate position and noise, or an arm that never ran
        at some position (the effect is then confounded with the arm), the samples come back as given.
    """
    arms = list(samples)
    positions = positions_of(arms, order)
    width, rounds = len(arms), len(order) // len(arms) if arms else 0
    unchanged = PositionFit({arm: list(map(float, samples[arm])) for arm in arms}, [0.0] * width)
    if width < 2 or rounds <= width or any(set(positions[arm]) != set(range(width)) for arm in arms):
        return unchanged
    if robust:
        return _robust_two_arms(samples, positions) if width == 2 else unchanged
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


def _robust_two_arms(samples: Mapping[str, Sequence[float]], positions: Mapping[str, list[int]]) -> PositionFit:
    """Two arms: ``delta`` = half the gap of the median contrast between the two kinds of rounds."""
    first, second = list(samples)
    a, b = np.asarray(samples[first], dtype=float), np.asarray(samples[second], dtype=float)
    a_first = np.asarray(positions[first]) == 0
    if min(int(a_first.sum()), int((~a_first).sum())) < ROBUST_ROUNDS:  # a median of one or two rounds is noise
        return PositionFit({first: a.tolist(), second: b.tolist()}, [0.0, 0.0])
    contrast = a - b
    delta = float(np.median(contrast[a_first]) - np.median(contrast[~a_first])) / 2  # first-position cost
    shift_a = delta * (a_first - 0.5)
    out = {first: (a - shift_a).tolist(), second: (b + shift_a).tolist()}
    return PositionFit(out, [delta / 2, -delta / 2])


@functools.lru_cache(maxsize=256)
def _inflation(rounds: int, positions: int) -> float:
    """Residual scale that makes ``n - 1``-df intervals cover the ``n - positions``-df model."""
    from scipy import stats

    assumed, true = rounds - 1, rounds - positions
    quantiles = stats.t.ppf(1 - SMALLEST_LEVEL, true) / stats.t.ppf(1 - SMALLEST_LEVEL, assumed)
    return float(np.sqrt(assumed / true) * quantiles)
