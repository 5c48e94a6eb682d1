"""What a rule's figure is, declared by the rule, so reports never infer it from names or labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FigureKind = Literal["value", "ratio", "rate", "order"]
Sides = Literal["two", "upper", "lower"]


@dataclass(frozen=True)
class Figure:
    """A rule's figure as a reader sees it.

    Attributes:
        kind: ``value`` (a level, in the output's unit), ``ratio`` (of two levels), ``rate`` (a share of
            events) or ``order`` (a ranking, with no single number).
        sides: ``two`` for an interval with two finite ends; ``upper`` / ``lower`` when the rule reports a
            one-sided bound (the other end is the edge of the quantity's range).
        non_negative: the figure can never be negative (a ratio of levels, a rate).
    """

    kind: FigureKind = "value"
    sides: Sides = "two"
    non_negative: bool = False


VALUE = Figure()
RATIO = Figure("ratio", non_negative=True)
RATE = Figure("rate", non_negative=True)
ORDER = Figure("order")
