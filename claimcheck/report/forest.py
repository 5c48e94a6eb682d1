"""The forest plot: every decided figure with its interval against what its claim asserts.

Figures share an x axis only when they are the same kind of number: ratios share one log axis (a
ratio of 0.25 and one of 98 are both readable, and an equivalence band ``[1/(1+m), 1+m]`` sits
symmetric around 1), rates share one axis from 0, differences between levels (ordering, monotone)
share one axis per unit and order of magnitude with the claimed "no difference" line at 0, and
every other figure is grouped by unit and order of magnitude. Item ids sit on the left and the
printed figures in a column of their own on the right, both inside the figure, so nothing is clipped.

A report draws one picture per claims pack, laid out by :mod:`claimcheck.report.forest_pages`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from claimcheck.numbers import finite
from claimcheck.outcome import figure_of
from claimcheck.report import text
from claimcheck.report.canvas import COLOURS, new_figure, png_bytes
from claimcheck.store import StoredResult

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes

BAND_GREY = "#bdbdbd"
LONGEST_LABEL = 64
#: A label or note longer than this goes on two lines (a row is tall enough for two).
WRAP_AT = 52
#: Heights in inches: a row, a panel's title and axis, the legend on top.
ROW_IN, PANEL_IN, LEGEND_IN = 0.3, 0.9, 1.2
#: A row's height in a panel where some item id takes two lines.
TALL_ROW_IN = 0.42
#: Width of the axes in inches, so that with labels and notes a picture fits a page about 1,250 px wide.
PLOT_IN = 5.4


@dataclass(frozen=True)
class Panel:
    """Rows that share one honest x axis."""

    kind: str  # "ratio" (log axis) | "relative" (computed / claimed) | "rate" | "order" | "value"
    unit: str
    decade: int | None
    rows: tuple[StoredResult, ...]
    continued: bool = False  # the rest of a panel split over two pictures

    @property
    def row_height(self) -> float:
        """Inches per row: taller when an item id is on two lines, so neighbouring labels never touch."""
        return TALL_ROW_IN if any("\n" in _label(row.item_id) for row in self.rows) else ROW_IN

    @property
    def height(self) -> float:
        """Inches the panel takes in a picture."""
        return self.row_height * len(self.rows) + PANEL_IN

    @property
    def title(self) -> str:
        return self._title + (" (continued)" if self.continued else "")

    @property
    def _title(self) -> str:
        unit = f" ({self.unit})" if self.unit else ""
        if self.kind == "ratio":
            reach = "within 0.1× to 10×" if self.decade is None else "beyond 0.1× to 10×"
            return f"Ratios {reach} (log scale; 1 = no change)"
        if self.kind == "relative":
            return "Figures computed from printed inputs, divided by the value the claim states (1 = as claimed)"
        if self.kind == "rate":
            return "Rates (events per trial)"
        if self.kind == "order":
            return f"Differences between claimed levels{unit}: > 0 means the claimed order holds"
        return f"Values{unit}" if unit else "Values (no unit)"


def _interval(item: StoredResult) -> tuple[float, float, float]:
    """``(low, high, estimate)`` of an item with an interval (see :func:`text.has_interval`)."""
    decision = item.decision
    assert decision is not None
    return float(decision.low), float(decision.high), float(decision.statistic)


def _claimed_value(item: StoredResult) -> float | None:
    """The single value a computed item's claim states (the centre of its band), when it is not 0."""
    bound = text.claimed(item)
    if not text.is_computed(item) or bound.kind != "band" or bound.low is None or bound.high is None:
        return None
    centre = (bound.low + bound.high) / 2
    return centre if finite(centre) and centre > 0 else None


def _divisor(item: StoredResult, panel: Panel) -> float:
    """What the row's numbers are divided by on the panel's axis (1 except on the relative panel)."""
    return (_claimed_value(item) or 1.0) if panel.kind == "relative" else 1.0


def _kind(item: StoredResult) -> str:
    """The rule's own declaration of what its figure is (value, ratio, rate, order)."""
    return figure_of(item.result).kind


def _is_ratio(item: StoredResult) -> bool:
    decision = item.decision
    label = (decision.estimate_label or "") if decision is not None else ""
    scale = item.claim.check.params.get("scale")
    ratio = _kind(item) == "ratio" or label.startswith("ratio") or scale == "log-ratio"
    return ratio and _interval(item)[0] > 0


def _decade(item: StoredResult) -> int:
    """The order of magnitude of the claimed bound (or the estimate), so one claim's items stay together."""
    bound = text.claimed(item)
    anchor = next((abs(v) for v in (bound.high, bound.low, text.statistic(item)) if finite(v) and v != 0), 1.0)
    return math.floor(math.log10(anchor))


def panels(rows: Sequence[StoredResult]) -> list[Panel]:
    """Rows grouped into panels, largest first; see the module docstring for the grouping."""
    groups: dict[tuple[str, str, int | None], list[StoredResult]] = {}
    for item in rows:
        unit = text.unit(item) or ""
        if _is_ratio(item):
            low, high, stat = _interval(item)
            bound = text.claimed(item)
            reach = [abs(math.log10(v)) for v in (stat, bound.low, bound.high) if finite(v) and v > 0]
            key: tuple[str, str, int | None] = ("ratio", "", None if max(reach) <= 1 else 1)
        elif _claimed_value(item) is not None:
            key = ("relative", "", None)
        elif _kind(item) == "rate":
            key = ("rate", "", None)
        elif _kind(item) == "order":
            key = ("order", unit, _decade(item))
        else:
            key = ("value", unit, _decade(item))
        groups.setdefault(key, []).append(item)
    found = [Panel(kind, unit, decade, tuple(members)) for (kind, unit, decade), members in groups.items()]
    first = {"ratio": 0, "relative": 1}
    return sorted(found, key=lambda p: (first.get(p.kind, 2), p.decade is not None and p.kind == "ratio",
                                        -len(p.rows), p.kind, p.unit))


def _shorten(line: str) -> str:
    """One line of a label, cut in the middle when longer than :data:`LONGEST_LABEL`."""
    if len(line) <= LONGEST_LABEL:
        return line
    keep = (LONGEST_LABEL - 1) // 2
    return f"{line[:keep]}…{line[-keep:]}"


def _label(item_id: str) -> str:
    """An item id for the axis: a long grid item on two lines (claim, then ``[grid point]``), each line whole
    unless longer than :data:`LONGEST_LABEL` (then cut in the middle, so the grid point stays readable)."""
    claim, bracket, point = item_id.partition("[")
    if len(item_id) > WRAP_AT and bracket and claim:
        return f"{_shorten(claim)}\n{_shorten(bracket + point)}"
    return _shorten(item_id)


def _note(item: StoredResult) -> str:
    """The printed figure and what the claim says, on two lines when together they are long."""
    figure, claim = text.figure(item), text.claimed(item).text
    if not claim:
        return figure
    joined = f"{figure}  ·  claim {claim}"
    return joined if len(joined) <= WRAP_AT else f"{figure}\nclaim {claim}"


def _width(label: str) -> int:
    """Characters of a label's longest line."""
    return max(len(line) for line in label.split("\n"))


def _draw_bound(ax: Axes, item: StoredResult, y: float, panel: Panel) -> None:
    """The claim's reference for one row: a band, a threshold tick, or the 'no difference' line."""
    bound = text.claimed(item)
    scale = _divisor(item, panel)
    if scale != 1.0:
        bound = type(bound)(bound.kind, bound.low / scale if bound.low is not None else None,
                            bound.high / scale if bound.high is not None else None, bound.text)
    if bound.kind == "band" and bound.low is not None and bound.high is not None and bound.high > bound.low:
        ax.fill_betweenx([y - 0.34, y + 0.34], bound.low, bound.high, color=BAND_GREY, alpha=0.7, zorder=1,
                         linewidth=0)
    elif bound.kind == "band" and bound.low is not None:
        ax.plot([bound.low] * 2, [y - 0.38, y + 0.38], color="black", linewidth=1.6, zorder=3)
    elif bound.line is not None:
        ax.plot([bound.line] * 2, [y - 0.38, y + 0.38], color="black", linewidth=1.6, zorder=3)
    elif panel.kind == "order":
        ax.plot([0.0, 0.0], [y - 0.38, y + 0.38], color="black", linewidth=1.4, linestyle=(0, (2, 1.5)), zorder=3)


def _style_axis(ax: Axes, panel: Panel) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    ax.grid(axis="x", alpha=0.3)
    ax.tick_params(axis="x", labelsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if panel.kind == "ratio":
        ax.set_xscale("log")
        low, high = ax.get_xlim()
        narrow = low > 0 and math.log10(high / low) <= 1.2  # under about a decade: label more steps
        subs = (1.0, 1.2, 1.5, 2.0, 3.0, 5.0, 7.0) if narrow else (1.0, 2.0, 5.0)
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.axvline(1.0, color="#424242", linewidth=0.8, zorder=0)
        ax.set_xlabel("ratio (×, log scale)", fontsize=8.5)
    elif panel.kind == "relative":
        ax.axvline(1.0, color="#424242", linewidth=0.8, zorder=0)
        ax.set_xlabel("computed value / claimed value", fontsize=8.5)
    elif panel.kind == "rate":
        ax.set_xlim(left=0)
        ax.set_xlabel("rate (fraction of trials)", fontsize=8.5)
    else:
        ax.set_xlabel(panel.unit or "(no unit)", fontsize=8.5)
        if panel.kind == "order":
            ax.axvline(0.0, color="#424242", linewidth=0.8, zorder=0)
    if panel.kind != "ratio":  # fewer ticks when each needs many digits (1 ± 1e-9), so labels stand apart
        low, high = ax.get_xlim()
        long_labels = high - low < 1e-4 * max(abs(low), abs(high))
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4 if long_labels else 8, steps=[1, 2, 2.5, 5, 10]))
        ax.xaxis.set_major_formatter(FuncFormatter(
            lambda value, _: tick_text(value, [float(t) for t in ax.xaxis.get_majorticklocs()])))


def tick_text(value: float, ticks: Sequence[float]) -> str:
    """A linear axis tick in full, with just the digits that tell it from its neighbours.

    matplotlib would print ``1e-9+1`` in the corner and ``0.0`` ... ``1.0`` on the ticks of an axis
    around 1 ± 1e-9; here each tick reads ``1.0000000005``, ``7.5e-06``, ``0.25`` or ``1000``.
    """
    steps = [abs(b - a) for a, b in zip(ticks, ticks[1:]) if b != a]
    if value == 0 or not steps:
        return f"{value:g}"
    step = min(steps)
    decimals = next((d for d in range(16) if abs(round(step, d) - step) <= step * 1e-6), 15)
    digits = decimals + math.floor(math.log10(abs(value))) + 1
    return f"{value:.{max(1, digits)}g}"


def forest(items: Sequence[StoredResult]) -> bytes | None:
    """PNG of every decided figure in one picture, whatever its height (a report draws one per claims pack)."""
    rows = [item for item in items if text.has_interval(item)]
    return draw(panels(rows)) if rows else None


def draw(found: Sequence[Panel]) -> bytes:
    """PNG of panels: dot = estimate, bar = interval, colour = verdict, black = the claim."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    rows = [item for panel in found for item in panel.rows]
    label_in = 0.068 * max(_width(_label(i.item_id)) for i in rows)
    note_in = 0.062 * max(_width(_note(i)) for i in rows)
    heights = [p.height for p in found]
    fig = new_figure(label_in + PLOT_IN + note_in, sum(heights) + LEGEND_IN)
    grid = fig.add_gridspec(len(found), 2, width_ratios=[PLOT_IN, note_in], height_ratios=heights)
    for index, panel in enumerate(found):
        ax = fig.add_subplot(grid[index, 0])
        side = fig.add_subplot(grid[index, 1], sharey=ax)
        side.set_axis_off()
        count = len(panel.rows)
        for position, item in enumerate(panel.rows):
            y = count - 1 - position
            colour = COLOURS.get(item.verdict.value, "#000000")
            low, high, stat = (v / _divisor(item, panel) for v in _interval(item))
            _draw_bound(ax, item, y, panel)
            ax.plot([low, high], [y, y], color=colour, linewidth=3.2, solid_capstyle="butt", zorder=4)
            ax.plot([stat], [y], "o", color=colour, markersize=6, markeredgecolor="white", zorder=5)
            side.text(0.0, y, _note(item), va="center", ha="left", fontsize=8, transform=side.get_yaxis_transform())
        ax.set_yticks(range(count), [_label(i.item_id) for i in reversed(panel.rows)], fontsize=8.5)
        ax.set_ylim(-0.7, count - 0.3)
        ax.set_title(panel.title, fontsize=9, loc="left")
        ax.margins(x=0.06)
        _style_axis(ax, panel)
    present = [v for v in COLOURS if any(i.verdict.value == v for i in rows)]
    handles: list[Artist] = [Line2D([0], [0], color=COLOURS[v], linewidth=3.2, marker="o", label=v) for v in present]
    handles.append(Line2D([0], [0], color="black", linewidth=1.6, label="claimed threshold"))
    if any(text.claimed(i).kind == "band" for i in rows):
        handles.append(Patch(color=BAND_GREY, alpha=0.7, label="claimed band (margin)"))
    if any(p.kind == "order" for p in found):
        handles.append(Line2D([0], [0], color="black", linewidth=1.4, linestyle=(0, (2, 1.5)),
                              label="no difference (ordering, monotone)"))
    fig.legend(handles=handles, loc="outside upper center", ncol=min(len(handles), 5), frameon=False, fontsize=8.5,
               title="Each decided figure (dot, with its interval; colour = verdict) against what its claim asserts "
                     "(black)", title_fontsize=10)
    return png_bytes(fig)
