"""Numbers: whether a quoted figure agrees with a measured interval or the band a claim states."""

from __future__ import annotations

from typing import Sequence

from claimcheck.figures import Figure, UnitError, compatible, convert, family_of, format_value, parse_figures
from claimcheck.numbers import finite
from claimcheck.numbers import level as confidence_level
from claimcheck.store import StoredResult

from ._model import ClaimInfo


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


def families_of_claim(claim: ClaimInfo, items: Sequence[StoredResult]) -> set[str]:
    """Unit families the claim measures, limited to those its source figure quotes."""
    measured_unit = _measured_unit(claim, items)
    source = {f.family for f in parse_figures(claim.figure)}
    if measured_unit is not None:
        family = family_of(measured_unit)
        if family is None:
            return set()
        matching = {f for f in source if compatible(f, family)}
        if family == "fraction" and "count" in source:
            matching.add("count")  # "0 of 924" against a measured rate
        return matching or ({family} if not source else set())
    return {f for f in source if f not in ("count", "number")}


def _measured_unit(claim: ClaimInfo, items: Sequence[StoredResult]) -> str | None:
    return next((item.claim.check.unit for item in items if item.claim.check.unit), None) or claim.unit


def _compare_unit(figure: Figure, claim: ClaimInfo, items: Sequence[StoredResult]) -> str | None:
    """The unit a figure and the measurement are compared in: the figure's own where it has one."""
    measured = _measured_unit(claim, items)
    if figure.kind == "count":
        return "ratio" if family_of(measured) == "fraction" else "count"
    if figure.unit is None:
        return measured
    return figure.unit


def agrees(figure: Figure, items: Sequence[StoredResult], claim: ClaimInfo) -> bool | None:
    """``True``/``False`` when the figure can be compared with the items, ``None`` when it cannot."""
    unit = _compare_unit(figure, claim, items)
    try:
        quoted = figure.interval(unit, tolerant=True)
    except UnitError:
        return None
    intervals = [iv for iv in (item_interval(item, unit, claim.unit) for item in items) if iv is not None]
    band = claim.stated_band(unit)
    if not intervals and band is None:
        return None
    if band is not None and quoted[0] <= band[1] and band[0] <= quoted[1]:
        return True
    if not intervals:
        return False
    if figure.is_range:
        low = min(iv[0] for iv in intervals)
        high = max(iv[1] for iv in intervals)
        return quoted[0] <= high and low <= quoted[1]
    return any(quoted[0] <= iv[1] and iv[0] <= quoted[1] for iv in intervals)


def measured_text(figure: Figure, items: Sequence[StoredResult], claim: ClaimInfo, machine_class: str) -> str:
    unit = _compare_unit(figure, claim, items)
    parts = []
    for item in items:
        interval = item_interval(item, unit, claim.unit)
        if interval is None:
            continue
        low, high, estimate = interval
        level = item.decision.confidence_level if item.decision is not None else None
        level_text = f" ({confidence_level(level)} interval)" if finite(level) and level < 1 else ""
        params = item.params
        where = f" at {', '.join(f'{k}={v}' for k, v in params.items())}" if params and len(items) > 1 else ""
        head = format_value(estimate, unit) + " " if estimate is not None else ""
        parts.append(f"{head}[{format_value(low, unit)}, {format_value(high, unit)}]{level_text}{where}")
    shown = "; ".join(parts[:3]) + ("; ..." if len(parts) > 3 else "")
    return f"measured {shown} on {machine_class}"
