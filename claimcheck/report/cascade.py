"""The cascade picture: which claims went stale because a premise did not hold.

Only the parts of the dependency graph that contain a failed or stale claim
are drawn, left to right from premises to the claims that rest on them, so the
picture answers one question: what else does this refutation knock out?

The geometry (:func:`cascade_layout`, in inches) is computed apart from the drawing so that it
can be checked: every edge leaves its premise's right edge, runs only through the gaps between
columns and over lanes above or below the columns it skips, and enters its dependant's left edge,
so no edge is ever drawn over a box.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Mapping, Sequence

from claimcheck.report.canvas import COLOURS, DPI, new_figure, png_bytes
from claimcheck.report.cascade_layout import Box, Layout, Size, plan
from claimcheck.store import StoredResult
from claimcheck.verdict import FAILED_PREMISE, Verdict, worst

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text

__all__ = ["cascade", "cascade_layout", "claim_graph", "draw", "failing_components", "layers", "measure"]

FAILED = {verdict.value for verdict in FAILED_PREMISE}
WRAP = 26  # characters per line in a box
FONT_PT = 7
PAD = 0.35  # the frame's padding around the text, in font sizes
BOX_LINE_PT = 1.6
EDGE_GREY = "#606060"
HEADER_IN = 0.72  # room above the boxes for the title and the legend
TITLE = "Dependency cascade: premises (left) → the claims resting on them (right)"


def claim_graph(items: Sequence[StoredResult]) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Claim verdicts (worst item wins) and premise -> dependant edges among claims in the run."""
    verdicts: dict[str, str] = {}
    edges: set[tuple[str, str]] = set()
    for item in items:
        chosen = worst([item.verdict] + ([Verdict(verdicts[item.claim_id])] if item.claim_id in verdicts else []))
        assert chosen is not None
        verdicts[item.claim_id] = chosen.value
        for premise in item.claim.depends_on:
            edges.add((premise, item.claim_id))
    edges = {(a, b) for a, b in edges if a in verdicts and b in verdicts}
    return verdicts, sorted(edges)


def failing_components(verdicts: Mapping[str, str], edges: Sequence[tuple[str, str]]) -> set[str]:
    """Claims connected (either direction) to a failed or stale claim through dependencies."""
    neighbours: dict[str, set[str]] = {}
    for a, b in edges:
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    keep: set[str] = set()
    for start in [c for c, v in verdicts.items() if v in FAILED and c in neighbours]:
        stack = [start]
        while stack:
            node = stack.pop()
            if node not in keep:
                keep.add(node)
                stack.extend(neighbours.get(node, ()))
    return keep


def layers(nodes: set[str], edges: Sequence[tuple[str, str]]) -> dict[str, int]:
    """Longest distance from a root premise: premises left, dependants right."""
    depth = {node: 0 for node in nodes}
    for _ in range(len(nodes)):
        changed = False
        for a, b in edges:
            if a in nodes and b in nodes and depth[b] < depth[a] + 1:
                depth[b] = depth[a] + 1
                changed = True
        if not changed:
            break
    return depth


def _box_text(node: str, verdict: str) -> str:
    """The claim id wrapped at hyphens so every box fits its column, then the verdict."""
    return "\n".join(textwrap.wrap(node, WRAP, break_on_hyphens=True) + [verdict])


def _label(ax: Axes, x: float, y: float, text: str, colour: str) -> Text:
    """One claim's text centred on ``(x, y)``, framed as it would be alone (the frame measured for its box)."""
    return ax.text(x, y, text, ha="center", va="center", fontsize=FONT_PT, zorder=4,
                   bbox={"boxstyle": f"round,pad={PAD}", "facecolor": "white", "edgecolor": colour,
                         "linewidth": BOX_LINE_PT})


def _frame(ax: Axes, box: Box) -> None:
    """A box's rounded frame over exactly its laid-out extent (taller than its text when many edges meet it)."""
    from matplotlib.patches import FancyBboxPatch

    stroke = BOX_LINE_PT / 72 / 2
    rounding = PAD * FONT_PT / 72
    inset = stroke + rounding
    ax.add_patch(FancyBboxPatch((box.x0 + inset, box.y0 + inset), box.x1 - box.x0 - 2 * inset,
                                box.y1 - box.y0 - 2 * inset, boxstyle=f"round,pad={rounding}", facecolor="white",
                                edgecolor=_colour(box.verdict), linewidth=BOX_LINE_PT, zorder=3))


def _colour(verdict: str) -> str:
    return COLOURS.get(verdict, "#9e9e9e")


def measure(labels: Mapping[str, tuple[str, str]]) -> dict[str, Size]:
    """Each box's size and its frame's offset from the text anchor, in inches, read from drawn text.

    Widths are not guessed from character counts: the boxes are drawn on a scratch Agg canvas at the
    report's resolution and their frames' extents are transformed back to data coordinates, in
    which one unit is one inch. ``labels`` maps a node to its ``(text, verdict)``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    side = 8.0
    fig = Figure(figsize=(side, side), dpi=DPI)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(0, side)
    ax.set_ylim(0, side)
    drawn = {node: _label(ax, side / 2, side / 2, text, _colour(verdict)) for node, (text, verdict) in labels.items()}
    canvas.draw()
    renderer = canvas.get_renderer()
    to_data = ax.transData.inverted()
    stroke = BOX_LINE_PT / 72  # the frame's line is centred on its path: half of it lies outside
    sizes = {}
    for node, text in drawn.items():
        patch = text.get_bbox_patch()
        assert patch is not None
        (x0, y0), (x1, y1) = to_data.transform(patch.get_window_extent(renderer).get_points())
        sizes[node] = Size(width=x1 - x0 + stroke, height=y1 - y0 + stroke,
                           dx=(x0 + x1) / 2 - side / 2, dy=(y0 + y1) / 2 - side / 2)
    return sizes


def cascade_layout(items: Sequence[StoredResult]) -> Layout | None:
    """The cascade's geometry in inches (boxes and edge paths), or None when nothing cascades."""
    verdicts, edges = claim_graph(items)
    nodes = failing_components(verdicts, edges)
    if not nodes:
        return None
    shown = [(a, b) for a, b in edges if a in nodes and b in nodes]
    depth = layers(nodes, shown)
    labels = {node: (_box_text(node, verdicts[node]), verdicts[node]) for node in sorted(nodes)}
    return plan(depth, shown, labels, measure(labels))


def draw(layout: Layout) -> Figure:
    """The layout drawn at scale: one data unit is one inch, the title and legend above the boxes."""
    from matplotlib.lines import Line2D

    height = layout.height + HEADER_IN
    fig = new_figure(layout.width, height, layout=None)
    ax = fig.add_axes((0.0, 0.0, 1.0, layout.height / height))
    ax.set_xlim(0, layout.width)
    ax.set_ylim(0, layout.height)
    ax.set_axis_off()
    for route in layout.routes:
        source = layout.boxes[route.source].verdict
        colour = _colour(source) if source in FAILED else EDGE_GREY
        xs, ys = zip(*route.points)
        ax.plot(xs, ys, color=colour, linewidth=0.9, zorder=2, solid_capstyle="butt")
        tip = route.points[-1]
        ax.annotate("", xy=tip, xytext=(tip[0] - 0.1, tip[1]), zorder=2,
                    arrowprops={"arrowstyle": "-|>", "color": colour, "linewidth": 0.9, "shrinkA": 0,
                                "shrinkB": 0, "mutation_scale": 7})
    for box in layout.boxes.values():
        _frame(ax, box)
        ax.text(box.cx - box.dx, box.cy - box.dy, box.text, ha="center", va="center", fontsize=FONT_PT, zorder=4)
    verdicts = {box.verdict for box in layout.boxes.values()}
    shown = [v for v in COLOURS if v in verdicts] + sorted(verdicts - set(COLOURS))
    fig.legend(handles=[Line2D([0], [0], color=_colour(v), linewidth=3, label=v) for v in shown],
               loc="upper center", bbox_to_anchor=(0.5, 1 - 0.32 / height), ncol=len(shown), frameon=False,
               fontsize=8, title="box edge: the claim's worst verdict · arrow coloured when its premise failed",
               title_fontsize=8)
    fig.suptitle(TITLE, fontsize=9, y=1 - 0.06 / height, va="top")
    return fig


def cascade(items: Sequence[StoredResult]) -> bytes | None:
    """PNG of the failing parts of the dependency graph, or None when nothing cascades."""
    layout = cascade_layout(items)
    return None if layout is None else png_bytes(draw(layout))
