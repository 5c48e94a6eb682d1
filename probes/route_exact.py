"""Exact, seedless route hazards from teacher-forced probabilities.

The sampled hazard counts, over seeds, departures at L-positions and seeds still on the greedy
path there. Its expectation needs no seeds: with ``q_i`` the probability that a policy draws
the reference token at position ``i`` (teacher-forced) and ``S_i = q_0 ... q_{i-1}`` the chance
of still being on the path at ``i``, one seed departs at ``i`` with probability ``S_i (1 - q_i)``.
So ``hazard(L) = sum_{i in L} S_i (1 - q_i) / sum_{i in L} S_i`` exactly. It stays defined where
every sampled seed has already departed before the first L-position (nothing at risk), and it
has no seed-to-seed noise, so a selectivity near 1 is a property of the model, not of the draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

LABELS = ("FORK", "REMERGE")


@dataclass(frozen=True)
class ExactCounts:
    """Expected departures and expected seeds at risk per label, for one seed."""

    departures: Mapping[str, float]
    at_risk: Mapping[str, float]

    def __add__(self, other: "ExactCounts") -> "ExactCounts":
        return ExactCounts({k: self.departures[k] + other.departures[k] for k in LABELS},
                           {k: self.at_risk[k] + other.at_risk[k] for k in LABELS})

    def hazard(self, label: str) -> float | None:
        """Expected departures over expected seeds at risk; None when nothing is at risk at all."""
        return self.departures[label] / self.at_risk[label] if self.at_risk[label] > 0 else None

    def selectivity(self) -> float | None:
        """hazard(FORK) / hazard(REMERGE); None when either is undefined or the re-merge hazard is 0."""
        fork, remerge = self.hazard("FORK"), self.hazard("REMERGE")
        return fork / remerge if fork is not None and remerge else None

    def to_json(self) -> dict[str, Any]:
        return {"departures": dict(self.departures), "at_risk": dict(self.at_risk),
                "fork_hazard": self.hazard("FORK"), "remerge_hazard": self.hazard("REMERGE"), "selectivity": self.selectivity()}


def exact_counts(rows: np.ndarray, ref: Sequence[int], labels: Sequence[str], policy: Any) -> ExactCounts:
    """Expected per-seed departures and at-risk mass at FORK and REMERGE positions of one prompt.

    ``rows[i]`` is the teacher-forced log-prob row of ``ref[i]``; the policy reshapes it exactly as
    it does when drawing (:meth:`Policy.log_weights`).
    """
    from claimcheck.sampling import log_softmax

    n = min(len(ref), len(labels), len(rows))
    if n == 0:
        return ExactCounts({k: 0.0 for k in LABELS}, {k: 0.0 for k in LABELS})
    weights = log_softmax(np.asarray(policy.log_weights(np.asarray(rows[:n])), dtype=np.float32)).astype(np.float64)
    log_q = weights[np.arange(n), np.asarray(list(ref[:n]), dtype=np.int64)]
    log_survive = np.concatenate([[0.0], np.cumsum(log_q)[:-1]])
    survive = np.exp(log_survive)
    depart = survive * -np.expm1(log_q)
    departures = {k: float(sum(depart[i] for i in range(n) if labels[i] == k)) for k in LABELS}
    at_risk = {k: float(sum(survive[i] for i in range(n) if labels[i] == k)) for k in LABELS}
    return ExactCounts(departures, at_risk)


def log_or_none(value: float | None) -> float | None:
    """The natural log of a positive value, else None (a zero or undefined ratio has no log)."""
    return math.log(value) if value is not None and value > 0 else None
