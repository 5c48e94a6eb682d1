"""A run's multiplicity families: who is a member of which, and the level each item samples to.

Membership comes from the claims tree, not from what ran: every sampled, in-scope item of every
claim collected for this machine is a member of its claim's family
(:func:`claimcheck.claims.families.family_of`), and a member that produced no decision (deselected
by ``-k`` or by path, errored, out of budget) counts at p = 1. An item that is not applicable on
this machine (its model is not installed, so it can never decide here) is not a member. So an item knows its family's size
before it samples, and its sequential stopping can aim at the level Holm will test it at first:
with weights ``alpha_i / level`` over a family whose weights sum to ``W``, that is
``alpha_i / W`` (``alpha_i / m`` when the level is the mean alpha). A decision whose sequential
p-value reaches it survives Holm whatever the other members measure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from claimcheck.engine.result import ItemResult
from claimcheck.stats import FamilyMember, family_alpha
from claimcheck.verdict import Verdict

#: The one family of a run adjusted without declared families (every member together).
SUITE = "suite"


class FamilySlot(NamedTuple):
    """One item's place in the families: its family's name and the alpha it is decided at."""

    family: str
    alpha: float


class Member(NamedTuple):
    """One member as the adjustment sees it: the position of its result (None when absent) and its inputs."""

    position: int | None
    item_id: str
    member: FamilyMember


def family_level(alphas: Sequence[float], level: float | None) -> float:
    """A family's level: the one given (``--claims-family-alpha``), else the mean of its members' alphas."""
    return family_alpha(alphas) if level is None else level


def stop_levels(slots: Mapping[str, FamilySlot], method: str, level: float | None = None) -> dict[str, float]:
    """Item id -> the level its sequential stopping aims at: the first step of its family's adjustment.

    Under Holm (and for Benjamini–Hochberg, whose strictest step is the same) member i is first
    tested at ``alpha_i * level / sum_j alpha_j``; with ``none`` each item keeps its own alpha.
    """
    if method == "none":
        return {item_id: slot.alpha for item_id, slot in slots.items()}
    totals: dict[str, list[float]] = {}
    for slot in slots.values():
        totals.setdefault(slot.family, []).append(slot.alpha)
    return {item_id: slot.alpha * family_level(totals[slot.family], level) / sum(totals[slot.family])
            for item_id, slot in slots.items()}


def group_members(results: Sequence[ItemResult], indices: Sequence[int], collected: Mapping[str, float] | None,
                  families: Mapping[str, str] | None) -> dict[str, list[Member]]:
    """Family name -> its members: the decided results at ``indices`` and every collected item that did not run.

    Args:
        results: the run's results.
        indices: which results are members (:func:`claimcheck.engine.adjudicate.family_members`).
        collected: item id -> alpha of every member of the tree (None: only the decided results).
        families: item id -> family name; None puts every member in one family, :data:`SUITE`.
            A result it does not name joins its claim's declared family, else its claim file's path.
    """
    def family(item_id: str, result: ItemResult | None = None) -> str:
        if families is None:
            return SUITE
        if item_id in families:
            return families[item_id]
        return (result.claim.family or result.claim.path) if result is not None else SUITE

    groups: dict[str, list[Member]] = {}
    for index in indices:
        result = results[index]
        decision = result.decision
        assert decision is not None
        member = FamilyMember(result.verdict, decision.pvalue, decision.hold_pvalue, decision.alpha)
        groups.setdefault(family(result.item_id, result), []).append(Member(index, result.item_id, member))
    ran = {results[i].item_id for i in indices}
    # an item that ran and was not applicable here (its model, backend or device) never decides:
    # it leaves its family rather than counting at p = 1
    ran |= {result.item_id for result in results if result.verdict is Verdict.NOT_APPLICABLE}
    for item_id, alpha in sorted((collected or {}).items()):
        if item_id not in ran:
            groups.setdefault(family(item_id), []).append(Member(None, item_id, FamilyMember.absent(alpha)))
    return groups

