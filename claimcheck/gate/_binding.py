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
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Sequence

from claimcheck.figures import Figure, parse_figures
from claimcheck.store import StoredResult

from ._model import ClaimInfo
from ._stated import Measured, Stated, against_measured, against_stated, comparable

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
    elif isinstance(value, str):
        for figure in parse_figures(value):
            yield from {figure.low, figure.high}
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from _numbers(key)
            yield from _numbers(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _numbers(inner)


def inputs_of(claim: ClaimInfo, items: Sequence[StoredResult]) -> list[float]:
    """The numbers a claim's arithmetic uses: its items' probe parameters (printed inputs, grid points)."""
    del claim
    found: list[float] = []
    for item in items:
        found.extend(_numbers(dict(item.params)))
    return found


def readings_of(claim: ClaimInfo) -> list[float]:
    """The numbers the claim's source figure prints ("(0.79) equals … (0.77)"): a bare figure may quote one."""
    found: list[float] = []
    for figure in parse_figures(claim.figure):
        found.extend({figure.low, figure.high})
    return found


def is_input(figure: Figure, inputs: Sequence[float]) -> bool:
    """The figure, as printed (its own precision), is one of the inputs; a count "N of M" never is."""
    if figure.kind == "count" and figure.count_of is not None:
        return False
    half = figure.rounding + 1e-9 * max(1.0, abs(figure.low), abs(figure.high))
    return all(any(abs(end - value) <= half for value in inputs) for end in {figure.low, figure.high})


def as_ratio(figure: Figure) -> Figure:
    """A bare number read as a ratio ("0.64" beside a claim in %)."""
    return dataclasses.replace(figure, unit="x")


def bind(figure: Figure, text: str, claim: ClaimInfo, items: Sequence[StoredResult], *,
         corrected: bool = False, inputs: Sequence[float] = ()) -> Binding:
    """Bind one figure of an anchored sentence (written in ``text``) to what ``claim`` states, measured or used.

    ``corrected``: the sentence stands under a correction (a banner, a strike-through, a correction
    paragraph), so it may quote the overturned figure or the measured one: agreeing with either binds it.
    """
    if comparable(figure, claim):
        return _compare(figure, text, claim, items, corrected, inputs, "stated")
    if is_input(figure, [*inputs, *readings_of(claim)]):
        return Binding(figure, "verified", "input")
    if figure.unit is None and figure.kind in ("value", "range") and comparable(as_ratio(figure), claim):
        return _compare(as_ratio(figure), text, claim, items, corrected, inputs, "ratio")
    return Binding(figure, "not-compared", "not in a unit the claim states or measures, nor one of its inputs")


def _compare(figure: Figure, text: str, claim: ClaimInfo, items: Sequence[StoredResult], corrected: bool,
             inputs: Sequence[float], how: str) -> Binding:
    stated = against_stated(figure, text, claim)
    measured = against_measured(figure, text, items, claim)
    agreed = stated.agrees is True or measured.agrees is True
    if corrected:
        if agreed or (inputs and is_input(figure, inputs)):
            return Binding(figure, "verified", how, stated, measured)
        if stated.agrees is None and measured.agrees is None:
            return Binding(figure, "not-compared", "nothing stated or measured in its unit", stated, measured)
        return Binding(figure, "disagrees", how, stated, measured)
    if stated.agrees is False or measured.agrees is False:
        if inputs and is_input(figure, inputs) and not (figure.kind == "count" and figure.count_of is not None):
            return Binding(figure, "verified", "input", stated, measured)
        return Binding(figure, "disagrees", how, stated, measured)
    if agreed:
        return Binding(figure, "verified", how, stated, measured)
    if inputs and is_input(figure, inputs):
        return Binding(figure, "verified", "input", stated, measured)
    return Binding(figure, "not-compared", "nothing stated or measured in its unit", stated, measured)
