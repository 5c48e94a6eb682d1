"""The result every rule returns, shaped like a scipy.stats result object."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, fields
from collections.abc import Mapping
from typing import Any, Callable, NamedTuple

import numpy as np

from claimcheck.verdict import Verdict

from ._hypothesis import Hypothesis


class ConfidenceInterval(NamedTuple):
    """Interval for the estimate a claim is about (``low`` may be -inf, ``high`` inf)."""

    low: float
    high: float


@dataclass(frozen=True)
class Interval:
    """An interval and what it is: its level and kind (``confidence`` or ``computed``)."""

    low: float
    high: float
    level: float
    kind: str = "confidence"


@dataclass(frozen=True)
class Decision:
    """Outcome of one decision rule on one set of sample groups.

    Attributes:
        rule: the rule that decided.
        statistic: the estimate the claim is about (mean, median, ratio, difference, rate, value).
        low, high: interval for ``statistic`` at ``confidence_level``; each side is a one-sided
            bound at level ``alpha`` unless the rule's reason says otherwise.
        n: total number of samples over all groups; for a paired figure (rounds of two interleaved
            arms), the number of rounds, which is what its test counts.
        verdict: HOLDS, REFUTED or INCONCLUSIVE.
        reason: one readable line that explains the verdict.
        pvalue: p-value of the test whose rejection means REFUTED (``verdict`` is REFUTED exactly
            when ``pvalue <= alpha``); suite-level multiplicity adjusts this number.
        hold_pvalue: p-value of the test whose rejection means HOLDS (``verdict`` is HOLDS only
            when ``hold_pvalue <= alpha``); the family adjusts holds with it too.
        alpha: error rate the decision was taken at.
        mde: smallest departure from the claim's threshold/margin this run detects with 80% power,
            in the statistic's units (``None`` for deterministic rules).
        estimate_label: what ``statistic`` is, e.g. "mean" or "ratio of means".
        details: rule-specific facts (per-step results, sequential looks, ...), JSON-able.
        hypothesis: what the decision tested (its edge, side, scale, statistic), set by the rule;
            None when it tested nothing on an interval. Corrections that re-decide it read this.
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
    hold_pvalue: float = 1.0
    details: dict[str, Any] = field(default_factory=dict)
    hypothesis: Hypothesis | None = None
    _interval_at: Callable[[float], tuple[float, float]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def interval(self) -> Interval:
        """The decision's interval with its level; ``computed`` for a deterministic value."""
        kind = "computed" if self.confidence_level >= 1.0 else "confidence"
        return Interval(self.low, self.high, self.confidence_level, kind)

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval at ``confidence_level`` (default: the level the decision used)."""
        if confidence_level is None or confidence_level == self.confidence_level:
            return ConfidenceInterval(self.low, self.high)
        if not 0 < confidence_level < 1:
            raise ValueError(f"`confidence_level` must lie in (0, 1); got {confidence_level!r}")
        if self._interval_at is None:
            raise ValueError(f"rule `{self.rule}` has no interval at other confidence levels")
        return ConfidenceInterval(*map(float, self._interval_at(confidence_level)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict: enums as values, numpy scalars as Python numbers, NaN/inf as None (no hypothesis: no key)."""
        out = {f.name: json_safe(getattr(self, f.name)) for f in fields(self)
               if not f.name.startswith("_") and f.name != "hypothesis"}
        if self.hypothesis is not None:
            out["hypothesis"] = json_safe(self.hypothesis.to_record())
        return out

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Decision:
        """The inverse of :meth:`to_dict` (None bounds read back as unbounded, a None estimate as NaN)."""

        def number(name: str, missing: float) -> float:
            value = record.get(name)
            return float(value) if isinstance(value, (int, float)) else missing

        return cls(
            rule=str(record.get("rule", "")), statistic=number("statistic", math.nan),
            low=number("low", -math.inf), high=number("high", math.inf),
            confidence_level=number("confidence_level", math.nan), n=int(record.get("n") or 0),
            verdict=Verdict(record.get("verdict", Verdict.INCONCLUSIVE.value)), reason=str(record.get("reason", "")),
            pvalue=number("pvalue", 1.0), alpha=number("alpha", 0.05), hold_pvalue=number("hold_pvalue", 1.0),
            mde=record["mde"] if isinstance(record.get("mde"), (int, float)) else None,
            estimate_label=str(record.get("estimate_label") or ""), details=dict(record.get("details") or {}),
            hypothesis=Hypothesis.from_record(hypothesis) if isinstance(hypothesis := record.get("hypothesis"), Mapping)
            else None,
        )


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


LEVEL_FLOOR = 1e-12  # the level of a look that may spend nothing: it reports an interval, decides nothing


def spendable(alpha: float) -> bool:
    """Whether a look at ``alpha`` may spend anything; at the floor no power or resolution is computed."""
    return alpha > LEVEL_FLOOR


def check_alpha(alpha: float) -> float:
    """Error rates above 1/2 would let HOLDS and REFUTED both pass."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.number)) or not 0 < alpha < 0.5:
        raise ValueError(f"`alpha` must lie in (0, 0.5); got {alpha!r}")
    return float(alpha)


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


def identical_samples(rule: str, n: int, alpha: float, value: float, label: str) -> Decision:
    """INCONCLUSIVE decision for repeated samples that are all equal (a zero standard error).

    A probe declared non-deterministic that returns n equal values has not shown its noise is
    zero: a value seen 5 times in a row has probability (2/3)^5 = 0.13 for an output that is 9
    two times in three, so p = 0 from such samples would refute true claims. Sampling goes on;
    a deterministic probe is decided exactly instead.
    """
    from claimcheck.numbers import number

    return Decision(
        rule=rule, statistic=value, low=-math.inf, high=math.inf, confidence_level=1 - 2 * alpha, n=n,
        verdict=Verdict.INCONCLUSIVE, pvalue=1.0, alpha=alpha, estimate_label=label,
        reason=(f"{label} {number(value)}: all {n} samples are equal, so they estimate no noise "
                "(a repeated probe needs varied samples, or a deterministic probe an exact check)"),
    )
