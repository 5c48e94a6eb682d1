"""The cascade picture: which claims went stale because a premise did not hold.

Only the parts of the dependency graph that contain a failed or stale claim
are drawn, left to right from premises to the claims that rest on them, so the
picture answers one question: what else does this refutation knock out?
"""

from __future__ import annotations

from typing import Mapping, Sequence

from claimcheck.report.canvas import COLOURS, new_figure, png_bytes
from claimcheck.store import StoredResult
from claimcheck.verdict import FAILED_PREMISE, Verdict, worst

FAILED = {verdict.value for verdict in FAILED_PREMISE}


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


def cascade(items: Sequence[StoredResult]) -> bytes | None:
    """PNG of the failing parts of the dependency graph, or None when nothing cascades."""
    verdicts, edges = claim_graph(items)
    nodes = failing_components(verdicts, edges)
    if not nodes:
        return None
    depth = layers(nodes, edges)
    columns: dict[int, list[str]] = {}
    for node in sorted(nodes):
        columns.setdefault(depth[node], []).append(node)
    tallest = max(len(column) for column in columns.values())
    fig = new_figure(2.9 * len(columns) + 0.6, 0.55 * tallest + 1.0, layout=None)
    ax = fig.add_axes((0.01, 0.01, 0.98, 0.9))
    ax.set_axis_off()
    position = {}
    for x, column in columns.items():
        for row, node in enumerate(column):
            position[node] = (x, -(row - (len(column) - 1) / 2))
    for a, b in edges:
        if a in position and b in position:
            ax.annotate("", xy=position[b], xytext=position[a],
                        arrowprops={"arrowstyle": "->", "color": "#555555", "shrinkA": 42, "shrinkB": 42})
    for node, (x, y) in position.items():
        colour = COLOURS.get(verdicts[node], "#9e9e9e")
        ax.text(x, y, f"{node}\n{verdicts[node]}", ha="center", va="center", fontsize=7,
                bbox={"boxstyle": "round,pad=0.3", "facecolor": colour, "alpha": 0.25, "edgecolor": colour})
    ax.set_xlim(-0.6, max(columns) + 0.6)
    ax.set_ylim(-tallest / 2 - 0.2, tallest / 2 + 0.2)
    fig.suptitle("Dependency cascade: premises (left) and the claims resting on them", fontsize=9)
    return png_bytes(fig)
