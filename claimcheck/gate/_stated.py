"""Two-sided agreement of a doc figure: with the claim's own stated figure, and with what was measured.

A figure that merely lies on the claimed side of a threshold says nothing about whether it is
right: "30x" and "1000x" both clear "at least 10x". So a figure in an anchored sentence is read
as an interval (its printed precision, one-sided where the prose says "at least", "under"...)
and must overlap the claim's stated figure (``source.figure``, read the same way; a bare number
there takes the claim's unit) and, where this suite measured the claim, the measured interval.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Sequence

from claimcheck import rules
from claimcheck.figures import Figure, UnitError, compatible, convert, family_of, format_value, parse_figures
from claimcheck.store import StoredResult

from ._agreement import item_interval
from ._model import ClaimInfo

Interval = tuple[float, float]

_AT_LEAST = re.compile(r"(?:≥|>=|>|⩾|\bat least|\bmore than|\bover|\babove|\bexceeds?|\bno less than|\bbeyond)"
                       r"[\s*_~≈]*$", re.I)
_AT_MOST = re.compile(r"(?:≤|<=|<|⩽|\bat most|\bless than|\bunder|\bbelow|(?<!\badd )(?<!\badds )(?<!\badded )\bup to"
                      r"|\bno more than|\bwithin)"
                      r"[\s*_~≈]*$", re.I)


def bound_side(text: str, figure: Figure) -> str | None:
    """``"min"`` when the prose before ``figure`` makes it a lower bound, ``"max"`` for an upper one."""
    before = text[max(0, figure.start - 24):figure.start]
    if _AT_LEAST.search(before):
        return "min"
    if _AT_MOST.search(before):
        return "max"
    return None


def read_interval(figure: Figure, text: str, unit: str | None) -> Interval:
    """The values a figure, as written in ``text``, allows in ``unit`` (printed precision; bounds one-sided).

    Raises:
        UnitError: the figure does not convert to ``unit``.
    """
    if figure.kind == "count" and figure.count_of is None and unit in (None, "count"):
        low, high = figure.low, figure.high
    else:
        low, high = figure.interval(unit, tolerant=True)
    side = bound_side(text, figure)
    if side is not None and figure.kind != "count":
        exact = figure.interval(unit)  # a bound is the number as written: "≥ 2" excludes 1.5
        return (exact[0], math.inf) if side == "min" else (-math.inf, exact[1])
    return low, high


def overlaps(a: Interval, b: Interval) -> bool:
    """Whether two closed intervals share a point (with a hair of floating-point slack)."""
    slack = 1e-9 * max(1.0, *(abs(v) for v in (*a, *b) if math.isfinite(v)))
    return a[0] <= b[1] + slack and b[0] <= a[1] + slack


def fits(quoted: Interval, allowed: Interval, figure: Figure, text: str) -> bool:
    """Whether a doc figure agrees with an allowed interval: a value overlaps it, a range lies inside it.

    A range ("64–88%") states every value between its ends, so both ends, as printed, must lie in
    the allowed band (already widened by the stated figure's printed precision); overlapping the
    band is not agreeing with it. "About" ranges keep their 10% slack.
    """
    if not (figure.kind == "range" and bound_side(text, figure) is None):
        return overlaps(quoted, allowed)
    try:
        exact = figure.interval(_unit_for(figure))
    except UnitError:
        return overlaps(quoted, allowed)
    slack = 0.1 * max(abs(exact[0]), abs(exact[1])) if figure.approx else 0.0
    return overlaps((exact[0], exact[0]), (allowed[0] - slack, allowed[1] + slack)) and overlaps(
        (exact[1], exact[1]), (allowed[0] - slack, allowed[1] + slack))


def stated_figures(claim: ClaimInfo) -> list[Figure]:
    """The claim's ``source.figure`` as figures; where none carries a unit ("≥ 2"), a bare number is in the claim's."""
    figures = parse_figures(claim.figure)
    if any(f.unit is not None for f in figures) or not claim.unit:
        return figures
    return [dataclasses.replace(f, unit=claim.unit) if f.kind != "count" else f for f in figures]


def rule_interval(claim: ClaimInfo, unit: str | None) -> Interval | None:
    """What the claim's check itself claims, in ``unit``: a band, or a one-sided bound."""
    if claim.check is None or claim.check.rule not in rules.names():
        return None
    try:
        claimed = rules.get(claim.check.rule).claimed(claim.check)
        low = -math.inf if claimed.low is None else float(claimed.low)
        high = math.inf if claimed.high is None else float(claimed.high)
        if claimed.kind == "min":
            high = math.inf
        elif claimed.kind == "max":
            low = -math.inf
        elif claimed.kind != "band":
            return None
        return convert(low, claim.unit, unit), convert(high, claim.unit, unit)
    except (KeyError, TypeError, ValueError):
        return None


_VERSUS_RE = re.compile(r"^[\s*_]*(?:vs\.?|versus|against|over)[\s*_~≈]*$", re.I)


def stated_ratios(claim: ClaimInfo) -> list[Interval]:
    """Ratios the stated figure implies by comparing two figures of one unit ("6.18 vs 4.01 ms" is 1.54x).

    Each is an interval from the two figures' printed precision, either way round.
    """
    figures = parse_figures(claim.figure)
    out: list[Interval] = []
    for left, right in zip(figures, figures[1:]):
        if left.is_range or right.is_range or left.kind == "count" or right.kind == "count":
            continue
        if not _VERSUS_RE.match(claim.figure[left.end:right.start]) or (left.unit or right.unit) is None:
            continue
        target = right.unit or left.unit  # "6.18 vs 4.01 ms": the bare one shares its neighbour's unit
        try:
            a = left.interval(target if left.unit else None, tolerant=True)
            b = right.interval(target if right.unit else None, tolerant=True)
        except UnitError:
            continue
        if min(a[0], b[0]) <= 0:
            continue
        out += [(a[0] / b[1], a[1] / b[0]), (b[0] / a[1], b[1] / a[0])]
    return out


def _unit_for(figure: Figure) -> str | None:
    if figure.kind == "count" and figure.count_of is not None:
        return "ratio"
    if figure.kind == "count":
        return "count"
    return figure.unit


def comparable(figure: Figure, claim: ClaimInfo) -> bool:
    """Whether the figure is in a unit the claim states or measures (context such as "at 128 MiB" is not)."""
    if figure.unit is None and figure.kind != "count":
        return False
    family = "fraction" if figure.kind == "count" and figure.count_of is not None else figure.family
    families = {family_of(_unit_for(f)) for f in stated_figures(claim)}
    if claim.unit:
        families.add(family_of(claim.unit))
    elif claim.check is not None:
        families.add("fraction")  # a check with no unit measures a plain number: a ratio ("854x" the ceiling)
    if figure.kind == "count" and figure.count_of is None:
        return "count" in families
    return any(compatible(family, other) for other in families if other)


@dataclass(frozen=True)
class Stated:
    """The stated figure a doc figure was compared with, and whether they agree."""

    agrees: bool | None  # None: the claim states nothing in a unit the figure converts to
    text: str


def against_stated(figure: Figure, text: str, claim: ClaimInfo) -> Stated:
    """Whether ``figure`` (written in ``text``) agrees with one of the claim's stated figures."""
    unit = _unit_for(figure)
    try:
        quoted = read_interval(figure, text, unit)
    except UnitError:
        return Stated(None, claim.figure)
    compared = False
    band = rule_interval(claim, unit)
    counts = [s for s in stated_figures(claim) if s.kind == "count" and s.count_of is not None]
    if figure.kind == "count" and figure.count_of is not None and counts:
        if not any(s.count_of == figure.count_of for s in counts):
            return Stated(False, claim.figure)  # "N of M" compares M exactly: "10 of 22" is not "10 of 21"
    if band is not None and math.isfinite(band[0]) and math.isfinite(band[1]) and fits(quoted, band, figure, text):
        return Stated(True, claim.figure)  # expected ± tolerance, an equivalence margin: the claim's own band
    for stated in stated_figures(claim):
        if stated.unit is None and stated.kind != "count":
            continue  # a bare number in a figure that has units elsewhere is of no known unit
        if figure.kind == "count" and stated.kind == "count" and None not in (figure.count_of, stated.count_of) \
                and figure.count_of != stated.count_of:
            compared = True
            continue  # "3 of 900" is not "3 of 924"
        try:
            allowed = read_interval(stated, claim.figure, unit)
        except UnitError:
            continue
        compared = True
        if fits(quoted, allowed, figure, text):
            return Stated(True, claim.figure)
    if not compared:
        ratios = stated_ratios(claim)
        if ratios and family_of(unit) == "fraction":
            try:
                shown = [(convert(low, "ratio", unit), convert(high, "ratio", unit)) for low, high in ratios]
            except UnitError:
                shown = []
            if shown:
                return Stated(any(fits(quoted, r, figure, text) for r in shown), claim.figure)
        if band is not None:
            return Stated(fits(quoted, band, figure, text), claim.figure or "(no figure)")
    return Stated(False if compared else None, claim.figure)


def item_is_computed(items: Sequence[StoredResult]) -> bool:
    """Whether every item is a deterministic computation (its value is exact; no tolerance widens it)."""
    return bool(items) and all(item.result.deterministic for item in items)


def _tolerance(claim: ClaimInfo, unit: str | None) -> float:
    """An exact check's tolerance in ``unit``: the rounding the claim grants the printed figure."""
    tolerance = claim.check.params.get("tolerance") if claim.check is not None else None
    if claim.rule != "exact" or not isinstance(tolerance, (int, float)):
        return 0.0
    try:
        return abs(convert(float(tolerance), claim.unit, unit) - convert(0.0, claim.unit, unit))
    except UnitError:
        return 0.0


@dataclass(frozen=True)
class Measured:
    """The measured interval a doc figure was compared with, and whether they agree."""

    agrees: bool | None  # None: nothing measured in a unit the figure converts to
    text: str  # "11.2x [10.6x, 11.9x] n=24"
    estimate: float | None = None  # the nearest item's estimate, in the figure's unit: what to write instead


def against_measured(figure: Figure, text: str, items: Sequence[StoredResult], claim: ClaimInfo) -> Measured:
    """Whether ``figure`` is consistent with the measured interval of some item (a range: of the items' span)."""
    unit = _unit_for(figure)
    if unit == "count":
        return Measured(None, "")
    try:
        quoted = read_interval(figure, text, unit)
    except UnitError:
        return Measured(None, "")
    found: list[tuple[float, float, float | None, int, str]] = []
    slack = _tolerance(claim, unit)
    for item in items:
        interval = item_interval(item, unit, claim.unit)
        if interval is not None:
            low, high, estimate = interval
            if item_is_computed([item]):  # the claim's rounding, never an equivalence margin wider than 2%
                slack = min(_tolerance(claim, unit), 0.02 * max(abs(low), abs(high)))
            where = ", ".join(f"{k}={v}" for k, v in item.params.items()) if len(items) > 1 else ""
            found.append((low - slack, high + slack, estimate, item.decision.n if item.decision is not None else 0,
                          f" at {where}" if where else ""))
    if not found:
        return Measured(None, "")
    shown = "; ".join(f"{format_value(est, unit) + ' ' if est is not None else ''}"
                      f"[{format_value(low, unit)}, {format_value(high, unit)}] n={n}{where}"
                      for low, high, est, n, where in found[:3]) + ("; ..." if len(found) > 3 else "")
    middle = (quoted[0] + quoted[1]) / 2 if all(map(math.isfinite, quoted)) else None
    estimates = [f[2] for f in found if f[2] is not None]
    nearest = min(estimates, key=lambda v: abs(v - middle)) if estimates and middle is not None else \
        (estimates[0] if estimates else None)
    if figure.is_range:
        span = (min(f[0] for f in found), max(f[1] for f in found))
        # a range contradicts the measured span only when apart from it
        return Measured(overlaps(quoted, span), shown, nearest)
    return Measured(any(overlaps(quoted, (f[0], f[1])) for f in found), shown, nearest)
