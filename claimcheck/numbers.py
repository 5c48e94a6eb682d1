"""The one formatter for estimates, intervals, confidence levels and units.

Every layer (statistics reasons, pytest failures, reports, the docs gate) prints
numbers through these functions, so one figure never reads three ways.
"""

from __future__ import annotations

import math
from typing import TypeGuard

NO_SPACE_UNITS = frozenset({"×", "x", "%", "°"})


def finite(value: object) -> TypeGuard[float]:
    """A real, finite number (booleans are not numbers here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def decimals_for(*values: float | None, width: float | None = None) -> int:
    """Decimals that show an interval's width with two significant digits (one when it starts with 3-9)."""
    if width is None or not finite(width) or width <= 0:
        magnitudes = [abs(v) for v in values if v is not None and finite(v) and v != 0]
        if not magnitudes:
            return 0
        magnitude = math.floor(math.log10(min(magnitudes)))
        return max(0, min(6, 2 - magnitude))
    magnitude = math.floor(math.log10(width))
    leading = width / 10**magnitude
    extra = 1 if leading < 3 else 0
    return max(0, min(6, extra - magnitude))


def number(value: float | None, decimals: int | None = None) -> str:
    """A number for prose: fixed decimals when given, else up to four significant digits."""
    if value is None:
        return "—"
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if decimals is None:
        text = f"{value:.4g}"
        if "e" in text:
            text = f"{value:,.0f}" if abs(value) >= 1 else f"{value:.2e}"
        return text
    return f"{value:.{decimals}f}"


def with_unit(text: str, unit: str | None) -> str:
    """``text`` followed by its unit, with no space before ×, % and °."""
    if not unit:
        return text
    return f"{text}{unit}" if unit in NO_SPACE_UNITS else f"{text} {unit}"


def level(confidence_level: float) -> str:
    """``0.95`` -> ``"95%"``, ``0.9547`` -> ``"95.5%"``: whole percent when that is exact to 0.05 points."""
    percent = 100 * confidence_level
    if abs(percent - round(percent)) < 0.05:
        return f"{round(percent)}%"
    return f"{percent:.1f}%"


def parts(value: float | None, low: float | None, high: float | None) -> tuple[str, str, str]:
    """Estimate, low and high at the precision the interval's width supports (shared decimals)."""
    width = high - low if finite(low) and finite(high) else None
    places = decimals_for(value, low, high, width=width)
    return number(value, places), number(low, places), number(high, places)


def estimate(value: float, low: float, high: float, confidence_level: float, n: int, unit: str | None = None,
             label: str = "CI") -> str:
    """``0.41 [0.38, 0.44] (95% CI, n=24)``; a computed value (no interval) reads ``3.2 (computed, n=1)``."""
    if confidence_level >= 1.0 or (finite(low) and low == high):
        return f"{with_unit(number(value), unit)} (computed, n={n})"
    shown, lower, upper = parts(value, low, high)
    return f"{with_unit(shown, unit)} [{lower}, {upper}] ({level(confidence_level)} {label}, n={n})"


def percent(value: float, decimals: int = 1) -> str:
    """``0.1234`` -> ``"12.3%"``."""
    return f"{100 * value:.{decimals}f}%"


def apart(value: float, bound: float, *, as_percent: bool = False, decimals: int = 1) -> tuple[str, str]:
    """``value`` and ``bound`` printed with enough decimals that a comparison between them reads true.

    ``0.10004`` against ``0.10`` as percent reads ``10.004%`` and ``10%``, never ``10.0%`` exceeds ``10%``.
    The bound keeps the fewest decimals that show it exactly (up to the value's).
    """
    def show(number_: float, places: int) -> str:
        return percent(number_, places) if as_percent else f"{number_:.{places}f}"

    places = decimals
    while places < 12 and float(show(value, places).rstrip("%")) == float(show(bound, places).rstrip("%")) \
            and value != bound:
        places += 1
    bound_places = next((p for p in range(places + 1)
                         if float(show(bound, p).rstrip("%")) == float(show(bound, 12).rstrip("%"))), places)
    return show(value, places), show(bound, bound_places)


#: Units whose quantities are never negative (durations, sizes, rates of transfer, counts, shares).
NON_NEGATIVE_UNITS = frozenset({"s", "ms", "µs", "us", "ns", "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB",
                                "B/s", "KB/s", "MB/s", "GB/s", "TB/s", "GiB/s", "tok/s", "bytes", "count", "%", "×",
                                "x", "nat", "nats", "bit", "bits"})


def within_range(low: float | None, high: float | None, *, non_negative: bool) -> tuple[float | None, float | None]:
    """An interval intersected with the quantity's range: a duration or a rate is never below 0.

    Cutting an interval to the values the quantity can take keeps its coverage (the true value lies
    in that range), so a length reads ``0–1.2``, not ``-0.2–1.2``.
    """
    if non_negative:
        if low is not None and finite(low) and low < 0:
            low = 0.0
        if high is not None and finite(high) and high < 0:
            high = 0.0
    return low, high

