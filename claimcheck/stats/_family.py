"""Suite-level multiplicity: a run checks many claims, so some true ones will look refuted by chance.

Holm (default) keeps the family-wise error, P(any true claim refuted), <= alpha for any
dependence between claims. Benjamini–Hochberg (``"bh"``) keeps the expected share of
refutations that are wrong <= alpha (for independent or positively dependent p-values) and
loses less power when many claims are false. Only refutations are adjusted: a REFUTED claim
whose adjusted p-value exceeds alpha becomes INCONCLUSIVE; HOLDS and INCONCLUSIVE stay.
Deterministic refutations (``exact``, an observed event for ``zero_rate``) carry p = 0 and
always survive.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np

from claimcheck.numbers import number as fmt
from claimcheck.verdict import Verdict

from ._decision import Decision

Method = Literal["holm", "bh", "none"]
_NAMES = {"holm": "Holm", "bh": "Benjamini–Hochberg", "none": "no adjustment"}


class FamilyAdjustment(NamedTuple):
    """Adjusted verdict of one claim, its adjusted p-value, and why it changed (None if it did not)."""

    verdict: Verdict
    pvalue: float
    reason: str | None


def adjust_pvalues(pvalues: Sequence[float], method: Method = "holm") -> np.ndarray:
    """Adjusted p-values (missing/NaN count as 1). Holm's step-down; BH via ``stats.false_discovery_control``."""
    if method not in _NAMES:
        raise ValueError(f"`method` must be one of {', '.join(map(repr, _NAMES))}; got {method!r}")
    p = np.array([1.0 if v is None or not math.isfinite(v) else v for v in pvalues], dtype=float)
    if p.size == 0 or method == "none":
        return p
    if method == "bh":
        from scipy import stats  # scipy.stats takes seconds to import; keep `import claimcheck.stats` light

        return stats.false_discovery_control(p, method="bh")
    order = np.argsort(p, kind="stable")
    m = p.size
    stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted


def family_adjustment(
    decisions: Sequence[Decision], method: Method = "holm", alpha: float = 0.05
) -> list[FamilyAdjustment]:
    """Adjust every decision of a run together; the decisions themselves are not modified."""
    adjusted = adjust_pvalues([d.pvalue for d in decisions], method)
    out = []
    for d, p in zip(decisions, adjusted):
        if d.verdict is Verdict.REFUTED and p > alpha:
            why = f"refutation does not survive {_NAMES[method]} over {len(decisions)} claims (adjusted p = {fmt(p)})"
            out.append(FamilyAdjustment(Verdict.INCONCLUSIVE, float(p), why))
        else:
            out.append(FamilyAdjustment(d.verdict, float(p), None))
    return out


def adjust_family(decisions: Sequence[Decision], method: Method = "holm", alpha: float = 0.05) -> list[Verdict]:
    """Verdicts after suite-level multiplicity adjustment, in the order of ``decisions``."""
    return [a.verdict for a in family_adjustment(decisions, method, alpha)]
