"""What a decision tested, as typed fields on the decision: the claim's edge, its side, its scale.

A scipy result carries its ``alternative`` beside its p-value (``BinomTestResult``); a
:class:`~._decision.Decision` carries its :class:`Hypothesis` the same way. The rule declares it
(:meth:`claimcheck.rules.Rule.hypothesis`) and the procedure attaches it to every decision that
tested it on an interval; a decision that tested nothing (too few samples, a constant reading,
an undefined ratio) has none. The corrections that re-decide a finished decision (the between-run
widening, the dependence gate) read only this: never the rule's name, never ``details``. So a new
rule gets them by declaring its hypothesis.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Bound = Literal["at_least", "at_most", "within", "decreasing", "increasing"]
ORDERED: frozenset[str] = frozenset({"decreasing", "increasing"})  # bounds on the order of several groups
Scale = Literal["linear", "log"]
Statistic = Literal["mean", "median"]


@dataclass(frozen=True)
class Hypothesis:
    """The claim a decision tested, and how its figure moves between runs.

    Attributes:
        bound: HOLDS means the figure is ``at_least`` / ``at_most`` ``threshold``, or lies ``within``
            ``+-margin`` (an equivalence), or the groups' figures fall (``decreasing``) or rise
            (``increasing``) through the listed groups at every step (``ordering``, ``monotone``).
        statistic: ``median`` or ``mean``: the summary decided on.
        threshold: the claimed edge of ``at_least`` / ``at_most``, in the figure's units; of an ordered
            bound, how far one step may go against the order and still hold (0: strict).
        margin: the equivalence margin of ``within`` (relative on the ``log`` scale, as ``1 + margin``).
        scale: ``log`` for a figure that is a ratio of two levels: it is re-read as a log (between runs,
            and the dependence gate's per-round log-ratios); ``linear`` otherwise.
        paired: the figure is a per-round contrast of two interleaved arms (of an ordered bound: each step
            is decided on per-pair differences).
        assumed_spread: the between-run SD assumed on a first run, in within-run SEs; None when the
            figure takes no between-run component. A one-output timing figure carries a run's load and
            clock state whole (2.0); a contrast of two arms measured in one run cancels most of it (1.0).
    """

    bound: Bound
    statistic: Statistic
    threshold: float | None = None
    margin: float | None = None
    scale: Scale = "linear"
    paired: bool = False
    assumed_spread: float | None = None

    def __post_init__(self) -> None:
        if self.ordered and (self.threshold is None or not self.threshold >= 0):
            raise ValueError(f"`threshold` (a step's tolerance) must be a number >= 0 for bound `{self.bound}`; "
                             f"got {self.threshold!r}")
        edge = self.margin if self.bound == "within" else self.threshold
        if edge is None or not math.isfinite(edge):
            field = "margin" if self.bound == "within" else "threshold"
            raise ValueError(f"`{field}` must be a finite number for bound `{self.bound}`; got {edge!r}")

    @property
    def ordered(self) -> bool:
        """HOLDS is an order of several groups, not a bound on one figure."""
        return self.bound in ORDERED

    @property
    def at_least(self) -> bool:
        """HOLDS lies above the threshold."""
        return self.bound == "at_least"

    @property
    def edge(self) -> float:
        """The threshold, or the margin of an equivalence, as declared."""
        value = self.margin if self.bound == "within" else self.threshold
        assert value is not None  # checked at construction
        return value

    def to_record(self) -> dict[str, Any]:
        """JSON form."""
        return {"bound": self.bound, "statistic": self.statistic, "threshold": self.threshold,
                "margin": self.margin, "scale": self.scale, "paired": self.paired,
                "assumed_spread": self.assumed_spread}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Hypothesis:
        """Inverse of :meth:`to_record`."""

        def number(name: str) -> float | None:
            value = record.get(name)
            return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

        return cls(bound=record["bound"], statistic=record.get("statistic", "mean"), threshold=number("threshold"),
                   margin=number("margin"), scale=record.get("scale", "linear"), paired=bool(record.get("paired")),
                   assumed_spread=number("assumed_spread"))
