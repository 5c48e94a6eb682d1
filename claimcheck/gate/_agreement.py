"""A stored result item as an interval in a doc figure's unit (the comparisons are in :mod:`._stated`)."""

from __future__ import annotations

from claimcheck.figures import UnitError, convert
from claimcheck.numbers import finite
from claimcheck.store import StoredResult


def item_interval(item: StoredResult, unit: str | None,
                   fallback_unit: str | None = None) -> tuple[float, float, float | None] | None:
    """``(low, high, estimate)`` of one result item in ``unit``.

    An item without a unit is taken to be in ``fallback_unit`` (the claim's), and failing that
    in ``unit`` itself. An interval unbounded on both sides stands for its estimate alone.
    """
    decision = item.decision
    if decision is None:
        return None
    low, high = decision.low, decision.high
    statistic: float | None = decision.statistic if finite(decision.statistic) else None
    if not finite(low) and not finite(high):
        if statistic is None:
            return None
        low = high = statistic
    source_unit = item.claim.check.unit or fallback_unit or unit
    try:
        converted = (convert(low, source_unit, unit), convert(high, source_unit, unit))
        estimate = convert(float(statistic), source_unit, unit) if statistic is not None else None
    except UnitError:
        return None
    return min(converted), max(converted), estimate
