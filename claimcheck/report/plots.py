"""Pictures of a run: the forest plot, the plots probes declare for their items, and the cascade.

A probe states its picture when it registers (:class:`claimcheck.probing.plots.PackPlot`): the kind
of plot and the outputs or artifact it is drawn from. Units come from the probe's declared
outputs. The run stores each declaration with its evidence (:class:`claimcheck.store.StoredPlot`),
and reports draw from that, so nothing here imports the probes. Nothing here inspects an artifact to guess what it holds: an item whose declared data is
missing or of another shape is left out, and a plot with nothing left is not drawn.

matplotlib is imported inside each function and only its object-oriented ``Figure`` API is used
(no pyplot, no global backend), so importing the report package stays cheap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence, TypeGuard

from claimcheck.probing.plots import PackPlot
from claimcheck.report import text
from claimcheck.report.canvas import new_figure, png_bytes
from claimcheck.report.cascade import cascade
from claimcheck.report.forest import forest
from claimcheck.store import StoredResult

__all__ = ["CASCADE", "Plot", "RatePanel", "forest", "mean_interval", "pack_plots", "rate_interval", "rate_panels"]

#: Series colours (verdict colours are kept for verdicts).
PALETTE = ("#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#c62828", "#00838f", "#5d4037", "#ad1457")
CASCADE = ("cascade", "Dependency cascade",
           "Claims whose premises did not hold are stale: each box is a claim with its verdict; arrows run from "
           "a premise to the claims that rest on it.")


class Unit(Protocol):
    """What a plot reads of a probe output: its unit."""

    @property
    def unit(self) -> str: ...


class PlotSource(Protocol):
    """A probe's plot declaration and its outputs' units: a stored one, or a registered probe."""

    @property
    def plot(self) -> PackPlot | None: ...

    @property
    def outputs(self) -> Mapping[str, Unit]: ...


@dataclass(frozen=True)
class Plot:
    """A picture written to the report folder, with what it shows."""

    name: str
    title: str
    caption: str
    path: Path
    png: bytes


def _finite(value: object) -> TypeGuard[float]:
    """A real, finite number (bools excluded), narrowed to float for the arithmetic that follows."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def mean_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float] | None:
    """Mean and Student-t interval of a sample (a point when there is one value)."""
    values = [float(v) for v in values if _finite(v)]
    if not values:
        return None
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, mean, mean
    from scipy import stats

    sem = stats.sem(values)
    if not math.isfinite(sem) or sem == 0:
        return mean, mean, mean
    low, high = stats.t.interval(level, len(values) - 1, loc=mean, scale=sem)
    return mean, float(low), float(high)


def rate_interval(events: int, trials: int, level: float = 0.95) -> tuple[float, float, float]:
    """``events / trials`` with its exact (Clopper-Pearson) interval."""
    from scipy import stats

    ci = stats.binomtest(events, trials).proportion_ci(confidence_level=level, method="exact")
    return events / trials, float(ci.low), float(ci.high)


def _plain_ticks(ax: Any, axis: str = "x") -> None:
    """Tick labels as plain numbers (64, 128, 0.5), never powers (2⁶)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    target.set_minor_formatter(NullFormatter())


def _units(outputs: Mapping[str, Unit], names: Sequence[str]) -> str:
    return ", ".join(dict.fromkeys(outputs[n].unit for n in names if n in outputs and outputs[n].unit)) or "no unit"


# --------------------------------------------------------------------------- sweep


def _sweep_points(spec: PackPlot, item: StoredResult) -> dict[str, list[tuple[float, float, float, float]]]:
    """Declared output -> ``(x, mean, low, high)`` of one item, from plain and ``output@x=value`` samples."""
    found: dict[str, list[tuple[float, float, float, float]]] = {}
    here = item.params.get(spec.x)
    for key, values in item.result.samples.items():
        name, _, level = key.partition("@")
        if name not in spec.outputs:
            continue
        if level:
            param, _, raw = level.partition("=")
            try:
                x = float(raw)
            except ValueError:
                continue
            if param != spec.x:
                continue
        elif _finite(here):
            x = float(here)
        else:
            continue
        interval = mean_interval(values)
        if interval is not None:
            found.setdefault(name, []).append((x, *interval))
    return found


def sweep(spec: PackPlot, outputs: Mapping[str, Unit], items: Sequence[StoredResult]) -> bytes | None:
    """Each declared output's mean and 95% interval against the swept param, one colour per claim."""
    series: dict[tuple[str, str], list[tuple[float, float, float, float]]] = {}
    for item in items:
        for name, points in _sweep_points(spec, item).items():
            series.setdefault((item.claim_id, name), []).extend(points)
    if not series:
        return None
    claims = list(dict.fromkeys(claim for claim, _ in series))
    fig = new_figure(9.5, 5.0)
    ax = fig.add_subplot()
    xs = sorted({p[0] for points in series.values() for p in points})
    for (claim, name), points in sorted(series.items(), key=lambda kv: (claims.index(kv[0][0]), kv[0][1])):
        points.sort()
        colour = PALETTE[claims.index(claim) % len(PALETTE)]
        reference = name == spec.reference
        ax.errorbar([p[0] for p in points], [p[1] for p in points],
                    yerr=[[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]],
                    color=colour, linestyle="--" if reference else "-", marker="s" if reference else "o",
                    markersize=4, linewidth=1.4, capsize=3, label=f"{claim} · {name}")
    if xs and xs[0] > 0 and xs[-1] / xs[0] >= 8:
        ax.set_xscale("log", base=2)
    from matplotlib.ticker import FixedLocator

    ax.xaxis.set_major_locator(FixedLocator(xs))
    _plain_ticks(ax)
    ax.tick_params(axis="x", labelsize=8, rotation=0)
    ax.set_xlabel(f"{spec.x} ({spec.x_unit})" if spec.x_unit else spec.x)
    ax.set_ylabel(f"{_units(outputs, spec.outputs)} (mean, 95% CI)")
    ax.set_ylim(bottom=0)
    ax.set_title(spec.title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
              title="claim · output (dashed: reference)", title_fontsize=7.5)
    return png_bytes(fig)


# --------------------------------------------------------------------------- arms


def arms(spec: PackPlot, outputs: Mapping[str, Unit], items: Sequence[StoredResult]) -> bytes | None:
    """Per item, each declared arm's mean and 95% interval side by side, one colour per arm."""
    rows: list[tuple[str, dict[str, tuple[float, float, float]]]] = []
    for item in items:
        found = {}
        for name in spec.outputs:
            interval = mean_interval(item.result.samples.get(name, []))
            if interval is not None:
                found[name] = interval
        if found:
            rows.append((item.item_id, found))
    if not rows:
        return None
    names = [n for n in spec.outputs if any(n in found for _, found in rows)]
    colour = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}
    widest = max(len(found) for _, found in rows)
    fig = new_figure(10.0, 1.4 + (0.2 + 0.16 * widest) * len(rows))
    ax = fig.add_subplot()
    step = 0.7 / max(widest, 1)
    labelled: set[str] = set()
    for index, (_, found) in enumerate(rows):
        y = len(rows) - 1 - index
        present = [n for n in names if n in found]
        for k, name in enumerate(present):
            mean, low, high = found[name]
            offset = (k - (len(present) - 1) / 2) * step
            ax.errorbar([mean], [y + offset], xerr=[[mean - low], [high - mean]], fmt="o", color=colour[name],
                        markersize=4.5, capsize=3, label=None if name in labelled else name)
            labelled.add(name)
    values = [v for _, found in rows for interval in found.values() for v in interval if v > 0]
    if values and max(values) / min(values) > 20:
        ax.set_xscale("log")
        _plain_ticks(ax)
    ax.set_yticks(range(len(rows)), [item_id for item_id, _ in reversed(rows)], fontsize=8)
    for y in range(len(rows) - 1):
        ax.axhline(y + 0.5, color="#e0e0e0", linewidth=0.8)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlabel(f"{_units(outputs, names)} (mean, 95% CI)")
    ax.set_title(spec.title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, title="arm",
              title_fontsize=8)
    return png_bytes(fig)


# --------------------------------------------------------------------------- rates


def _counts(row: Any, spec: PackPlot, event: str) -> tuple[int, int] | None:
    """``(k, n)`` of one event in one artifact row of the declared shape, or None."""
    if not isinstance(row, Mapping):
        return None
    top, bottom = row.get(spec.numerator), row.get(spec.denominator)
    if not isinstance(top, Mapping) or not isinstance(bottom, Mapping):
        return None
    k, n = top.get(event), bottom.get(event)
    if not (isinstance(k, int) and isinstance(n, int)) or isinstance(k, bool) or n <= 0 or not 0 <= k <= n:
        return None
    return k, n


@dataclass(frozen=True)
class RatePanel:
    """One distinct table of counts and the title saying what sets it apart from the other panels."""

    title: str
    table: Mapping[str, Mapping[str, tuple[int, int]]]  # artifact row -> event -> (k, n)
    items: tuple[StoredResult, ...]


def _probe_params(item: StoredResult) -> dict[str, Any]:
    """The params the probe ran with: the claim's fixed ones, then the item's own (grid values win)."""
    return {**item.claim.probe.params, **item.params}


def _value_key(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, default=str)


def _value_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value_text(v) for v in value) + "]"
    return str(value)


def _values(members: Sequence[StoredResult], name: str) -> frozenset[str]:
    """The values one param takes over a table's items (``"unset"`` for an item without it)."""
    return frozenset(_value_key(p[name]) if name in p else "unset" for p in map(_probe_params, members))


def _panel_title(members: Sequence[StoredResult], differing: Sequence[str], width: int) -> str:
    """Model, each differing param this table has one value of, and the claims sharing it, wrapped."""
    import textwrap

    params = [_probe_params(item) for item in members]
    models = list(dict.fromkeys(str(p["model"]) for p in params if p.get("model")))
    parts = [", ".join(models)] if models else []
    parts += [f"{name}={_value_text(params[0][name])}" for name in differing
              if name in params[0] and len(_values(members, name)) == 1]
    claims = list(dict.fromkeys(item.claim_id for item in members))
    shared = ", ".join(claims[:2]) + (f" +{len(claims) - 2}\N{NO-BREAK SPACE}more" if len(claims) > 2 else "")
    lines = textwrap.wrap(" · ".join(parts), width, break_on_hyphens=False) if parts else []
    label = f"{'claim' if len(claims) == 1 else 'claims'}: {shared}"
    return "\n".join(lines + textwrap.wrap(label, width, break_on_hyphens=False))


def _tables(spec: PackPlot, items: Sequence[StoredResult]) -> list[tuple[dict[str, dict[str, tuple[int, int]]],
                                                                        list[StoredResult]]]:
    """Each distinct table of declared counts with the items that produced it, in item order."""
    grouped: dict[str, tuple[dict[str, dict[str, tuple[int, int]]], list[StoredResult]]] = {}
    for item in items:
        artifact = item.result.artifacts.get(spec.artifact)
        if not isinstance(artifact, Mapping):
            continue
        table = {str(row): {e: c for e in spec.events if (c := _counts(value, spec, e)) is not None}
                 for row, value in artifact.items()}
        table = {row: cells for row, cells in table.items() if cells}
        if table:
            grouped.setdefault(_value_key(table), (table, []))[1].append(item)
    return list(grouped.values())


def rate_panels(spec: PackPlot, items: Sequence[StoredResult], width: int = 80) -> list[RatePanel]:
    """The distinct tables of the items (identical ones once), each titled by what sets it apart.

    A param (claim and item params merged) is named when its values differ between the tables; the
    model always is. A param that takes several values within one table did not make that table, so
    it is named only where it has a single value. Titles wrap at ``width`` characters.
    """
    groups = _tables(spec, items)
    names = sorted({name for _, members in groups for m in members for name in _probe_params(m)} - {"model"})
    differing = [n for n in names if len({_values(members, n) for _, members in groups}) > 1]
    return [RatePanel(_panel_title(members, differing, width), table, tuple(members)) for table, members in groups]


def rates(spec: PackPlot, outputs: Mapping[str, Unit], items: Sequence[StoredResult]) -> bytes | None:
    """Per artifact row, each event's ``k/n`` with its exact interval; one panel per distinct table."""
    tables = _tables(spec, items)
    if not tables:
        return None
    panel_in = max(6.0, 1.5 + 1.4 * max(len(table) for table, _ in tables))
    shown = rate_panels(spec, items, width=int(panel_in * 14))  # characters of 8.5 pt text per panel
    lines = max(panel.title.count("\n") + 1 for panel in shown)
    fig = new_figure(panel_in * len(shown), 4.4 + 0.17 * lines)
    axes = fig.subplots(1, len(shown), squeeze=False)[0]
    width = 0.8 / len(spec.events)
    for ax, panel in zip(axes, shown):
        table = panel.table
        for k, event in enumerate(spec.events):
            xs: list[float] = []
            heights: list[float] = []
            errors: list[list[float]] = [[], []]
            labels: list[str] = []
            for x, cells in enumerate(table.values()):
                if event not in cells:
                    continue
                value, low, high = rate_interval(*cells[event])
                xs.append(x + (k - (len(spec.events) - 1) / 2) * width)
                heights.append(value)
                errors[0].append(value - low)
                errors[1].append(high - value)
                labels.append(f"{cells[event][0]}/{cells[event][1]}")
            bars = ax.bar(xs, heights, width * 0.92, yerr=errors, capsize=3, color=PALETTE[k % len(PALETTE)],
                          label=f"at {event}")
            ax.bar_label(bars, labels, fontsize=6.5, padding=2)
        ax.set_xticks(range(len(table)), list(table), fontsize=8.5)
        ax.set_ylim(0, 1.08)
        ax.set_ylabel(f"{spec.numerator} / {spec.denominator} (95% exact CI)")
        ax.set_xlabel(f"{spec.artifact} row")
        ax.set_title(panel.title, fontsize=8.5, loc="left")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    fig.suptitle(spec.title, fontsize=10.5)
    return png_bytes(fig)


DRAWERS: dict[str, Callable[[PackPlot, Mapping[str, Unit], Sequence[StoredResult]], bytes | None]] = {
    "sweep": sweep, "arms": arms, "rates": rates,
}


def pack_plots(items: Sequence[StoredResult], folder: Path,
               probes: Mapping[str, PlotSource]) -> tuple[list[Plot], list[str]]:
    """Every declared plot the run has items for, then the cascade; a plot that fails is skipped with a note."""
    plots, notes = [], []
    for name in sorted({item.claim.probe.name for item in items}):
        registered = probes.get(name)
        spec = registered.plot if registered is not None else None
        if registered is None or spec is None:
            continue
        chosen = [item for item in items if item.claim.probe.name == name]
        try:
            png = DRAWERS[spec.kind](spec, registered.outputs, chosen)
        except Exception as error:  # noqa: BLE001 - a picture must never sink the report
            notes.append(f"plot {spec.name} skipped: {text.one_line(error)}")
            continue
        if png is not None:
            plots.append(Plot(spec.name, spec.title, spec.caption, folder / f"{spec.name}.png", png))
    try:
        png = cascade(items)
    except Exception as error:  # noqa: BLE001 - a picture must never sink the report
        notes.append(f"plot cascade skipped: {text.one_line(error)}")
        png = None
    if png is not None:
        plots.append(Plot(CASCADE[0], CASCADE[1], CASCADE[2], folder / "cascade.png", png))
    return plots, notes
