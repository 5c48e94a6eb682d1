"""Departure hazards: does a sampling policy leave the greedy path at forks or at re-merges?

Pure bookkeeping on first-departure positions (methods, section D). For a label
L (FORK, REMERGE, LOCKED) and a set of samples with first departures ``d``:
``departures(L)`` counts samples whose ``d`` falls on an L-position,
``at_risk(L)`` sums, over L-positions ``p``, the samples still on the path at
``p`` (``d >= p``), and ``hazard(L) = departures / at_risk``. Nothing at risk
makes the hazard undefined, and a ratio is undefined when either side is or its
denominator is 0. Undefined values carry their reason; they are never 0.

Samples are pooled over prompts, and the uncertainty is taken over seeds: each
seed contributes its counts on every prompt, and leave-one-seed-out
(jackknife) pseudo-values turn a pooled ratio into per-seed numbers whose mean
is the bias-corrected estimate and whose spread is the jackknife standard
error, which an interval on a mean can then use.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from claimcheck.probing.sampling.forkmap import FORK, LABELS, REMERGE


def first_departure(sample: Sequence[int], ref: Sequence[int]) -> int:
    """First position where ``sample`` differs from ``ref``; ``len(ref)`` if it never does.

    A sample that ends (stop token) before ``ref`` does departs where it ended.
    """
    n = len(ref)
    for position in range(n):
        if position >= len(sample) or sample[position] != ref[position]:
            return position
    return n


@dataclass(frozen=True)
class Counts:
    """Departures and at-risk counts per label (additive over samples)."""

    departures: Mapping[str, int] = field(default_factory=dict)
    at_risk: Mapping[str, int] = field(default_factory=dict)

    def __add__(self, other: "Counts") -> "Counts":
        return Counts(Counter(self.departures) + Counter(other.departures), Counter(self.at_risk) + Counter(other.at_risk))

    def __sub__(self, other: "Counts") -> "Counts":
        dep = {k: self.departures.get(k, 0) - other.departures.get(k, 0) for k in LABELS}
        risk = {k: self.at_risk.get(k, 0) - other.at_risk.get(k, 0) for k in LABELS}
        return Counts(dep, risk)


def sample_counts(departure: int, labels: Sequence[str]) -> Counts:
    """The counts one sample with first departure ``departure`` contributes."""
    n = len(labels)
    if not 0 <= departure <= n:
        raise ValueError(f"departure {departure} is outside [0, {n}]")
    risk = Counter(labels[: min(departure + 1, n)])
    dep = Counter([labels[departure]]) if departure < n else Counter()
    return Counts({k: dep.get(k, 0) for k in LABELS}, {k: risk.get(k, 0) for k in LABELS})


def total(counts: Iterable[Counts]) -> Counts:
    out = Counts({k: 0 for k in LABELS}, {k: 0 for k in LABELS})
    for c in counts:
        out = out + c
    return out


@dataclass(frozen=True)
class Value:
    """A number that may be undefined; ``value is None`` iff ``reason`` is set."""

    value: float | None
    reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None

    def to_json(self) -> dict[str, object]:
        return {"value": self.value, "undefined": self.reason}


def hazard(counts: Counts, label: str) -> Value:
    """``departures(label) / at_risk(label)``; undefined when nothing was at risk."""
    risk = counts.at_risk.get(label, 0)
    if risk <= 0:
        return Value(None, f"no sample was at risk at a {label} position")
    return Value(counts.departures.get(label, 0) / risk)


def ratio(numerator: Value, denominator: Value, what: str) -> Value:
    """``numerator / denominator`` with the undefined cases spelled out."""
    top, bottom = numerator.value, denominator.value
    if top is None:
        return Value(None, f"{what}: numerator undefined ({numerator.reason})")
    if bottom is None:
        return Value(None, f"{what}: denominator undefined ({denominator.reason})")
    if bottom == 0:
        if top == 0:
            return Value(None, f"{what}: both hazards are 0")
        return Value(None, f"{what}: denominator hazard is 0 (no departure there)")
    return Value(top / bottom)


def selectivity(counts: Counts) -> Value:
    """Fork selectivity ``hazard(FORK) / hazard(REMERGE)``."""
    return ratio(hazard(counts, FORK), hazard(counts, REMERGE), "fork selectivity")


def jackknife_pseudovalues(
    per_seed: Sequence[Counts] | Sequence[tuple[Counts, ...]],
    statistic: Callable[..., Value],
) -> tuple[list[float], Value, str | None]:
    """Leave-one-seed-out pseudo-values ``S*theta - (S-1)*theta_(-s)`` of a pooled statistic.

    Args:
        per_seed: one entry per seed: a :class:`Counts`, or a tuple of them
            (e.g. two policies) passed to ``statistic`` positionally.
        statistic: maps pooled counts to a :class:`Value`.

    Returns:
        ``(pseudo_values, full, reason)``: ``full`` is the statistic on all
        seeds. When it or any leave-one-out value is undefined the list is
        empty and ``reason`` says why; otherwise ``reason`` is ``None``.
    """
    entries = [e if isinstance(e, tuple) else (e,) for e in per_seed]
    s = len(entries)
    if s < 2:
        return [], Value(None, f"a jackknife needs at least 2 seeds, got {s}"), f"a jackknife needs at least 2 seeds, got {s}"
    arms = len(entries[0])
    totals = tuple(total(e[a] for e in entries) for a in range(arms))
    full = statistic(*totals)
    if not full.defined:
        return [], full, full.reason
    pseudo: list[float] = []
    for index, entry in enumerate(entries):
        held_out = statistic(*(totals[a] - entry[a] for a in range(arms)))
        if not held_out.defined:
            return [], full, f"undefined without seed #{index}: {held_out.reason}"
        pseudo.append(s * full.value - (s - 1) * held_out.value)  # type: ignore[operator]
    return pseudo, full, None
