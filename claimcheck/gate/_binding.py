"""What each figure of an anchored sentence is bound to: the claim's stated figure, its measured result, or an input.

A sentence anchored to a claim can quote the claim's figure, the value its run measured, or the
inputs its arithmetic uses ("4.06 ms over 2.58 ms"). Every figure of the anchor's share gets one
:class:`Binding`: *verified* (it agrees with one of those, two-sided where it is the claim's own
figure), *disagrees* (an error), or *not compared* (nothing the claim states, measured or used is
in a form the figure can be compared with: reported, never counted as verified). A bare number
("0.54") beside a claim in % or x is read as a ratio; an ``x`` figure beside a claim whose run
measured a unitless ratio is compared with that ratio.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Sequence

from claimcheck.figures import Figure, UnitError, convert, family_of, parse_figures
from claimcheck.store import StoredResult

from ._model import ClaimInfo
from ._stated import Measured, Stated, against_measured, against_stated, comparable

_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
Status = Literal["verified", "disagrees", "not-compared"]


@dataclass(frozen=True)
class Binding:
    """One figure's verdict against one claim, with what it was compared with (for the message)."""

    figure: Figure
    status: Status
    how: str  # "stated", "measured", "input", "ratio", or why it was not compared
    stated: Stated | None = None
    measured: Measured | None = None


def _numbers(value: Any) -> Iterable[float]:
    """Every number in a probe parameter: plain numbers, lists, mappings, and figures written in strings."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield float(value)
    elif isinstance(value, str):  # a reading's label ("e4b-600", "3.6 - 1.2 - 1.7"): every number it names
        for number in _NUMBER_RE.findall(value):
            yield float(number)
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from _numbers(key)
            yield from _numbers(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _numbers(inner)
        terms = [v for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(terms) > 1:
            yield float(sum(terms))  # a sum_of reading's result


def inputs_of(claim: ClaimInfo, items: Sequence[StoredResult]) -> list[float]:
    """The numbers a claim's arithmetic uses: its items' probe parameters (printed inputs, grid points), unsigned."""
    del claim
    found: list[float] = []
    for item in items:
        found.extend(abs(v) for v in _numbers(dict(item.params)))
    return found


def derived_of(inputs: Sequence[float], items: Sequence[StoredResult]) -> list[float]:
    """One step of arithmetic on the inputs and the items' values: sums, differences and ratios (also in %).

    A correction paragraph shows its working ("0.7 ms of 18.9 (3.7%)"); only there are such steps bound.
    """
    estimates = {float(i.decision.statistic) for i in items
                 if i.decision is not None and math.isfinite(i.decision.statistic)}
    values = sorted({*inputs, *estimates})[:60]
    found: list[float] = []
    for a in values:
        for b in values:
            if a != b and b:
                found += [100 * a / b, 100 * abs(a / b - 1)]  # a share or a change, in %
            if a in estimates and a != b:
                found.append(abs(a - b))  # how far a computed value is from a printed one
    return found


def readings_of(claim: ClaimInfo, bare: bool = False) -> list[float]:
    """The numbers the claim's source figure prints ("(0.79) equals … (0.77)"): a figure may quote one.

    ``bare``: only its numbers without a unit (readings the check's own unit does not describe).
    """
    found: list[float] = []
    for figure in parse_figures(claim.figure):
        if not bare or (figure.unit is None and figure.kind != "count"):
            found.extend({figure.low, figure.high})
    return found


def is_input(figure: Figure, inputs: Sequence[float], units: Sequence[str] = ()) -> bool:
    """The figure, as printed (its own precision), is one of the inputs; a count "N of M" never is.

    ``units``: the units the source printed its inputs in ("250 GB/s"); a figure in another unit of
    that family ("0.25 TB/s") is compared in each, keeping its own precision.
    """
    if figure.kind == "count" and figure.count_of is not None:
        return False
    half = figure.rounding + 1e-9 * max(1.0, abs(figure.low), abs(figure.high))
    scales = [1.0]
    if figure.unit in ("%", "x"):  # an input printed as a share may be quoted as a ratio, or the other way
        scales += [100.0, 0.01]
    for unit in units:
        try:
            factor = convert(1.0, figure.unit, unit)
        except UnitError:
            continue
        if factor != 1.0:
            converted = dataclasses.replace(figure, low=figure.low * factor, high=figure.high * factor, unit=unit)
            if _matches(converted, inputs, [1.0], half * abs(factor)):
                return True
    return _matches(figure, inputs, scales, half)


def _matches(figure: Figure, inputs: Sequence[float], scales: Sequence[float], half: float) -> bool:
    return any(all(any(abs(end - value * scale) <= half for value in inputs)
                   for end in {figure.low, figure.high}) for scale in scales)


def as_ratio(figure: Figure) -> Figure:
    """A bare number read as a ratio ("0.64" beside a claim in %)."""
    return dataclasses.replace(figure, unit="x")


def bind(figure: Figure, text: str, claim: ClaimInfo, items: Sequence[StoredResult], *,
         corrected: bool = False, inputs: Sequence[float] = ()) -> Binding:
    """Bind one figure of an anchored sentence (written in ``text``) to what ``claim`` states, measured or used.

    ``corrected``: the sentence stands under a correction (a banner, a strike-through, a correction
    paragraph), so it may quote the overturned figure or the measured one: agreeing with either binds it.
    """
    if _counts_in_claim_unit(figure, claim):
        return _compare_count(figure, claim, items)
    if comparable(figure, claim):
        return _compare(figure, text, claim, items, corrected, inputs, "stated")
    if is_input(figure, [*inputs, *readings_of(claim), *(derived_of(inputs, items) if corrected else [])]):
        return Binding(figure, "verified", "input")
    if figure.unit is None and figure.kind in ("value", "range") and comparable(as_ratio(figure), claim):
        return _compare(as_ratio(figure), text, claim, items, corrected, inputs, "ratio")
    return Binding(figure, "not-compared", "not in a unit the claim states or measures, nor one of its inputs")


def _compare(figure: Figure, text: str, claim: ClaimInfo, items: Sequence[StoredResult], corrected: bool,
             inputs: Sequence[float], how: str) -> Binding:
    stated = against_stated(figure, text, claim)
    measured = against_measured(figure, text, items, claim)
    agreed = stated.agrees is True or measured.agrees is True
    units = [f.unit for f in parse_figures(claim.figure) if f.unit]
    if _computed_input_only(figure, claim, items) and not is_input(figure, [*inputs, *readings_of(claim)], units):
        # a computed claim's figure in another unit than its result ("250 GB/s" beside a % claim) is one
        # of its printed inputs, exactly, or it is wrong: the source's "~250–295 GB/s" is no licence for 260
        return Binding(figure, "disagrees", "input", stated, measured)
    if corrected:
        # a correction quotes the source's own figure (a reading), the value computed, an input, or one
        # step of arithmetic from the computed value; agreeing with an approximate stated band is not enough
        if measured.agrees is True or is_input(figure, [*inputs, *readings_of(claim), *derived_of(inputs, items)]):
            return Binding(figure, "verified", how, stated, measured)
        if stated.agrees is None and measured.agrees is None:
            return Binding(figure, "not-compared", "nothing stated or measured in its unit", stated, measured)
        return Binding(figure, "disagrees", how, stated, measured)
    if stated.agrees is False or measured.agrees is False:
        if is_input(figure, [*inputs, *readings_of(claim, bare=True)], [f.unit for f in parse_figures(claim.figure) if f.unit]):
            return Binding(figure, "verified", "input", stated, measured)
        return Binding(figure, "disagrees", how, stated, measured)
    if agreed:
        return Binding(figure, "verified", how, stated, measured)
    if inputs and is_input(figure, inputs):
        return Binding(figure, "verified", "input", stated, measured)
    return Binding(figure, "not-compared", "nothing stated or measured in its unit", stated, measured)


def _counts_in_claim_unit(figure: Figure, claim: ClaimInfo) -> bool:
    """A count whose noun is the claim's own unit ("6 positions" beside a claim measured in positions)."""
    noun = (figure.noun or "").split(" ")[0].lower()
    return figure.kind == "count" and figure.count_of is None and bool(noun) and bool(claim.unit) and \
        noun.rstrip("s") == str(claim.unit).lower().rstrip("s")


def _compare_count(figure: Figure, claim: ClaimInfo, items: Sequence[StoredResult]) -> Binding:
    """The count against what the claim's items computed or measured, to the unit (counts are whole)."""
    values = [(float(i.decision.low), float(i.decision.high), float(i.decision.statistic)) for i in items
              if i.decision is not None and math.isfinite(i.decision.statistic)]
    if not values:
        return Binding(figure, "not-compared", "nothing measured in its unit")
    agrees = any((low if math.isfinite(low) else est) - 0.5 <= figure.low <= (high if math.isfinite(high) else est) + 0.5
                 for low, high, est in values)
    shown = "; ".join(f"{est:g} {claim.unit}" for _, _, est in values[:3])
    return Binding(figure, "verified" if agrees else "disagrees", "count",
                   measured=Measured(agrees, shown, values[0][2]))


def _computed_input_only(figure: Figure, claim: ClaimInfo, items: Sequence[StoredResult]) -> bool:
    """A figure beside a computed claim in a unit family other than the claim's result: it can only be an input."""
    if not items or not all(item.result.deterministic for item in items) or not claim.unit:
        return False
    if figure.unit is None or figure.kind == "count":
        return False
    family = figure.family
    return family_of(claim.unit) not in (family, None) and not {family, family_of(claim.unit)} <= {"fraction", "number"}
