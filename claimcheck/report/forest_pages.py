"""The forest plot laid out over pictures: one per claims pack, split when a pack is too tall for one.

A claim's pack is the first folder under the claims root of its file (``claims/curves/...`` is
``curves``; a flat ``claims/`` folder is one pack named after it). A pack whose panels would make a
picture taller than :data:`MAX_HEIGHT_IN` is split across more pictures, a panel cut where it must
be (its rest marked as continued), so the font never shrinks to fit a long pack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from claimcheck.report import text
from claimcheck.report.claim_paths import pack_names
from claimcheck.report.forest import LEGEND_IN, Panel, panels
from claimcheck.store import StoredResult

#: The tallest picture in inches (about 2,970 px at the canvas's 110 dpi).
MAX_HEIGHT_IN = 27.0
#: A panel split over two pictures keeps at least this many rows on each side.
FEWEST_ROWS = 6


@dataclass(frozen=True)
class ForestPage:
    """One forest picture: the panels of one claims pack, or a part of them when the pack is too tall."""

    pack: str
    part: int  # 1-based
    parts: int
    panels: tuple[Panel, ...]

    @property
    def name(self) -> str:
        """The picture's file stem: the pack, with ``-1``, ``-2``, ... when the pack takes several pictures."""
        return self.pack if self.parts == 1 else f"{self.pack}-{self.part}"

    @property
    def title(self) -> str:
        return self.pack if self.parts == 1 else f"{self.pack} ({self.part} of {self.parts})"

    @property
    def rows(self) -> int:
        return sum(len(panel.rows) for panel in self.panels)


def _cut(panel: Panel, at: int) -> tuple[Panel, Panel]:
    """A panel's first ``at`` rows, and the rest marked as continued."""
    return (Panel(panel.kind, panel.unit, panel.decade, panel.rows[:at], panel.continued),
            Panel(panel.kind, panel.unit, panel.decade, panel.rows[at:], True))


def _fitting(panel: Panel, room: float) -> int:
    """How many of the panel's first rows fit in ``room`` inches (a panel's height grows with its rows)."""
    low, high = 0, len(panel.rows)
    while low < high:
        middle = (low + high + 1) // 2
        if _cut(panel, middle)[0].height <= room:
            low = middle
        else:
            high = middle - 1
    return low


def _split(found: Sequence[Panel], room: float) -> list[list[Panel]]:
    """Panels laid out in order over pictures of at most ``room`` inches.

    A panel that fits the picture in hand goes in whole; one taller than a picture fills what is
    left of it (when both parts keep :data:`FEWEST_ROWS`), else fills the next picture; any other
    panel starts the next picture. The rest of a cut panel goes on, marked as continued.
    """
    laid_out: list[list[Panel]] = [[]]
    used = 0.0
    queue = list(found)
    while queue:
        panel = queue.pop(0)
        if used + panel.height <= room:
            laid_out[-1].append(panel)
            used += panel.height
            continue
        count = len(panel.rows)
        left = _fitting(panel, room - used)
        if not laid_out[-1]:  # alone and still too tall: fill this picture, keeping enough for the next
            head, rest = _cut(panel, min(max(1, left), max(1, count - FEWEST_ROWS)))
        elif panel.height > room and left >= FEWEST_ROWS and count - left >= FEWEST_ROWS:
            head, rest = _cut(panel, left)
        else:
            head, rest = None, panel
        if head is not None:
            laid_out[-1].append(head)
        queue.insert(0, rest)
        laid_out.append([])
        used = 0.0
    return [chosen for chosen in laid_out if chosen]


def pages(items: Sequence[StoredResult], max_height: float = MAX_HEIGHT_IN) -> list[ForestPage]:
    """The forest pictures of a run: one per claims pack (sorted by name), split when taller than ``max_height``."""
    rows = [item for item in items if text.has_interval(item)]
    names = pack_names(item.claim.path for item in rows)
    by_pack: dict[str, list[StoredResult]] = {}
    for item in rows:
        by_pack.setdefault(names[item.claim.path], []).append(item)
    out = []
    for pack in sorted(by_pack):
        laid_out = _split(panels(by_pack[pack]), max_height - LEGEND_IN)
        out += [ForestPage(pack, part, len(laid_out), tuple(chosen)) for part, chosen in enumerate(laid_out, 1)]
    return out
