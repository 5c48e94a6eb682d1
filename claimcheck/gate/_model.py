"""What the gate reads and reports: claims as the gate sees them, anchors, problems, and the constants."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from claimcheck import rules
from claimcheck.claim import Check, Claim
from claimcheck.errors import ClaimError
from claimcheck.figures import Sentence, UnitError, convert
from claimcheck.claims.schema import ID_PATTERN
from claimcheck.verdict import Verdict


ANCHOR_RE = re.compile(r"^claims?\s*:\s*(?P<ids>.+?)\s*$", re.S | re.I)
ID_RE = re.compile(ID_PATTERN)
DOC_SUFFIXES = (".md", ".markdown")
PERFORMANCE_FAMILIES = frozenset({"time", "bandwidth", "size", "throughput", "fraction", "information"})


def cites_badly(verdict: Verdict | None) -> bool:
    """The gate's one notion of failing: a cited claim with no result (``None``), or one that does not stand here.

    Which verdicts do not stand is the verdict policy's to say (:func:`claimcheck.outcome.policy.cites_badly`).
    """
    from claimcheck.outcome import policy

    return verdict is None or policy.cites_badly(verdict)

# Machine names a sentence can cite a figure for; each matches machine classes
# (``backend/device/memory``) whose text contains it, case-insensitively.
MACHINE_NAME_RE = re.compile(
    r"\b(?:Apple\s+)?M[1-9](?:\s+(?:Pro|Max|Ultra))?\b"
    r"|\b(?:GH|GB)?[ABHL]\d{2,3}\b|\bRTX\s*\d{4}\b|\bMI\d{3}X?\b"
    r"|\b(?:EPYC|Xeon|Graviton\d?|CPU)\b"
)


@dataclass(frozen=True)
class Problem:
    """One finding of the gate, printed as ``file:line:column: message``."""

    path: str
    line: int
    column: int
    message: str
    severity: str = "error"  # "error" | "warning"
    code: str = ""  # unknown-claim, draft, verdict, missing-result, unconfirmed, disagrees, unanchored,
    # unreadable-figure, marker, not-measurable, claim-file, doc-file, no-path

    def __str__(self) -> str:
        prefix = "" if self.severity == "error" else f"{self.severity}: "
        return f"{self.path}:{self.line}:{self.column}: {prefix}{self.message}"


@dataclass(frozen=True)
class Anchor:
    """A ``<!-- claim: id -->`` comment and the sentence it anchors."""

    claim_id: str
    path: str
    offset: int
    line: int
    column: int
    sentence: Sentence | None


@dataclass(frozen=True)
class ClaimInfo:
    """What the gate needs from a claim: its figure and its check (the rule states the band)."""

    id: str
    figure: str = ""
    check: Check | None = None
    content_hash: str = ""
    draft: bool = False
    path: str = ""
    line: int = 0

    @property
    def rule(self) -> str | None:
        """The check's rule name."""
        return self.check.rule if self.check else None

    @property
    def unit(self) -> str | None:
        """The unit of the claim's figure."""
        return self.check.unit if self.check else None

    @classmethod
    def from_claim(cls, claim: Claim) -> ClaimInfo:
        """From a loaded claim."""
        return cls(id=claim.id, figure=claim.source.figure, check=claim.check, content_hash=claim.content_hash,
                   path=claim.path, line=claim.line)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], path: str = "", line: int = 0) -> ClaimInfo:
        """From a claim record (the store's form)."""
        check = data.get("check") or {}
        source = data.get("source") or {}
        return cls(id=str(data.get("id")), figure=str(source.get("figure") or ""),
                   check=Check.from_record(check) if check.get("rule") else None,
                   draft=data.get("draft") is True, path=path, line=line)

    def stated_band(self, unit: str | None) -> tuple[float, float] | None:
        """The values the claim itself states, in ``unit`` (from the rule object)."""
        if self.check is None or self.check.rule not in rules.names():
            return None
        try:
            band = rules.get(self.check.rule).stated_band(self.check)
        except KeyError:
            return None
        if band is None:
            return None
        try:
            return convert(band[0], self.unit, unit), convert(band[1], self.unit, unit)
        except UnitError:
            return None


def load_claim_index(paths: Iterable[str | Path]) -> tuple[dict[str, ClaimInfo], list[Problem]]:
    """Claims (and drafts) by id from claim files; a broken file becomes a problem, not a crash."""
    from claimcheck.claims.loader import Draft, iter_claim_files, read_claim_file

    index: dict[str, ClaimInfo] = {}
    problems: list[Problem] = []
    for path in iter_claim_files(paths):
        try:
            built_all = read_claim_file(path, with_drafts=True)
        except ClaimError as error:
            problems.append(Problem(error.path, error.line or 1, 1, f"{error.field + ': ' if error.field else ''}"
                                                                    f"{error.message}", code="claim-file"))
            continue
        for built in built_all:
            if isinstance(built, Draft):
                index[built.id] = ClaimInfo(id=built.id, draft=True, path=built.path, line=built.line)
            else:
                index[built.id] = ClaimInfo.from_claim(built)
    return index, problems
