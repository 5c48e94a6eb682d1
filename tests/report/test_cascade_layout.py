"""The cascade's geometry: no edge is drawn over a box, edges run right edge -> gap -> left edge."""

from __future__ import annotations

import random

import pytest

from claimcheck.claim import Claim
from claimcheck.report.cascade import cascade_layout, draw
from claimcheck.report.cascade_layout import Box, Layout, Size, crossings, order, plan
from claimcheck.engine.result import ItemResult
from claimcheck.store import StoredResult
from claimcheck.verdict import Verdict

Point = tuple[float, float]


def _item(claim_id: str, verdict: str, depends_on: list[str] | None = None) -> StoredResult:
    claim = Claim.from_record({"id": claim_id, "depends_on": depends_on or []})
    result = ItemResult(claim=claim, item_id=claim_id, params={}, raw_verdict=Verdict(verdict), raw_reason="")
    return StoredResult(run_id="run", run_started="", run_status="complete", result=result)


LONG = "b-premise-with-a-rather-long-identifier-that-wraps-twice"
#: Four columns, edges skipping one and two columns, boxes of different widths and a fan-in of six.
ITEMS = [
    _item("root", "refuted"), _item("other-root", "holds"),
    *[_item(f"p{i}", "holds") for i in range(5)],
    _item("a", "stale", ["root", *[f"p{i}" for i in range(5)]]),
    _item(LONG, "stale", ["root", "other-root"]),
    _item("c", "stale", ["a"]), _item("d", "stale", ["a", LONG, "root"]),
    _item("e", "stale", ["c", "root", "other-root"]), _item("f", "holds", ["d", LONG]),
    _item("unrelated", "holds"),
]


@pytest.fixture(scope="module")
def layout() -> Layout:
    found = cascade_layout(ITEMS)
    assert found is not None
    return found


def _crosses(segment: tuple[Point, Point], x0: float, y0: float, x1: float, y1: float) -> bool:
    """Whether a segment meets the closed rectangle (Liang-Barsky clipping)."""
    (ax, ay), (bx, by) = segment
    low, high = 0.0, 1.0
    for step, near, far in ((bx - ax, x0 - ax, x1 - ax), (by - ay, y0 - ay, y1 - ay)):
        if step == 0:
            if near > 0 or far < 0:
                return False
            continue
        t0, t1 = sorted((near / step, far / step))
        low, high = max(low, t0), min(high, t1)
        if low > high:
            return False
    return True


def _inside(box: Box, shrink: float = 0.0) -> tuple[float, float, float, float]:
    return box.x0 + shrink, box.y0 + shrink, box.x1 - shrink, box.y1 - shrink


def test_the_checker_sees_a_segment_through_a_box() -> None:
    box = Box("n", "", "holds", 1.0, -0.1, 1.4, 0.1, 0.0, 0.0)
    assert _crosses(((0.0, 0.0), (2.0, 0.0)), *_inside(box)), "straight through"
    assert _crosses(((0.0, -1.0), (2.0, 1.0)), *_inside(box)), "diagonally through the middle"
    assert not _crosses(((0.0, 0.5), (2.0, 0.5)), *_inside(box)), "above"
    assert not _crosses(((0.0, 0.0), (0.9, 0.0)), *_inside(box)), "stops short"


def test_the_graph_has_what_the_routing_must_handle(layout: Layout) -> None:
    column = {node: c for c, nodes in enumerate(layout.columns) for node in nodes}
    assert len(layout.columns) == 4 and "unrelated" not in layout.boxes
    skips = {(r.source, r.target) for r in layout.routes if column[r.target] - column[r.source] > 1}
    assert {("root", "d"), ("root", "e"), ("other-root", "e"), (LONG, "f")} <= skips


def test_no_edge_is_drawn_over_a_box(layout: Layout) -> None:
    for route in layout.routes:
        for segment in route.segments():
            for node, box in layout.boxes.items():
                if node in (route.source, route.target):
                    # Its own boxes: it may touch their sides, never enter them.
                    assert not _crosses(segment, *_inside(box, 1e-6)), f"{route.source}->{route.target} enters {node}"
                else:
                    assert not _crosses(segment, *_inside(box)), f"{route.source}->{route.target} crosses {node}"


def test_edges_leave_the_right_side_and_enter_the_left_side(layout: Layout) -> None:
    for route in layout.routes:
        source, target = layout.boxes[route.source], layout.boxes[route.target]
        (sx, sy), (tx, ty) = route.points[0], route.points[-1]
        assert sx == pytest.approx(source.x1) and source.y0 < sy < source.y1
        assert tx == pytest.approx(target.x0) and target.y0 < ty < target.y1
        xs = [x for x, _ in route.points]
        assert all(b >= a - 1e-12 for a, b in zip(xs, xs[1:])), "an edge never runs backwards"
        assert route.points[1][1] == sy and route.points[-2][1] == ty, "horizontal stubs at both ends"


def test_no_two_edges_share_a_stretch(layout: Layout) -> None:
    flat = [(min(a[0], b[0]), max(a[0], b[0]), a[1], (r.source, r.target))
            for r in layout.routes for a, b in r.segments() if a[1] == b[1] and a[0] != b[0]]
    for i, (lo1, hi1, y1, e1) in enumerate(flat):
        for lo2, hi2, y2, e2 in flat[i + 1:]:
            if e1 != e2 and abs(y1 - y2) < 1e-9:
                assert min(hi1, hi2) - max(lo1, lo2) <= 1e-9, f"{e1} and {e2} overlap at y={y1:.3f}"


def test_the_layout_is_deterministic_whatever_the_item_order(layout: Layout) -> None:
    shuffled = list(ITEMS)
    random.Random(7).shuffle(shuffled)
    assert cascade_layout(shuffled) == layout


def test_ordering_removes_an_avoidable_crossing() -> None:
    columns, edges = [["a1", "a2"], ["b1", "b2"]], [("a1", "b2"), ("a2", "b1")]
    assert crossings(columns, edges) == 1
    assert crossings(order(columns, edges), edges) == 0


def test_a_box_grows_to_give_every_arriving_edge_its_own_port() -> None:
    premises = [f"p{i}" for i in range(12)]
    depth = {**{p: 0 for p in premises}, "hub": 1}
    sizes = {n: Size(1.0, 0.3) for n in depth}
    labels = {n: (n, "holds") for n in depth}
    found = plan(depth, [(p, "hub") for p in premises], labels, sizes)
    ports = sorted(r.points[-1][1] for r in found.routes)
    assert min(b - a for a, b in zip(ports, ports[1:])) > 0.04
    hub = found.boxes["hub"]
    assert hub.y0 < ports[0] and ports[-1] < hub.y1


def test_every_drawn_box_matches_the_layout_and_holds_its_text(layout: Layout) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = draw(layout)
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    to_data = ax.transData.inverted()
    by_text = {box.text: box for box in layout.boxes.values()}
    texts = [t for t in ax.texts if t.get_text() in by_text]
    assert len(texts) == len(layout.boxes)
    for text in texts:
        box = by_text[text.get_text()]
        (x0, y0), (x1, y1) = to_data.transform(text.get_window_extent(renderer).get_points())
        assert box.x0 < x0 and x1 < box.x1 and box.y0 < y0 and y1 < box.y1, f"{box.node}'s text leaves its box"
    frames = [to_data.transform(p.get_window_extent(renderer).get_points()) for p in ax.patches]
    for box in layout.boxes.values():
        assert any(abs(f[0][0] - box.x0) < 0.02 and abs(f[1][1] - box.y1) < 0.02
                   and abs(f[1][0] - box.x1) < 0.02 and abs(f[0][1] - box.y0) < 0.02 for f in frames), box.node
