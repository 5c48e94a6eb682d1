"""A claim's history as small inline SVG charts: estimate and interval over runs, one series per machine class.

One chart per item of the claim that has an interval in some run: x is the run (in order of its
start, shared by every chart of the claim), y the figure, a vertical bar the interval in the
machine class's colour, the dot the estimate filled with its verdict's colour, and the claim's bound
(as the latest run states it) a grey band or a dashed line. The y axis turns logarithmic when every
value is positive and they span more than :data:`LOG_SPAN`. The SVG is built as text in pure Python
(no matplotlib), so a page with hundreds of claims stays small and fast; each dot carries a
``<title>`` tooltip with its run, class and figure. Every piece of text goes through :func:`html.escape`.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Callable, Sequence

from claimcheck.numbers import finite
from claimcheck.report import text
from claimcheck.report.canvas import COLOURS
from claimcheck.report.forest import tick_text
from claimcheck.store import StoredResult

#: Series colours by machine class, in the report's class order; none is a verdict colour (those fill the dots).
CLASS_COLOURS = ("#1565c0", "#00897b", "#6d4c41", "#37474f", "#7986cb", "#9e9d24", "#f06292")
BAND_GREY = "#d6d6d6"
#: The chart's size in SVG units (it scales down with the page) and its plot area's margins.
WIDTH, HEIGHT = 340, 176
LEFT, RIGHT, TOP, BOTTOM = 54, 12, 10, 36
#: Ratio of largest to smallest value above which the y axis is logarithmic.
LOG_SPAN = 30.0
#: At most this many run labels under the x axis (every k-th run beyond it).
RUN_LABELS = 7


@dataclass(frozen=True)
class _Point:
    x: int
    colour: str
    low: float
    high: float
    estimate: float
    verdict: str
    tip: str


@dataclass(frozen=True)
class _Axis:
    """Maps a figure to a y coordinate, linear or logarithmic, with its tick values."""

    low: float
    high: float
    log: bool

    def y(self, value: float) -> float:
        top, bottom = TOP, HEIGHT - BOTTOM
        if self.log:
            value = max(value, self.low)
            share = (math.log10(value) - math.log10(self.low)) / (math.log10(self.high) - math.log10(self.low))
        else:
            share = (value - self.low) / (self.high - self.low)
        return round(bottom - share * (bottom - top), 2)

    def ticks(self) -> list[float]:
        if self.log:
            first, last = math.floor(math.log10(self.low)), math.ceil(math.log10(self.high))
            steps = (1.0, 2.0, 5.0) if last - first <= 2 else (1.0,)
            found = [m * 10.0 ** k for k in range(first, last + 1) for m in steps]
        else:
            raw = (self.high - self.low) / 5
            power = 10.0 ** math.floor(math.log10(raw))
            step = next(m * power for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * power >= raw)
            start = math.ceil(self.low / step) * step
            found = [start + i * step for i in range(int((self.high - start) / step + 1e-9) + 1)]
        return [v for v in found if self.low <= v * (1 + 1e-12) and v <= self.high * (1 + 1e-12)]


def _axis(values: Sequence[float]) -> _Axis:
    """A y axis holding every value with a little room, logarithmic for a wide positive spread."""
    low, high = min(values), max(values)
    if low > 0 and high / low > LOG_SPAN:
        return _Axis(low / 1.25, high * 1.25, True)
    if high == low:
        pad = abs(high) * 0.1 or 1.0
        return _Axis(low - pad, high + pad, False)
    pad = (high - low) * 0.08
    return _Axis(low - pad if low < 0 or low - pad >= 0 else 0.0, high + pad, False)


def e(value: object) -> str:
    """Escape for element text and attribute values alike."""
    return html.escape("" if value is None else str(value), quote=True)


def _run_label(started: str) -> tuple[str, str]:
    """``("12-01", "17:52")`` from an ISO-8601 start (the year is in the table below the chart)."""
    day, _, time = started.partition("T")
    return day[5:10] or started[:10], time[:5]


def _bound(item: StoredResult, axis: _Axis, x0: float, x1: float) -> list[str]:
    """The claim's bound across the plot: a band between its ends, or a dashed line at its threshold."""
    bound = text.claimed(item)
    usable = (lambda v: v is not None and finite(v) and (v > 0 or not axis.log))
    if bound.kind == "band" and usable(bound.low) and usable(bound.high) and bound.high != bound.low:
        assert bound.low is not None and bound.high is not None
        top, bottom = axis.y(max(bound.low, bound.high)), axis.y(min(bound.low, bound.high))
        return [f'<rect x="{x0}" y="{top}" width="{x1 - x0}" height="{round(bottom - top, 2)}" fill="{BAND_GREY}">'
                f"<title>claimed: {e(bound.text)}</title></rect>"]
    line = bound.low if bound.kind == "band" else bound.line
    if usable(line):
        assert line is not None
        y = axis.y(line)
        return [f'<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#212121" stroke-width="1.2" '
                f'stroke-dasharray="5 3"><title>claimed: {e(bound.text)}</title></line>']
    return []


def _chart(rows: Sequence[StoredResult], runs: Sequence[tuple[str, str]],
           colour_of: Callable[[str], str]) -> str | None:
    """One item's SVG chart (its rows all have an interval), the claim's runs along x; None with nothing to draw."""
    latest = max(rows, key=lambda r: (r.run_started, r.run_id))
    at = {run: i for i, run in enumerate(runs)}
    points = []
    for row in rows:
        low, high = text.shown_bounds(row)
        estimate = text.statistic(row)
        if low is None or high is None or estimate is None:
            continue
        side = text.bound_side(row)  # one-sided: the bar runs from the estimate to the bound, not to the range's edge
        low, high = (estimate, high) if side == "upper" else (low, estimate) if side == "lower" else (low, high)
        tip = (f"{row.item_id} · {row.machine_class or 'no class'} · run {row.run_id} ({row.run_started[:16]}) · "
               f"{row.verdict.value} · {text.figure(row)}")
        points.append(_Point(at[(row.run_started, row.run_id)], colour_of(row.machine_class), min(low, estimate),
                             max(high, estimate), estimate, row.verdict.value, tip))
    if not points:
        return None
    bound = text.claimed(latest)
    values = [v for p in points for v in (p.low, p.high)]
    values += [v for v in (bound.low, bound.high) if v is not None and finite(v)]
    axis = _axis(values)
    x0, x1 = LEFT, WIDTH - RIGHT
    step = (x1 - x0) / len(runs)

    def x_of(index: int) -> float:
        return round(x0 + step * (index + 0.5), 2)

    out = [f'<svg class="history-chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
           f'role="img" aria-label="{e(latest.item_id)}: estimate and interval over {len(runs)} run(s)">']
    out += _bound(latest, axis, x0, x1)
    ticks = axis.ticks()
    for value in ticks:
        y = axis.y(value)
        out.append(f'<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#eeeeee"/><text x="{x0 - 4}" y="{y + 3}" '
                   f'text-anchor="end" font-size="10" fill="#616161">{e(tick_text(value, ticks))}</text>')
    out.append(f'<polyline points="{x0},{TOP} {x0},{HEIGHT - BOTTOM} {x1},{HEIGHT - BOTTOM}" fill="none" '
               'stroke="#9e9e9e"/>')
    every = max(1, math.ceil(len(runs) / RUN_LABELS))
    for index, (started, _) in enumerate(runs):
        if index % every:
            continue
        day, time = _run_label(started)
        out.append(f'<text x="{x_of(index)}" y="{HEIGHT - BOTTOM + 13}" text-anchor="middle" font-size="9.5" '
                   f'fill="#616161">{e(day)}<tspan x="{x_of(index)}" dy="11">{e(time)}</tspan></text>')
    for colour in dict.fromkeys(p.colour for p in points):
        series = sorted((p for p in points if p.colour == colour), key=lambda p: p.x)
        if len(series) > 1:
            joined = " ".join(f"{x_of(p.x)},{axis.y(p.estimate)}" for p in series)
            out.append(f'<polyline points="{joined}" fill="none" stroke="{colour}" stroke-width="1" opacity="0.6"/>')
    for p in points:
        x, top, bottom = x_of(p.x), axis.y(p.high), axis.y(p.low)
        caps = "".join(f'<line x1="{x - 4}" y1="{end}" x2="{x + 4}" y2="{end}" stroke="{p.colour}" stroke-width="1.5"/>'
                       for end in (top, bottom))
        out.append(f'<g><title>{e(p.tip)}</title>'
                   f'<line x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="{p.colour}" stroke-width="2.5"/>{caps}'
                   f'<circle cx="{x}" cy="{axis.y(p.estimate)}" r="4.2" fill="{COLOURS.get(p.verdict, "#000000")}" '
                   f'stroke="{p.colour}" stroke-width="1.5"/></g>')
    out.append("</svg>")
    return "".join(out)


def _key(classes: Sequence[str], colour_of: Callable[[str], str], verdicts: Sequence[str], bounds: set[str]) -> str:
    """The legend shared by a claim's charts: class colours, verdict dots and the claim's mark."""
    keys = [f'<span><svg width="18" height="12" aria-hidden="true"><line x1="1" y1="6" x2="17" y2="6" '
            f'stroke="{colour_of(k)}" stroke-width="2.5"/></svg>{e(k or "no class")}</span>' for k in classes]
    keys += [f'<span><svg width="12" height="12" aria-hidden="true"><circle cx="6" cy="6" r="4.2" '
             f'fill="{COLOURS.get(v, "#000000")}"/></svg>{e(v)}</span>' for v in verdicts]
    if "band" in bounds:
        keys.append(f'<span><svg width="18" height="12" aria-hidden="true"><rect x="1" y="1" width="16" height="10" '
                    f'fill="{BAND_GREY}"/></svg>claimed band</span>')
    if "line" in bounds:
        keys.append('<span><svg width="18" height="12" aria-hidden="true"><line x1="1" y1="6" x2="17" y2="6" '
                    'stroke="#212121" stroke-width="1.2" stroke-dasharray="5 3"/></svg>claimed threshold</span>')
    return f'<div class="chart-key">{"".join(keys)}</div>'


def history_charts(rows: Sequence[StoredResult], classes: Sequence[str]) -> list[str]:
    """HTML for a claim's history: a legend and one chart per item with an interval; nothing when none has one.

    Args:
        rows: every stored item of the claim across runs and machine classes.
        classes: the report's machine classes, in its order, so a class keeps its colour on every chart.
    """
    shown = [row for row in rows if text.has_interval(row)]
    if not shown:
        return []
    palette = {k: CLASS_COLOURS[i % len(CLASS_COLOURS)] for i, k in enumerate(classes)}
    extra = sorted({r.machine_class for r in shown} - set(palette))
    palette.update({k: CLASS_COLOURS[(len(palette) + i) % len(CLASS_COLOURS)] for i, k in enumerate(extra)})
    runs = sorted({(r.run_started, r.run_id) for r in shown})
    by_item: dict[str, list[StoredResult]] = {}
    for row in sorted(shown, key=lambda r: r.item_id):
        by_item.setdefault(row.item_id, []).append(row)
    present = [k for k in palette if any(r.machine_class == k for r in shown)]
    verdicts = [v for v in COLOURS if any(r.verdict.value == v for r in shown)]
    bounds = set()
    for item_rows in by_item.values():
        bound = text.claimed(max(item_rows, key=lambda r: (r.run_started, r.run_id)))
        bounds.add("band" if bound.kind == "band" and bound.high is not None and bound.high != bound.low
                   else "line" if (bound.low if bound.kind == "band" else bound.line) is not None else "")
    out = [_key(present, palette.__getitem__, verdicts, bounds), '<div class="charts">']
    for item_id, item_rows in by_item.items():
        chart = _chart(item_rows, runs, palette.__getitem__)
        if chart is None:
            continue
        unit = text.unit(item_rows[-1])
        caption = f"<code>{e(item_id)}</code>" + (f' <span class="muted">({e(unit)})</span>' if unit else "")
        out.append(f'<figure class="history">{chart}<figcaption>{caption}</figcaption></figure>')
    out.append("</div>")
    return out
