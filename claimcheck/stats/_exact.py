"""``exact``: a deterministic value equals what the claim says, within a tolerance."""

from __future__ import annotations

import numpy as np

from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision


def decide_exact(
    rule: str,
    groups: list[tuple[str, np.ndarray]],
    alpha: float,
    *,
    expected: float,
    tolerance: float = 0.0,
    unit: str | None = None,
) -> Decision:
    """HOLDS when every value is within ``tolerance`` of ``expected``; otherwise REFUTED.

    No statistics: the probe is deterministic, so the worst value is the evidence.
    """
    x = groups[0][1]
    worst = int(np.argmax(np.abs(x - expected)))
    value, off = float(x[worst]), float(abs(x[worst] - expected))
    holds = off <= tolerance
    within = f" within {fmt(tolerance)}" if tolerance else ""
    unit_text = f" {unit}" if unit else ""
    reason = (
        f"value {fmt(value)}{unit_text} equals the expected {fmt(expected)}{within}"
        if holds
        else f"value {fmt(value)}{unit_text} differs from the expected {fmt(expected)} by {fmt(off)}"
        f" (tolerance {fmt(tolerance)})"
    )
    return Decision(
        rule=rule, statistic=value, low=value, high=value, confidence_level=1.0, n=len(x),
        verdict=Verdict.HOLDS if holds else Verdict.REFUTED, reason=reason, pvalue=1.0 if holds else 0.0,
        hold_pvalue=0.0 if holds else 1.0,
        alpha=alpha, estimate_label="value", details={"expected": expected, "tolerance": tolerance},
        _interval_at=lambda lv: (value, value),
    )
