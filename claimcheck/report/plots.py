"""Pictures of a run: the forest plot of every decided figure, and per-pack plots where a reader would rather look.

matplotlib is imported inside each function and only its object-oriented
``Figure`` API is used (no pyplot, no global backend), so importing the report
package stays cheap and nothing here touches a display. Each pack plot reads
only item params, samples and artifacts, and quietly makes nothing when the run
has no items it understands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, TypeGuard

from claimcheck.report import text
from claimcheck.report.canvas import COLOURS, new_figure, png_bytes
from claimcheck.report.cascade import cascade
from claimcheck.store import StoredResult

if TYPE_CHECKING:
    from matplotlib.artist import Artist


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


# --------------------------------------------------------------------------- forest


def _forest_panels(rows: Sequence[StoredResult]) -> list[tuple[str, list[StoredResult]]]:
    """Rows grouped so each panel has one unit and one order of magnitude (one honest x axis).

    The magnitude comes from the claimed bound when there is one, so the items
    of one claim stay together.
    """
    panels: dict[str, list[StoredResult]] = {}
    for item in rows:
        bound = text.claimed(item)
        anchor = next((abs(v) for v in (bound.high, bound.low, text.statistic(item)) if _finite(v) and v != 0), 1.0)
        decade = math.floor(math.log10(anchor))
        unit = text.unit(item) or ""
        panels.setdefault(f"{unit}|{decade}", []).append(item)
    return sorted(panels.items(), key=lambda kv: -len(kv[1]))


def forest(items: Sequence[StoredResult]) -> bytes | None:
    """Every decided figure with its interval against the claim's bound, one row each.

    Figures share an x axis only when they share a unit, so rows are grouped
    into one panel per unit. In each row the black tick is the claimed
    threshold, a grey band the claimed margin, and the colour the verdict;
    the numbers are printed at the right.
    """
    rows = [item for item in items if text.has_interval(item)]
    if not rows:
        return None
    from matplotlib.lines import Line2D

    panels = _forest_panels(rows)
    heights = [0.36 * len(members) + 0.55 for _, members in panels]
    height = sum(heights) + 1.3
    fig = new_figure(12.0, height, layout=None)
    # Item ids on the left, printed figures on the right of the drawing area.
    fig.subplots_adjust(left=0.25, right=0.64, top=1 - 0.8 / height, bottom=0.5 / height,
                        hspace=0.6 / (height / len(panels)))
    axes = fig.subplots(len(panels), 1, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
    for ax, (key, members) in zip(axes, panels):
        labels = []
        for index, item in enumerate(members):
            y = len(members) - 1 - index
            bound = text.claimed(item)
            colour = COLOURS.get(item.verdict.value, "#000000")
            low, high, stat = _interval(item)
            if bound.kind == "band":
                ax.fill_between([bound.low, bound.high], y - 0.32, y + 0.32, color="#bdbdbd", alpha=0.6, zorder=1,
                                linewidth=0)
            elif bound.line is not None:
                ax.plot([bound.line] * 2, [y - 0.36, y + 0.36], color="black", linewidth=1.6, zorder=3)
            ax.plot([low, high], [y, y], color=colour, linewidth=3.2, solid_capstyle="butt", zorder=4)
            ax.plot([stat], [y], "o", color=colour, markersize=6, markeredgecolor="white", zorder=5)
            note = f"{text.figure(item)}   claim {bound.text}" if bound.text else text.figure(item)
            ax.annotate(note, xy=(1.0, y), xycoords=("axes fraction", "data"), xytext=(10, 0),
                        textcoords="offset points", va="center", ha="left", fontsize=8.5, annotation_clip=False)
            labels.append(item.item_id)
        ax.set_yticks(range(len(members)), list(reversed(labels)), fontsize=8.5)
        ax.set_ylim(-0.7, len(members) - 0.3)
        ax.grid(axis="x", alpha=0.3)
        unit = key.rsplit("|", 1)[0]
        ax.set_xlabel(unit or "(no unit)", fontsize=8.5, labelpad=1)
        ax.tick_params(axis="x", labelsize=8)
        ax.margins(x=0.08)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    present = [v for v in COLOURS if any(i.verdict.value == v for i in rows)]
    handles: list[Artist] = [Line2D([0], [0], color=COLOURS[v], linewidth=3.2, label=v) for v in present]
    handles.append(Line2D([0], [0], color="black", linewidth=1.6, label="claimed threshold"))
    if any(text.claimed(i).kind == "band" for i in rows):
        from matplotlib.patches import Patch

        handles.append(Patch(color="#bdbdbd", alpha=0.6, label="claimed margin"))
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.45, 1 - 0.32 / height), ncol=len(handles),
               frameon=False, fontsize=8.5)
    fig.suptitle("Each decided figure with its interval against what the claim asserts (one panel per unit and scale)",
                 x=0.45, y=1 - 0.08 / height, fontsize=10)
    return png_bytes(fig)


# --------------------------------------------------------------------------- pack plots


def _interval(item: StoredResult) -> tuple[float, float, float]:
    """``(low, high, estimate)`` of an item that has an interval (see :func:`text.has_interval`)."""
    decision = item.decision
    assert decision is not None
    return decision.low, decision.high, decision.statistic


def _of_probe(items: Iterable[StoredResult], name: str) -> list[StoredResult]:
    return [item for item in items if item.claim.probe.name == name]


def _label(item: StoredResult) -> str:
    return text.grid_label(item) or item.item_id


def qmv_bandwidth(items: Sequence[StoredResult]) -> bytes | None:
    """Bandwidth of every output against matrix size, the raw-read reference dashed; the decided ratio beside it."""
    rows = [i for i in _of_probe(items, "qmv") if _finite(i.params.get("size_mib"))]
    rows = [i for i in rows if i.result.samples]
    if not rows:
        return None
    fig = new_figure(11.0, 4.2)
    left, right = fig.subplots(1, 2)
    series: dict[tuple[str, str], list[tuple[float, tuple[float, float, float]]]] = {}
    for item in rows:
        reference = item.claim.check.reference
        for output, values in item.result.samples.items():
            if "@" in output:
                continue
            interval = mean_interval(values)
            if interval is None:
                continue
            kind = "reference" if output == reference or "raw" in output.lower() else "output"
            series.setdefault((output, kind), []).append((float(item.params["size_mib"]), interval))
    markers = iter("osD^v<>")
    for (output, kind), points in sorted(series.items(), key=lambda kv: kv[0][1] != "reference"):
        points.sort()
        xs = [p[0] for p in points]
        ys = [p[1][0] for p in points]
        err = [[p[1][0] - p[1][1] for p in points], [p[1][2] - p[1][0] for p in points]]
        if kind == "reference":
            left.errorbar(xs, ys, yerr=err, color="black", linestyle="--", linewidth=1.4, capsize=3,
                          label=f"raw read ({output})")
        else:
            left.errorbar(xs, ys, yerr=err, marker=next(markers, "o"), linewidth=1.4, capsize=3, label=output)
    left.set_xscale("log", base=2)
    left.set_xlabel("matrix size (MiB)")
    left.set_ylabel("bandwidth (mean, 95% CI)")
    left.set_title("Bandwidth vs matrix size", fontsize=10)
    left.legend(fontsize=8)
    left.grid(alpha=0.3)
    decided = [i for i in rows if text.has_interval(i)]
    if decided:
        for item in decided:
            colour = COLOURS.get(item.verdict.value, "black")
            size = float(item.params["size_mib"])
            low, high, stat = _interval(item)
            right.errorbar([size], [stat], yerr=[[stat - low], [high - stat]],
                           fmt="o", color=colour, capsize=4)
        lines = {text.claimed(i).line for i in decided if text.claimed(i).line is not None}
        for line in lines:
            right.axhline(line, color="black", linewidth=1.2, linestyle=":", label=f"claimed {line:g}")
        right.set_xscale("log", base=2)
        right.set_xlabel("matrix size (MiB)")
        unit = text.unit(decided[0]) or ""
        right.set_ylabel(f"decided figure {unit}".strip())
        right.set_title("Decided figure (colour = verdict)", fontsize=10)
        if lines:
            right.legend(fontsize=8)
        right.grid(alpha=0.3)
    else:
        right.set_axis_off()
    return png_bytes(fig)


def decode_arms(items: Sequence[StoredResult]) -> bytes | None:
    """Per-token time of each decode arm with its 95% interval, one row per item and arm."""
    rows = []
    for item in _of_probe(items, "decode_arms"):
        for arm, values in sorted(item.result.samples.items()):
            interval = mean_interval(values)
            if interval is not None:
                rows.append((f"{_label(item)} · {arm}", arm, interval))
    if not rows:
        return None
    arms = sorted({arm for _, arm, _ in rows})
    palette = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef8f00", "#00838f"]
    colour = {arm: palette[i % len(palette)] for i, arm in enumerate(arms)}
    fig = new_figure(9.0, 1.2 + 0.32 * len(rows))
    ax = fig.add_subplot()
    for index, (label, arm, (mean, low, high)) in enumerate(rows):
        y = len(rows) - 1 - index
        ax.errorbar([mean], [y], xerr=[[mean - low], [high - mean]], fmt="o", color=colour[arm], capsize=3)
    ax.set_yticks(range(len(rows)), [r[0] for r in reversed(rows)], fontsize=8)
    ax.set_xlabel("per-token time, ms (mean, 95% CI)")
    ax.set_title("Decode arms", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return png_bytes(fig)


def _key(mapping: Mapping[str, Any], *names: str) -> Any:
    lowered = {str(k).lower(): v for k, v in mapping.items()}
    for name in names:
        if name in lowered:
            return lowered[name]
    return None


_FORK = ("fork", "fork_hazard", "fork_rate", "p_fork")
_REMERGE = ("remerge", "remerge_hazard", "remerge_rate", "p_remerge")
_EVENT = ("event", "kind", "type", "outcome", "transition")
_VALUE = ("hazard", "rate", "value", "p", "probability", "count")


def hazard_rows(obj: Any, policy: str, depth: int = 0) -> list[tuple[str, str, float]]:
    """``(policy, FORK|REMERGE, value)`` from the shapes a route_hazard artifact may take.

    Understood: ``{policy: {"fork": x, "remerge": y}}``; ``{"fork": x, "remerge": y}`` (the item's
    ``policy`` param names it); lists of ``{"policy": p, "fork": x, "remerge": y}``; and lists of event
    records ``{"policy": p, "event": "FORK", "hazard": x}``. Keys are matched case-insensitively.
    """
    if depth > 4:
        return []
    out: list[tuple[str, str, float]] = []
    if isinstance(obj, Mapping):
        name = _key(obj, "policy", "name")
        here = str(name) if isinstance(name, (str, int)) else policy
        fork, remerge = _key(obj, *_FORK), _key(obj, *_REMERGE)
        if _finite(fork) or _finite(remerge):
            out += [(here, "FORK", float(fork))] if _finite(fork) else []
            out += [(here, "REMERGE", float(remerge))] if _finite(remerge) else []
            return out
        event, value = _key(obj, *_EVENT), _key(obj, *_VALUE)
        if isinstance(event, str) and event.upper() in ("FORK", "REMERGE") and _finite(value):
            return [(here, event.upper(), float(value))]
        for key, value in obj.items():
            if isinstance(value, (Mapping, list)):
                out += hazard_rows(value, str(key) if isinstance(value, Mapping) else policy, depth + 1)
    elif isinstance(obj, list):
        for entry in obj:
            out += hazard_rows(entry, policy, depth + 1)
    return out


def route_hazard(items: Sequence[StoredResult]) -> bytes | None:
    """FORK vs REMERGE hazard per routing policy (grouped bars), from route_hazard artifacts."""
    values: dict[tuple[str, str], list[float]] = {}
    for item in _of_probe(items, "route_hazard"):
        policy = str(item.params.get("policy") or _label(item))
        for name, artifact in item.result.artifacts.items():
            for pol, event, value in hazard_rows(artifact, policy):
                values.setdefault((pol, event), []).append(value)
    if not values:
        return None
    policies = list(dict.fromkeys(pol for pol, _ in values))
    fig = new_figure(max(6.0, 1.0 + 1.1 * len(policies)), 4.0)
    ax = fig.add_subplot()
    width = 0.38
    for offset, event, colour in ((-width / 2, "FORK", "#c62828"), (width / 2, "REMERGE", "#1565c0")):
        heights = [sum(values.get((p, event), [math.nan])) / len(values.get((p, event), [1])) for p in policies]
        ax.bar([i + offset for i in range(len(policies))], heights, width, label=event, color=colour)
    ax.set_xticks(range(len(policies)), policies, rotation=20, ha="right", fontsize=8.5)
    ax.set_ylabel("hazard")
    ax.set_title("Route hazard: FORK vs REMERGE per policy", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return png_bytes(fig)


_PROMPT = ("prompt", "prompt_id", "prompt_index", "id", "index")
_DEPTH = ("fork_depth", "depth", "first_divergence", "fork_at", "divergence_depth", "fork_token")


def depth_rows(obj: Any, depth: int = 0) -> list[tuple[str, float | None]]:
    """``(prompt, fork depth or None)`` from a bisector_trace artifact.

    Understood: a mapping under a key naming a depth (``{"fork_depth": {prompt: depth}}``) and lists of
    records ``{"prompt": p, "fork_depth": d}`` (``None`` = never forked).
    """
    if depth > 4:
        return []
    out: list[tuple[str, float | None]] = []
    if isinstance(obj, list):
        for entry in obj:
            if isinstance(entry, Mapping):
                prompt, value = _key(entry, *_PROMPT), _key(entry, *_DEPTH)
                if prompt is not None and (value is None or _finite(value)) and any(
                    str(k).lower() in _DEPTH for k in entry
                ):
                    out.append((str(prompt), float(value) if _finite(value) else None))
                    continue
            out += depth_rows(entry, depth + 1)
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            if str(key).lower() in _DEPTH and isinstance(value, Mapping) and all(
                v is None or _finite(v) for v in value.values()
            ):
                out += [(str(p), float(v) if _finite(v) else None) for p, v in value.items()]
            elif isinstance(value, (Mapping, list)):
                out += depth_rows(value, depth + 1)
    return out


def bisector_fork_depth(items: Sequence[StoredResult]) -> bytes | None:
    """Map of fork depth per prompt (rows) and item (columns), from bisector_trace artifacts."""
    columns: list[tuple[str, dict[str, float | None]]] = []
    for item in _of_probe(items, "bisector_trace"):
        depths: dict[str, float | None] = {}
        for artifact in item.result.artifacts.values():
            for prompt, value in depth_rows(artifact):
                depths[prompt] = value
        if depths:
            columns.append((_label(item), depths))
    if not columns:
        return None
    prompts = list(dict.fromkeys(p for _, depths in columns for p in depths))
    grid = [[(math.nan if (value := depths.get(p)) is None else value) for _, depths in columns] for p in prompts]
    fig = new_figure(max(5.0, 2.5 + 1.0 * len(columns)), max(3.0, 1.2 + 0.28 * len(prompts)))
    ax = fig.add_subplot()
    import numpy as np

    data = np.ma.masked_invalid(np.array(grid, dtype=float))
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    norm = Normalize()  # imshow's default, scaled to the data; held here to read cell brightness
    image = ax.imshow(data, aspect="auto", cmap=colormaps["viridis"].with_extremes(bad="#eeeeee"), norm=norm)
    if len(prompts) * len(columns) <= 400:
        for r, row in enumerate(grid):
            for c, value in enumerate(row):
                label = "—" if math.isnan(value) else f"{value:g}"
                bright = not math.isnan(value) and norm(value) > 0.6  # viridis turns yellow
                ax.text(c, r, label, ha="center", va="center", fontsize=7,
                        color="#616161" if math.isnan(value) else "black" if bright else "white")
    ax.set_xticks(range(len(columns)), [c[0] for c in columns], rotation=20, ha="right", fontsize=8)
    ax.set_yticks(range(len(prompts)), prompts, fontsize=7.5)
    ax.set_title("Fork depth per prompt (— = no fork)", fontsize=10)
    fig.colorbar(image, ax=ax, label="fork depth (tokens)")
    return png_bytes(fig)


PACK_PLOTS: tuple[tuple[str, str, str, Callable[[Sequence[StoredResult]], bytes | None]], ...] = (
    ("qmv_bandwidth", "qmv bandwidth vs matrix size",
     "Each probe output's mean bandwidth with its 95% interval against matrix size; the dashed line is the raw-read "
     "reference. Right: the decided figure per size against the claimed threshold.", qmv_bandwidth),
    ("decode_arms", "Decode arms", "Per-token time of each decode arm, mean with 95% interval.", decode_arms),
    ("route_hazard", "Route hazard", "FORK vs REMERGE hazard per routing policy, from the probe's artifacts.",
     route_hazard),
    ("bisector_fork_depth", "Fork depth per prompt",
     "Where each prompt's generation forked, per item; grey cells never forked.", bisector_fork_depth),
    ("cascade", "Dependency cascade",
     "Claims whose premises did not hold are stale: each box is a claim with its verdict, arrows run from a "
     "premise to the claims that rest on it.", cascade),
)


def pack_plots(items: Sequence[StoredResult], folder: Path) -> tuple[list[Plot], list[str]]:
    """Every pack plot the run has data for; a plot that fails is skipped with a one-line note."""
    plots, notes = [], []
    for name, title, caption, draw in PACK_PLOTS:
        try:
            png = draw(items)
        except Exception as error:  # noqa: BLE001 - a picture must never sink the report
            notes.append(f"plot {name} skipped: {text.one_line(error)}")
            continue
        if png is not None:
            plots.append(Plot(name, title, caption, folder / f"{name}.png", png))
    return plots, notes
