"""The cascade picture: which claims went stale because a premise did not hold.

Only the parts of the dependency graph that contain a failed or stale claim
are drawn, left to right from premises to the claims that rest on them, so the
picture answers one question: what else does this refutation knock out?
"""

from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

from claimcheck.report.canvas import COLOURS, new_figure, png_bytes
from claimcheck.store import StoredResult
from claimcheck.verdict import FAILED_PREMISE, Verdict, worst

FAILED = {verdict.value for verdict in FAILED_PREMISE}
WRAP = 26  # characters per line in a box
COLUMN_IN = 2.6  # inches per column of the layout
ROW_IN = 0.8  # inches per box in the tallest column


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


def cascade(items: Sequence[StoredResult]) -> bytes | None:
    """PNG of the failing parts of the dependency graph, or None when nothing cascades.

    Arrows are clipped to the boxes they join (they start and end at the box edges), and an arrow
    that skips a column runs through the gaps and over the boxes in between.
    """
    verdicts, edges = claim_graph(items)
    nodes = failing_components(verdicts, edges)
    if not nodes:
        return None
    from matplotlib.lines import Line2D

    depth = layers(nodes, edges)
    columns: dict[int, list[str]] = {}
    for node in sorted(nodes):
        columns.setdefault(depth[node], []).append(node)
    tallest = max(len(column) for column in columns.values())
    fig = new_figure(COLUMN_IN * len(columns) + 0.4, ROW_IN * tallest + 1.3)
    ax = fig.add_subplot()
    ax.set_axis_off()
    position = {}
    for x, column in columns.items():
        for row, node in enumerate(column):
            position[node] = (float(x), -(row - (len(column) - 1) / 2))
    boxes = {}
    for node, (left, y) in position.items():
        colour = COLOURS.get(verdicts[node], "#9e9e9e")
        boxes[node] = ax.text(left, y, _box_text(node, verdicts[node]), ha="center", va="center", fontsize=7, zorder=3,
                              bbox={"boxstyle": "round,pad=0.35", "facecolor": "white", "edgecolor": colour,
                                    "linewidth": 1.6})
    top = tallest / 2
    for a, b in edges:
        if a not in position or b not in position:
            continue
        arrow = {"color": "#555555", "shrinkA": 3, "shrinkB": 3}
        if depth[b] - depth[a] > 1:
            # Through the gaps beside the columns in between and over their top box, never under a box.
            rise, fall = (depth[a] + 0.5, top + 0.3), (depth[b] - 0.5, top + 0.3)
            ax.annotate("", xy=rise, xytext=position[a], zorder=2,
                        arrowprops={**arrow, "arrowstyle": "-", "patchA": boxes[a].get_bbox_patch(), "shrinkB": 0})
            ax.plot([rise[0], fall[0]], [rise[1], fall[1]], color="#555555", linewidth=1.0, zorder=2)
            ax.annotate("", xy=position[b], xytext=fall, zorder=2,
                        arrowprops={**arrow, "arrowstyle": "-|>", "patchB": boxes[b].get_bbox_patch(), "shrinkA": 0})
        else:
            ax.annotate("", xy=position[b], xytext=position[a], zorder=2,
                        arrowprops={**arrow, "arrowstyle": "-|>", "patchA": boxes[a].get_bbox_patch(),
                                    "patchB": boxes[b].get_bbox_patch()})
    ax.set_xlim(-0.5, max(columns) + 0.5)
    ax.set_ylim(-top - 0.1, top + 0.45)
    shown = [v for v in COLOURS if v in {verdicts[n] for n in nodes}]
    ax.legend(handles=[Line2D([0], [0], color=COLOURS[v], linewidth=3, label=v) for v in shown],
              loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(shown),
              frameon=False, fontsize=8, title="box edge = the claim's worst verdict", title_fontsize=8)
    fig.suptitle("Dependency cascade: premises (left) → the claims resting on them (right)", fontsize=9)
    return png_bytes(fig)
