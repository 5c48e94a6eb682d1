"""The summary lines of a run's multiplicity: each family's FWER level and one suite-wide FDR line.

A reader weighs a verdict by the guarantee behind it. Each family (Holm over its members) keeps
P(any false refutation) and P(any false hold) at or below its level, the mean of its members'
alphas (:func:`~._family.family_alpha`), each member first tested at its own alpha over the
family's size. Across families nothing is guaranteed by Holm, so one more line states what
Benjamini–Hochberg over every member of the suite (``scipy.stats.false_discovery_control``)
would keep: the refutations and holds that stand at an expected false-discovery share of ``q``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from claimcheck.numbers import number
from claimcheck.verdict import Verdict

from ._family import FamilyMember, family_alpha


def family_lines(families: Mapping[str, Sequence[FamilyMember]], q: float = 0.05) -> list[str]:
    """One line per family (its size, decided members, FWER level), then the suite-wide BH line.

    Args:
        families: family name -> its members (absent ones included, at p = 1).
        q: the suite-wide false-discovery rate the last line is stated at.
    """
    lines = []
    everyone: list[FamilyMember] = []
    for name, members in sorted(families.items()):
        everyone.extend(members)
        decided = sum(m.verdict in (Verdict.HOLDS, Verdict.REFUTED) for m in members)
        level = family_alpha([m.alpha for m in members])
        lines.append(f"family {name}: Holm over {len(members)} items ({decided} decided), FWER level "
                     f"{number(level)} each way (each item first tested at its own alpha / {len(members)})")
    if everyone:
        refuted = _discoveries([m.pvalue if m.verdict is Verdict.REFUTED else 1.0 for m in everyone], q)
        held = _discoveries([m.hold_pvalue if m.verdict is Verdict.HOLDS else 1.0 for m in everyone], q)
        lines.append(f"suite-wide FDR (Benjamini–Hochberg over {len(everyone)} items, q = {number(q)}): "
                     f"{refuted} refutations and {held} holds stand")
    return lines


def _discoveries(pvalues: Sequence[float], q: float) -> int:
    """How many p-values Benjamini–Hochberg rejects at ``q``."""
    from scipy import stats  # slow to import; only the summary needs it

    adjusted = stats.false_discovery_control(np.clip(np.asarray(pvalues, dtype=float), 0.0, 1.0), method="bh")
    return int(np.sum(adjusted <= q))
