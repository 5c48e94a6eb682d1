"""The summary lines of a run's multiplicity: each family's FWER level and one suite-wide FDR line.

A reader weighs a verdict by the guarantee behind it. Each family (Holm over its members) keeps
P(any false refutation) and P(any false hold) at or below its level, the mean of its members'
alphas (:func:`~._family.family_alpha`), each member first tested at its own alpha over the
family's size. Across families nothing is guaranteed by Holm, so one more line states what
Benjamini–Hochberg over every member of the suite (``scipy.stats.false_discovery_control``)
would keep: the refutations and holds that stand at an expected false-discovery share of ``q``.

A suite of many families would print a line for each; past ``shown`` families only those whose
adjustment undid a decision are listed (the ones a reader must look at), with one total line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from claimcheck.numbers import number
from claimcheck.verdict import Verdict

from ._family import _NAMES, FamilyMember, Method, family_alpha, two_sided_family

#: At most this many families get a line each; beyond it only families with undone decisions do.
SHOWN_FAMILIES = 8


class FamilyCount(NamedTuple):
    """One family as the summary reports it."""

    name: str
    size: int
    decided: int
    undone: int
    level: float


def family_lines(families: Mapping[str, Sequence[FamilyMember]], q: float = 0.05, *, method: Method = "holm",
                 level: float | None = None, shown: int = SHOWN_FAMILIES) -> list[str]:
    """One line per family (its size, decided and undone members, FWER level), then the suite-wide BH line.

    Args:
        families: family name -> its members (absent ones included, at p = 1).
        q: the suite-wide false-discovery rate the last line is stated at.
        method: the adjustment applied within each family (``holm`` or ``bh``).
        level: every family's level when one was given (``--claims-family-alpha``); else each
            family's mean alpha.
        shown: with more families than this, only those with an undone decision get a line
            (at most ``shown`` of them), and one line totals the rest.
    """
    counts = [_count(name, members, method, level) for name, members in sorted(families.items())]
    listed = counts if len(counts) <= shown else [c for c in counts if c.undone][:shown]
    title = _NAMES.get(method, method)
    lines = [_line(c, title, level) for c in listed]
    if len(listed) < len(counts):
        undone = sum(c.undone for c in counts)
        with_undone = sum(1 for c in counts if c.undone)
        rest = len(counts) - len(listed)
        lines.append(f"families: {len(counts)} ({title} within each; {sum(c.size for c in counts)} items, "
                     f"{sum(c.decided for c in counts)} decided, {undone} undone in {with_undone} families); "
                     f"{rest} not listed" + (" (nothing undone in them)" if with_undone <= len(listed) else ""))
    everyone = [m for members in families.values() for m in members]
    if everyone:
        refuted = _discoveries([m.pvalue if m.verdict is Verdict.REFUTED else 1.0 for m in everyone], q)
        held = _discoveries([m.hold_pvalue if m.verdict is Verdict.HOLDS else 1.0 for m in everyone], q)
        lines.append(f"suite-wide FDR (Benjamini–Hochberg over {len(everyone)} items, q = {number(q)}): "
                     f"{refuted} refutations and {held} holds stand")
    return lines


def _count(name: str, members: Sequence[FamilyMember], method: Method, level: float | None) -> FamilyCount:
    chosen = family_alpha([m.alpha for m in members]) if level is None else level
    decided = [m.verdict in (Verdict.HOLDS, Verdict.REFUTED) for m in members]
    outcomes = two_sided_family(members, method, chosen)
    undone = sum(d and not o.survived for d, o in zip(decided, outcomes))
    return FamilyCount(name, len(members), sum(decided), undone, chosen)


def _line(count: FamilyCount, title: str, level: float | None) -> str:
    first = (f"its own alpha / {count.size}" if level is None
             else f"its own alpha x {number(count.level)} / the sum of the family's alphas")
    undone = f", {count.undone} undone" if count.undone else ""
    return (f"family {count.name}: {title} over {count.size} items ({count.decided} decided{undone}), FWER level "
            f"{number(count.level)} each way (each item first tested at {first})")


def _discoveries(pvalues: Sequence[float], q: float) -> int:
    """How many p-values Benjamini–Hochberg rejects at ``q``."""
    from scipy import stats  # slow to import; only the summary needs it

    adjusted = stats.false_discovery_control(np.clip(np.asarray(pvalues, dtype=float), 0.0, 1.0), method="bh")
    return int(np.sum(adjusted <= q))
