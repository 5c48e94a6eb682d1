"""The verdicts a claim can receive, in one place so every layer speaks the same words."""

from __future__ import annotations

import enum


class Verdict(str, enum.Enum):
    """Outcome of checking one claim item.

    ``HOLDS``/``REFUTED``/``INCONCLUSIVE`` come from a statistical decision;
    ``NOT_APPLICABLE`` means the machine or model is outside the claim's scope;
    ``ERROR`` means the probe failed, so nothing was decided. ``STALE`` is
    assigned after the run, when a premise the claim depends on did not hold.
    """

    HOLDS = "holds"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    NOT_APPLICABLE = "not-applicable"
    ERROR = "error"
    STALE = "stale"

    @property
    def decided(self) -> bool:
        """True for verdicts that came out of a statistical decision."""
        return self in (Verdict.HOLDS, Verdict.REFUTED, Verdict.INCONCLUSIVE)

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value
