"""The verdicts a claim can receive, in one place so every layer speaks the same words."""

from __future__ import annotations

import enum
from collections.abc import Iterable


class Verdict(str, enum.Enum):
    """Outcome of checking one claim item.

    ``HOLDS``/``REFUTED``/``INCONCLUSIVE`` come from a statistical decision;
    ``NOT_APPLICABLE`` means the machine or model is outside the claim's scope;
    ``ERROR`` means the probe failed, so nothing was decided. ``STALE`` is
    assigned after the run, when a premise the claim depends on did not hold.
    ``INCONSISTENT`` is an arithmetic claim whose source prints several inputs
    for one figure: the figure follows from some of them and not from others,
    so the source contradicts itself rather than being refuted.
    """

    HOLDS = "holds"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    NOT_APPLICABLE = "not-applicable"
    ERROR = "error"
    STALE = "stale"
    INCONSISTENT = "inconsistent"

    @property
    def decided(self) -> bool:
        """True for verdicts that came out of a statistical decision."""
        return self in (Verdict.HOLDS, Verdict.REFUTED, Verdict.INCONCLUSIVE, Verdict.INCONSISTENT)

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


# Most severe first: the one order every report, summary and gate uses to pick a claim's verdict.
SEVERITY: tuple[Verdict, ...] = (
    Verdict.ERROR, Verdict.REFUTED, Verdict.INCONSISTENT, Verdict.STALE, Verdict.INCONCLUSIVE, Verdict.HOLDS, Verdict.NOT_APPLICABLE,
)

# A premise with one of these verdicts does not hold, so its dependants are stale (a premise that
# holds for only some of its source's readings is not one to rest on either).
FAILED_PREMISE = frozenset({Verdict.REFUTED, Verdict.INCONCLUSIVE, Verdict.ERROR, Verdict.STALE, Verdict.INCONSISTENT})


def worst(verdicts: Iterable[Verdict]) -> Verdict | None:
    """The most severe of ``verdicts`` (None for none): one item's failure is the claim's."""
    chosen = [Verdict(v) for v in verdicts]
    return min(chosen, key=SEVERITY.index) if chosen else None
