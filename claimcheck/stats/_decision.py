"""The result every rule returns, shaped like a scipy.stats result object."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, NamedTuple

import numpy as np

from claimcheck.verdict import Verdict


class ConfidenceInterval(NamedTuple):
    """Interval for the estimate a claim is about (``low`` may be -inf, ``high`` inf)."""

    low: float
    high: float


@dataclass(frozen=True)
class Decision:
    """Outcome of one decision rule on one set of sample groups.

    Attributes:
        rule: the rule that decided.
        statistic: the estimate the claim is about (mean, median, ratio, difference, rate, value).
        low, high: interval for ``statistic`` at ``confidence_level``; each side is a one-sided
            bound at level ``alpha`` unless the rule's reason says otherwise.
        n: total number of samples over all groups.
        verdict: HOLDS, REFUTED or INCONCLUSIVE.
        reason: one readable line that explains the verdict.
        pvalue: p-value of the test whose rejection means REFUTED (``verdict`` is REFUTED exactly
            when ``pvalue <= alpha``); suite-level multiplicity adjusts this number.
        alpha: error rate the decision was taken at.
        mde: smallest departure from the claim's threshold/margin this run detects with 80% power,
            in the statistic's units (``None`` for deterministic rules).
        estimate_label: what ``statistic`` is, e.g. "mean" or "ratio of means".
        details: rule-specific facts (per-step results, sequential looks, ...), JSON-able.
    """

    rule: str
    statistic: float
    low: float
    high: float
    confidence_level: float
    n: int
    verdict: Verdict
    reason: str
    pvalue: float
    alpha: float
    mde: float | None = None
    estimate_label: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    _interval_at: Callable[[float], tuple[float, float]] | None = field(
        default=None, repr=False, compare=False
    )

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval at ``confidence_level`` (default: the level the decision used)."""
        if confidence_level is None or confidence_level == self.confidence_level:
            return ConfidenceInterval(self.low, self.high)
        if not 0 < confidence_level < 1:
            raise ValueError(f"`confidence_level` must lie in (0, 1); got {confidence_level!r}")
        if self._interval_at is None:
            raise ValueError(f"rule `{self.rule}` has no interval at other confidence levels")
        return ConfidenceInterval(*map(float, self._interval_at(confidence_level)))

    def inconclusive(self, reason: str) -> Decision:
        """A copy turned INCONCLUSIVE (noise gate, multiplicity), keeping the raw verdict in details."""
        details = {**self.details, "raw_verdict": self.verdict.value, "raw_reason": self.reason}
        return replace(self, verdict=Verdict.INCONCLUSIVE, reason=reason, details=details)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict: enums as values, numpy scalars as Python numbers, NaN/inf as None."""
        return {f.name: json_safe(getattr(self, f.name)) for f in fields(self) if not f.name.startswith("_")}


def json_safe(value: Any) -> Any:
    """Recursively convert ``value`` into something ``json.dumps`` accepts without NaN/inf."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (np.generic, np.ndarray)):
        return json_safe(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def fmt(x: float) -> str:
    """Four significant digits, the precision a one-line reason needs."""
    return f"{x:.4g}"


def level_text(confidence_level: float) -> str:
    """``0.9`` -> ``"90%"``, ``0.9472`` -> ``"94.7%"``."""
    return f"{100 * confidence_level:.3g}%"


def verdict_from(p_holds: float, p_refuted: float, alpha: float) -> Verdict:
    """Three-way decision from the two one-sided tests (they cannot both reject for alpha < 0.5)."""
    if p_refuted <= alpha:
        return Verdict.REFUTED
    if p_holds <= alpha:
        return Verdict.HOLDS
    return Verdict.INCONCLUSIVE


def too_few(rule: str, n: int, alpha: float, need: int = 2, what: str = "samples per group") -> Decision:
    """INCONCLUSIVE decision for a run that has too few samples to estimate noise."""
    return Decision(
        rule=rule, statistic=math.nan, low=-math.inf, high=math.inf, confidence_level=1 - 2 * alpha,
        n=n, verdict=Verdict.INCONCLUSIVE, reason=f"needs at least {need} {what} to estimate noise",
        pvalue=1.0, alpha=alpha,
    )
