"""What a probe declares about its report picture: which kind of plot, drawn from which outputs or artifact.

Kept apart from the registry so reports can read the declaration's type without the probe machinery,
and so a probe's picture is stated where the probe is registered, never inferred from its artifacts.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The plot kinds a report knows how to draw.
KINDS = ("sweep", "arms", "rates")


@dataclass(frozen=True)
class PackPlot:
    """The picture a report draws from one probe's items, naming the data it reads so nothing is guessed.

    Kinds, and the fields each reads:

    - ``sweep``: ``outputs`` (means with 95% intervals, in their declared units) against the numeric
      param ``x`` (in ``x_unit``); ``reference`` is drawn dashed. Level samples ``<output>@<x>=<value>``
      of a swept item count as points at that value.
    - ``arms``: ``outputs`` are arms of one comparison, drawn side by side per item, one colour each.
    - ``rates``: the artifact ``artifact`` is ``{row: {numerator: {event: k}, denominator: {event: n}}}``;
      each row's ``k/n`` per event in ``events`` is drawn with its exact binomial interval.

    Attributes:
        name: the file stem under ``plots/`` (unique across probes).
        title: the heading above the picture.
        caption: one sentence under it saying what is drawn.
    """

    name: str
    title: str
    kind: str
    caption: str = ""
    outputs: tuple[str, ...] = ()
    reference: str = ""
    x: str = ""
    x_unit: str = ""
    artifact: str = ""
    events: tuple[str, ...] = ()
    numerator: str = ""
    denominator: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"pack plot `{self.name}`: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        needs = {"sweep": ("outputs", "x"), "arms": ("outputs",), "rates": ("artifact", "events", "numerator",
                                                                            "denominator")}[self.kind]
        missing = [name for name in needs if not getattr(self, name)]
        if missing:
            raise ValueError(f"pack plot `{self.name}` ({self.kind}) needs {', '.join(missing)}")
