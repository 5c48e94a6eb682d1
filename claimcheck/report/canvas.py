"""Figure helpers every report picture shares: verdict colours, a blank figure, its PNG bytes.

Kept apart from :mod:`claimcheck.report.plots` so that other pictures (the cascade, the comparison)
can draw without importing the plots module that lists them. matplotlib is imported only when a
figure is made, through its object-oriented ``Figure`` API (no pyplot, no global backend).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Literal

from claimcheck.outcome import policy

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Verdict name -> colour, the same in every picture and in the HTML report (the verdict policy's colours).
COLOURS = {verdict.value: hex_colour for verdict, hex_colour in policy.COLOURS.items()}
#: The colour of a cell with no result (the item did not run on that class).
NOT_RUN_COLOUR = "#9e9e9e"

DPI = 110

Layout = Literal["constrained", "compressed", "tight"]


def new_figure(width: float, height: float, *, layout: Layout | None = "constrained") -> Figure:
    """A detached matplotlib figure (no pyplot state), ``width`` x ``height`` inches."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout=layout)


def png_bytes(fig: Figure) -> bytes:
    """The figure rendered as PNG, in memory."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()
