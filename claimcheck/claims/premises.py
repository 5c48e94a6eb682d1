"""Checks across claims: unique ids, premises (``depends_on``) that exist and form no cycle, and
one wording per withdrawn decomposition.

Each returns every problem it finds, at the line of the field that has it, so
``claimcheck validate`` can list them all; collection raises the first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from claimcheck.claim import Claim
from claimcheck.errors import ClaimError
from claimcheck.suggest import did_you_mean


def duplicate_problems(claims: Iterable[Claim]) -> list[ClaimError]:
    """An error at every repeated id, naming where it was first defined."""
    seen: dict[str, Claim] = {}
    problems = []
    for claim in claims:
        if claim.id in seen:
            first = seen[claim.id]
            problems.append(ClaimError(claim.path, claim.line_of("id"), "id",
                                       f"duplicate claim id `{claim.id}` (first defined at {first.path}:{first.line})"))
        else:
            seen[claim.id] = claim
    return problems


def dependency_problems(claims: Sequence[Claim], known: Iterable[Claim] = ()) -> list[ClaimError]:
    """Every unknown premise and every cycle among ``claims``.

    Args:
        claims: the claims to check.
        known: other claims of the tree, which premises may name (their own problems are not reported).
    """
    by_id = {claim.id: claim for claim in known}
    by_id.update({claim.id: claim for claim in claims})
    problems: list[ClaimError] = []
    for claim in claims:
        for premise in claim.depends_on:
            if premise not in by_id:
                hint = did_you_mean(premise, by_id)
                problems.append(ClaimError(claim.path, claim.line_of("depends_on"), "depends_on",
                                           f"unknown claim `{premise}`{hint}"))
    checked = {claim.id for claim in claims}
    state: dict[str, int] = {}
    cycles: set[frozenset[str]] = set()

    def visit(claim_id: str, chain: list[str]) -> None:
        if state.get(claim_id) == 2 or claim_id not in by_id:
            return
        if state.get(claim_id) == 1:
            cycle = chain[chain.index(claim_id):] + [claim_id]
            members = frozenset(cycle)
            owner = next((by_id[c] for c in cycle if c in checked), None)
            if owner is not None and members not in cycles:
                cycles.add(members)
                problems.append(ClaimError(owner.path, owner.line_of("depends_on"), "depends_on",
                                           f"dependency cycle: {' -> '.join(cycle)}"))
            return
        state[claim_id] = 1
        for premise in by_id[claim_id].depends_on:
            visit(premise, chain + [claim_id])
        state[claim_id] = 2

    for claim_id in sorted(checked):
        visit(claim_id, [])
    return problems + retraction_problems(claims, known)


def retraction_problems(claims: Sequence[Claim], known: Iterable[Claim] = ()) -> list[ClaimError]:
    """An error at every claim that quotes a withdrawn decomposition differently from the first that names it.

    Every figure resting on one decomposition is stale for one reason, the source's own withdrawal,
    so they must all quote it alike (same section, same words).
    """
    first: dict[str, Claim] = {}
    for claim in [*known, *claims]:
        if claim.retracted is not None and claim.retracted.decomposition:
            first.setdefault(claim.retracted.decomposition, claim)
    problems = []
    for claim in claims:
        retraction = claim.retracted
        if retraction is None or not retraction.decomposition:
            continue
        model = first[retraction.decomposition].retracted
        assert model is not None
        if (retraction.section, retraction.figure) != (model.section, model.figure):
            where = first[retraction.decomposition]
            problems.append(ClaimError(claim.path, claim.line_of("retracted"), "retracted",
                                       f"the {retraction.decomposition} decomposition is withdrawn as "
                                       f"\u201c{model.figure}\u201d ({model.section}) at {where.path}:{where.line}; "
                                       "quote the same section and words"))
    return problems
