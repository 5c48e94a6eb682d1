"""Lan–DeMets spending functions: the alpha a sequential plan may have spent by information fraction t."""

from __future__ import annotations

import math
from typing import Literal

from scipy import special

Spending = Literal["pocock", "obf"]


def spent(t: float, alpha: float, spending: Spending) -> float:
    """Cumulative alpha spent by information fraction ``t`` in [0, 1]."""
    if t <= 0:
        return 0.0
    if spending == "pocock":
        return alpha * math.log1p((math.e - 1) * min(t, 1.0))
    return float(2 * special.ndtr(-special.ndtri(1 - alpha / 2) / math.sqrt(min(t, 1.0))))
