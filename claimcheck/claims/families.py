"""Which multiplicity family a claim's items are tested in.

A run's refutations and holds are adjusted by Holm within each family, so a family is the set
of claims whose joint error rate a reader weighs together. A claim names its family with
``family:``; otherwise its family is its file, written as the path relative to the claims
folder it lies in (``memory/bandwidth.yaml``), so the name is the same on every checkout.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from claimcheck.claim import Claim


def family_of(claim: Claim, roots: Sequence[Path] = ()) -> str:
    """The claim's family: the declared one, else its file relative to the first root that holds it.

    Args:
        claim: a loaded claim (its ``path`` is the file it was read from).
        roots: the claims folders, then the project root; a file under none keeps its path as given.
    """
    if claim.family:
        return claim.family
    path = Path(claim.path)
    for root in roots:
        try:
            return path.resolve().relative_to(Path(root).resolve()).as_posix()
        except (ValueError, OSError):
            continue
    return path.as_posix()
