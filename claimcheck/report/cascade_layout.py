"""Where the cascade's boxes and edges go, in inches: columns, order, heights, ports and lanes.

Pure geometry from measured box sizes, so that it can be checked without drawing. Columns are the
layers (premises left); the order within a column comes from a few barycentre sweeps that reduce
crossings; heights pull each box towards its neighbours without letting boxes overlap. Every edge
leaves its source's right edge, runs horizontally to its column's right side, curves across the gap
to the next column, and either stubs into its target's left edge or, when it skips columns, runs
along a lane above (or below) every column it skips before curving down (or up) into its target.
Nothing but a stub inside its own box's row ever lies inside a column, so no edge crosses a box.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

__all__ = ["Box", "Layout", "Route", "Size", "crossings", "order", "plan"]

GAP_IN = 0.95  # between columns, where the edges curve
ROW_GAP_IN = 0.14  # between boxes of one column
STUB_IN = 0.08  # a column is this much wider than its widest box on each side, so every edge has a stub
MARGIN_IN = 0.2
MIN_WIDTH_IN = 7.0  # room for the title and the legend above a narrow graph
LANE_CLEAR_IN = 0.16  # a lane's distance from the boxes it passes
LANE_STEP_IN = 0.09  # between lanes that run side by side
PORT_STEP_IN = 0.055  # at most, between edges sharing a box side
PORT_BAND = 0.8  # the share of a box's height its edges spread over
CURVE_POINTS = 20
SWEEPS = 4

Point = tuple[float, float]


@dataclass(frozen=True)
class Size:
    """A box's measured extent and its frame's centre relative to the text anchor, in inches."""

    width: float
    height: float
    dx: float = 0.0
    dy: float = 0.0


@dataclass(frozen=True)
class Box:
    """One claim's box: its text and verdict, its frame's extent, and the anchor offset to draw it."""

    node: str
    text: str
    verdict: str
    x0: float
    y0: float
    x1: float
    y1: float
    dx: float
    dy: float

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


@dataclass(frozen=True)
class Route:
    """One premise -> dependant edge as the polyline that is drawn (curves are sampled)."""

    source: str
    target: str
    points: tuple[Point, ...]

    def segments(self) -> list[tuple[Point, Point]]:
        return list(zip(self.points, self.points[1:]))


@dataclass(frozen=True)
class Layout:
    """The whole picture's geometry: ``width`` x ``height`` inches, y pointing up."""

    width: float
    height: float
    boxes: Mapping[str, Box]
    routes: tuple[Route, ...]
    columns: tuple[tuple[str, ...], ...]  # top to bottom


def crossings(columns: Sequence[Sequence[str]], edges: Sequence[tuple[str, str]]) -> int:
    """Pairs of edges between the same two adjacent columns whose ends come in opposite orders."""
    rank = {node: (c, i) for c, column in enumerate(columns) for i, node in enumerate(column)}
    count = 0
    for c in range(len(columns) - 1):
        ends = [(rank[a][1], rank[b][1]) for a, b in edges if rank[a][0] == c and rank[b][0] == c + 1]
        count += sum(1 for i, (a1, b1) in enumerate(ends) for a2, b2 in ends[i + 1:] if (a1 - a2) * (b1 - b2) < 0)
    return count


def _neighbours(edges: Sequence[tuple[str, str]]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    before: dict[str, list[str]] = {}
    after: dict[str, list[str]] = {}
    for a, b in edges:
        after.setdefault(a, []).append(b)
        before.setdefault(b, []).append(a)
    return before, after


def _reorder(columns: list[list[str]], c: int, neighbours: Mapping[str, list[str]]) -> None:
    """Sort column ``c`` by the mean position of each box's neighbours (boxes without any stay put)."""
    position = {node: i - (len(column) - 1) / 2 for column in columns for i, node in enumerate(column)}

    def key(node: str) -> tuple[float, float]:
        near = neighbours.get(node, [])
        return (sum(position[m] for m in near) / len(near) if near else position[node], position[node])

    columns[c] = sorted(columns[c], key=key)


def order(columns: Sequence[Sequence[str]], edges: Sequence[tuple[str, str]], sweeps: int = SWEEPS) -> list[list[str]]:
    """The order within each column with the fewest crossings seen over a few barycentre sweeps.

    Deterministic: it starts from the given order, sorts stably, and keeps the first best.
    """
    before, after = _neighbours(edges)
    current = [list(column) for column in columns]
    best, fewest = [list(column) for column in current], crossings(current, edges)
    for _ in range(sweeps):
        for c in range(1, len(current)):
            _reorder(current, c, before)
        for c in range(len(current) - 2, -1, -1):
            _reorder(current, c, after)
        found = crossings(current, edges)
        if found < fewest:
            best, fewest = [list(column) for column in current], found
    return best


def _fit(column: Sequence[str], targets: Sequence[float], sizes: Mapping[str, Size]) -> dict[str, float]:
    """Centres as close as possible (least squares) to ``targets``, in order, boxes never closer than a gap.

    With ``S_i`` the least distance from the first centre to the i-th, ``y_i + S_i`` must not increase
    down the column, so the fit is an isotonic regression of ``target_i + S_i``.
    """
    from scipy.optimize import isotonic_regression

    offsets = [0.0]
    for upper, lower in zip(column, column[1:]):
        offsets.append(offsets[-1] + (sizes[upper].height + sizes[lower].height) / 2 + ROW_GAP_IN)
    fitted = isotonic_regression([t + s for t, s in zip(targets, offsets)], increasing=False).x
    return {node: float(z) - s for node, z, s in zip(column, fitted, offsets)}


def _heights(columns: Sequence[Sequence[str]], edges: Sequence[tuple[str, str]],
             sizes: Mapping[str, Size]) -> dict[str, float]:
    """Box centres: each column stacked, then pulled towards its premises, its dependants, its premises."""
    before, after = _neighbours(edges)
    y: dict[str, float] = {}
    for column in columns:
        y.update(_fit(column, [0.0] * len(column), sizes))
    last = len(columns) - 1
    for steps, near in ((range(1, last + 1), before), (range(last - 1, -1, -1), after), (range(1, last + 1), before)):
        for c in steps:
            targets = [sum(y[m] for m in near[n]) / len(near[n]) if near.get(n) else y[n] for n in columns[c]]
            y.update(_fit(columns[c], targets, sizes))
    return y


def _curve(start: Point, end: Point) -> list[Point]:
    """A cubic from ``start`` to ``end``, horizontal at both ends, sampled after ``start``.

    Its control points lie between the two x's, so the curve stays inside the gap it crosses.
    """
    (x0, y0), (x1, y1) = start, end
    half = (x1 - x0) / 2
    points = []
    for i in range(1, CURVE_POINTS + 1):
        t = i / CURVE_POINTS
        a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t ** 2, t ** 3
        points.append((a * x0 + b * (x0 + half) + c * (x1 - half) + d * x1, (a + b) * y0 + (c + d) * y1))
    return points


def _spread(centre: float, height: float, count: int) -> list[float]:
    """``count`` port heights on a box side, top first, centred and inside the middle of the side."""
    if count < 2:
        return [centre]
    step = min(PORT_STEP_IN, height * PORT_BAND / (count - 1))
    return [centre + step * ((count - 1) / 2 - i) for i in range(count)]


def _lanes(skips: Sequence[tuple[str, str]], depth: Mapping[str, int], columns: Sequence[Sequence[str]],
           boxes: Mapping[str, tuple[float, float, float, float]], lefts: Sequence[float],
           rights: Sequence[float], y: Mapping[str, float]) -> dict[tuple[str, str], float]:
    """The height of each skipping edge's lane: clear of every column it skips, apart from lanes beside it."""
    placed: list[tuple[float, float, float, int]] = []  # start, end, height, side (+1 above, -1 below)
    lanes = {}
    for a, b in sorted(skips, key=lambda e: (depth[e[1]] - depth[e[0]], e)):
        skipped = [n for c in range(depth[a] + 1, depth[b]) for n in columns[c]]
        above = max((boxes[n][3] for n in skipped), default=max(y[a], y[b])) + LANE_CLEAR_IN
        below = min((boxes[n][1] for n in skipped), default=min(y[a], y[b])) - LANE_CLEAR_IN
        up = abs(above - y[a]) + abs(above - y[b]) <= abs(below - y[a]) + abs(below - y[b])
        side, height = (1, above) if up else (-1, below)
        start, end = lefts[depth[a] + 1], rights[depth[b] - 1]
        while True:
            beside = [h for s, e, h, k in placed if k == side and s <= end and start <= e
                      and abs(h - height) < LANE_STEP_IN - 1e-9]
            if not beside:
                break
            height = (max(beside) if up else min(beside)) + side * LANE_STEP_IN
        placed.append((start, end, height, side))
        lanes[(a, b)] = height
    return lanes


def _room_for_ports(sizes: Mapping[str, Size], edges: Sequence[tuple[str, str]]) -> dict[str, Size]:
    """Sizes with each box tall enough for its edges to arrive (and leave) a port step apart."""
    before, after = _neighbours(edges)
    grown = {}
    for node, size in sizes.items():
        ports = max(len(before.get(node, [])), len(after.get(node, [])))
        height = max(size.height, (ports - 1) * PORT_STEP_IN / PORT_BAND)
        grown[node] = Size(size.width, height, size.dx, size.dy)
    return grown


def plan(depth: Mapping[str, int], edges: Sequence[tuple[str, str]], labels: Mapping[str, tuple[str, str]],
         sizes: Mapping[str, Size]) -> Layout:
    """The geometry of the graph: ``depth`` gives each node's column, ``labels`` its (text, verdict).

    Args:
        depth: column of every node (premises smaller); every edge must point to a larger column.
        edges: premise -> dependant pairs among the nodes.
        labels: each node's box text and verdict, carried into the boxes for drawing.
        sizes: each node's measured box size (see :func:`claimcheck.report.cascade.measure`).
    """
    if any(depth[b] <= depth[a] for a, b in edges):
        raise ValueError("every edge must run from a column to a later one")
    columns = order([sorted(n for n in depth if depth[n] == c) for c in range(max(depth.values()) + 1)], edges)
    sizes = _room_for_ports(sizes, edges)
    y = _heights(columns, edges, sizes)
    widths = [max((sizes[n].width for n in column), default=0.0) + 2 * STUB_IN for column in columns]
    content = sum(widths) + GAP_IN * (len(columns) - 1)
    lefts = [max(MARGIN_IN, (MIN_WIDTH_IN - content) / 2)]
    for width in widths[:-1]:
        lefts.append(lefts[-1] + width + GAP_IN)
    rights = [left + width for left, width in zip(lefts, widths)]
    raw = {}  # node -> x0, y0, x1, y1 before the vertical shift
    for c, column in enumerate(columns):
        middle = (lefts[c] + rights[c]) / 2
        for n in column:
            w, h = sizes[n].width, sizes[n].height
            raw[n] = (middle - w / 2, y[n] - h / 2, middle + w / 2, y[n] + h / 2)
    skips = [(a, b) for a, b in edges if depth[b] - depth[a] > 1]
    lanes = _lanes(skips, depth, columns, raw, lefts, rights, y)

    leaving: dict[str, list[tuple[float, str, tuple[str, str]]]] = {}
    entering: dict[str, list[tuple[float, str, tuple[str, str]]]] = {}
    for a, b in edges:
        leaving.setdefault(a, []).append((lanes.get((a, b), y[b]), b, (a, b)))
        entering.setdefault(b, []).append((lanes.get((a, b), y[a]), a, (a, b)))
    out_port: dict[tuple[str, str], float] = {}
    in_port: dict[tuple[str, str], float] = {}
    for ports, sides in ((out_port, leaving), (in_port, entering)):
        for node, ends in sides.items():
            ends.sort(key=lambda end: (-end[0], end[1]))
            heights = _spread(y[node], sizes[node].height, len(ends))
            ports.update({edge: height for (_, _, edge), height in zip(ends, heights)})

    paths = []
    for a, b in edges:
        start, end = (raw[a][2], out_port[(a, b)]), (raw[b][0], in_port[(a, b)])
        points = [start, (rights[depth[a]], start[1])]
        if (a, b) in lanes:
            lane = lanes[(a, b)]
            points += _curve(points[-1], (lefts[depth[a] + 1], lane))
            points.append((rights[depth[b] - 1], lane))
        points += _curve(points[-1], (lefts[depth[b]], end[1]))
        points.append(end)
        paths.append((a, b, [p for i, p in enumerate(points) if i == 0 or p != points[i - 1]]))

    bottom = min([r[1] for r in raw.values()] + list(lanes.values())) - MARGIN_IN
    top = max([r[3] for r in raw.values()] + list(lanes.values())) + MARGIN_IN
    boxes = {n: Box(n, labels[n][0], labels[n][1], x0, y0 - bottom, x1, y1 - bottom, sizes[n].dx, sizes[n].dy)
             for n, (x0, y0, x1, y1) in raw.items()}
    routes = tuple(Route(a, b, tuple((x, py - bottom) for x, py in points)) for a, b, points in paths)
    return Layout(width=max(MIN_WIDTH_IN, rights[-1] + MARGIN_IN), height=top - bottom, boxes=boxes,
                  routes=routes, columns=tuple(tuple(column) for column in columns))
