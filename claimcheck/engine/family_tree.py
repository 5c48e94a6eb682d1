"""The members of a run's families, read from the claims tree before any item runs.

:func:`tree_slots` lists every sampled item of the tree that is in scope on this machine with its
family (:func:`claimcheck.claims.families.family_of`) and alpha; the items' stopping levels
(:func:`claimcheck.engine.families.stop_levels`) and the run's adjustment both read it, so an item
samples to the level the family it will be adjusted in tests it at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from claimcheck.claim import Claim
from claimcheck.claims.families import family_of
from claimcheck.claims.loader import expand_grid, item_id
from claimcheck.engine.families import FamilySlot
from claimcheck.engine.runner import scope_problem
from claimcheck.probing.registry import UnknownProbeError, get_probe


#: Why an item's params are not applicable on this machine (e.g. its model is not installed), or None.
Unavailable = Callable[[Mapping[str, Any]], "str | None"]


def tree_slots(claims: Iterable[Claim], profile: str, machine: Mapping[str, Any], roots: Sequence[Path],
               alpha: float | None = None, unavailable: Unavailable | None = None) -> dict[str, FamilySlot]:
    """Item id -> family and alpha of every sampled item of ``claims`` in scope on ``machine``.

    Items of deterministic probes (no sampling error) and of unknown probes (their file reports
    that at collection) are not members, and neither is an item that is not applicable here
    because its model cannot be loaded on this machine (``unavailable``): it never
    decides, so counting it at p = 1 would only shrink every other member's level. The probes must
    be loaded.

    Args:
        claims: the claims tree and every claim collected or run (a repeated id counts once).
        profile: the machine profile the items are collected under.
        roots: the claims folders, then the project root (:func:`~claimcheck.claims.families.family_of`).
        alpha: ``--claims-alpha`` when given (it replaces every claim's alpha).
        unavailable: params -> why the item is not applicable here (its model is not installed), or
            None; the plugin passes :func:`claimcheck.models.unavailable_model`. None: every item in
            scope is a member.
    """
    slots: dict[str, FamilySlot] = {}
    seen: set[str] = set()
    for claim in claims:
        if claim.id in seen:
            continue
        seen.add(claim.id)
        try:
            if get_probe(claim.probe.name).deterministic:
                continue
        except UnknownProbeError:
            continue
        name = family_of(claim, roots)
        if claim.profiles:
            claim = claim.for_profile(profile)
        for point, params in expand_grid(claim):
            if scope_problem(claim, params, machine) is None and (unavailable is None or unavailable(params) is None):
                slots[item_id(claim.id, point)] = FamilySlot(name, claim.check.alpha if alpha is None else alpha)
    return slots
