"""Units and their families: what a figure is measured in, and conversion within one family."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """A unit spelling's meaning: its family and the factor to the family's base unit."""

    symbol: str  # canonical spelling, e.g. "µs", "GB/s", "%"
    family: str  # "time" | "bandwidth" | "size" | "throughput" | "fraction" | "information" | "count" | "number"
    factor: float  # value in this unit x factor = value in the family's base unit
    higher_is_better: bool | None = None


BASE_UNITS = {
    "time": "s",
    "bandwidth": "B/s",
    "size": "B",
    "throughput": "tok/s",
    "fraction": "ratio",
    "information": "nat",
    "count": "count",
    "number": "",
}

_KI, _MI, _GI, _TI = 2.0**10, 2.0**20, 2.0**30, 2.0**40


def _units() -> dict[str, Unit]:
    table: dict[str, Unit] = {}

    def add(symbol: str, family: str, factor: float, *spellings: str, better: bool | None = None) -> None:
        unit = Unit(symbol, family, factor, better)
        for spelling in (symbol, *spellings):
            table[spelling] = unit

    add("s", "time", 1.0, "sec", "secs", "seconds", better=False)
    add("ms", "time", 1e-3, "msec", better=False)
    add("µs", "time", 1e-6, "μs", "us", "usec", better=False)
    add("ns", "time", 1e-9, better=False)
    for prefix, decimal, binary in (("K", 1e3, _KI), ("M", 1e6, _MI), ("G", 1e9, _GI), ("T", 1e12, _TI)):
        add(f"{prefix}B/s", "bandwidth", decimal, *(["kB/s"] if prefix == "K" else []), better=True)
        add(f"{prefix}iB/s", "bandwidth", binary, better=True)
        add(f"{prefix}B", "size", decimal, *(["kB"] if prefix == "K" else []))
        add(f"{prefix}iB", "size", binary)
    add("B/s", "bandwidth", 1.0, better=True)
    add("bytes", "size", 1.0, "byte", "B")
    add("tok/s", "throughput", 1.0, "tokens/s", "token/s", "tok/sec", "tokens/sec", "t/s", better=True)
    add("%", "fraction", 0.01)
    add("x", "fraction", 1.0, "×")
    add("ratio", "fraction", 1.0, "rate", "fraction", "1")
    add("nat", "information", 1.0, "nats")
    add("bit", "information", math.log(2.0), "bits")
    add("count", "count", 1.0)
    return table


UNITS: dict[str, Unit] = _units()
NUMBER_UNIT = Unit("", "number", 1.0)


class UnitError(ValueError):
    """Two units cannot be compared (different families) or a spelling is unknown."""


def split_per(spelling: str) -> tuple[str, str | None]:
    """``"ms/tok"`` -> ``("ms", "tok")``; units whose own spelling has a slash stay whole."""
    spelling = spelling.strip()
    if spelling in UNITS or "/" not in spelling:
        return spelling, None
    head, _, per = spelling.rpartition("/")
    if head in UNITS:
        return head, per
    return spelling, None


def unit_of(spelling: str | None) -> Unit | None:
    """The :class:`Unit` for a spelling (``"GiB"``, ``"µs/op"``, ``"%"``); ``None`` if unknown.

    ``None``/``""`` mean a bare number (family ``number``).
    """
    if spelling is None or not spelling.strip():
        return NUMBER_UNIT
    head, _ = split_per(spelling)
    return UNITS.get(head)


def family_of(spelling: str | None) -> str | None:
    unit = unit_of(spelling)
    return unit.family if unit else None


def compatible(family_a: str | None, family_b: str | None) -> bool:
    """Families that convert into each other: equal ones, and bare numbers with fractions."""
    if family_a is None or family_b is None:
        return False
    return family_a == family_b or {family_a, family_b} == {"number", "fraction"}


def convert(value: float, from_unit: str | None, to_unit: str | None) -> float:
    """Convert ``value`` between two units of one family (``0.448 GiB`` -> ``0.481 GB``)."""
    source, target = unit_of(from_unit), unit_of(to_unit)
    if source is None or target is None:
        raise UnitError(f"unknown unit {from_unit if source is None else to_unit!r}")
    if not compatible(source.family, target.family):
        raise UnitError(f"cannot convert {source.symbol or 'a bare number'} ({source.family}) "
                        f"to {target.symbol or 'a bare number'} ({target.family})")
    if math.isinf(value):
        return value
    return value * source.factor / target.factor


def format_value(value: float | None, unit: str | None = None) -> str:
    """A readable number with its unit: ``41%``, ``268 GB/s``, ``0.41``, ``-inf``."""
    if value is None:
        return "?"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    text = f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    if "e" in text:
        text = f"{value:.3e}"
    symbol = (known.symbol if (known := unit_of(unit)) else unit) or ""
    if symbol in ("", "ratio", "count"):
        return text
    if symbol == "%":
        return f"{text}%"
    if symbol == "x":
        return f"{text}x"
    return f"{text} {unit}"
