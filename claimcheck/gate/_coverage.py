"""How many of a doc's figures the gate vouches for: verified, not a finding, unverified, undecided.

A ratchet needs a number to watch: ``figures: 412 · verified 301 · not-a-finding 99 · unverified 12 ·
undecided 0``. Every figure the parser reads counts (numbers with a unit, counts, bare numbers). A
figure is *verified* when an anchor bound it (:mod:`._binding`) or a measured marker judged it and it
agreed; *not a finding* when it is exempt for a written reason (:mod:`._exempt`); *undecided* when its
anchor cites a claim with no decided result; *unverified* otherwise: unanchored, or anchored but not
comparable with its claim. Figures found wrong are errors, counted in the total only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from claimcheck.figures import Figure, MarkdownDoc

from ._model import Problem

if TYPE_CHECKING:
    from ._binding import Binding


class Bound:
    """What the anchors of one doc made of each figure (by start): the best status over the claims citing it."""

    RANK = {"verified": 2, "disagrees": 1, "not-compared": 0}

    def __init__(self) -> None:
        self.status: dict[int, tuple[str, str]] = {}  # figure start -> (status, claim ids)

    def record(self, binding: Binding, claim_id: str) -> None:
        """Keep the best status a claim gave the figure (verified over disagrees over not compared)."""
        old = self.status.get(binding.figure.start)
        if old is None or self.RANK[binding.status] > self.RANK[old[0]]:
            self.status[binding.figure.start] = (binding.status, claim_id)
        elif old[0] == binding.status == "not-compared" and claim_id not in old[1]:
            self.status[binding.figure.start] = (old[0], f"{old[1]}, {claim_id}")


@dataclass
class Coverage:
    """Figure counts over every doc gated, and the unverified figures (for ``--list-unverified``)."""

    figures: int = 0
    verified: int = 0
    not_a_finding: int = 0
    unverified: int = 0
    undecided: int = 0
    unverified_list: list[Problem] = field(default_factory=list)

    def line(self) -> str:
        """``figures: 412 · verified 301 · not-a-finding 99 · unverified 12 · undecided 0``."""
        return (f"figures: {self.figures} · verified {self.verified} · not-a-finding {self.not_a_finding} · "
                f"unverified {self.unverified} · undecided {self.undecided}")

    def add(self, doc: MarkdownDoc, path: str, bound: Bound, exempt: Iterable[int], undecided: Iterable[int],
            agreed: Iterable[int], problems: Iterable[Problem], severity: Severity) -> list[Problem]:
        """Count one doc; returns the problems its unverified figures raise at ``severity``.

        ``undecided`` are sentence starts; ``exempt`` and ``agreed`` (a measured marker agreed) figure starts.
        """
        exempt, undecided, agreed = set(exempt), set(undecided), set(agreed)
        wrong = {(p.line, p.column) for p in problems if p.code in ("disagrees", "unreadable-figure")}
        raised: list[Problem] = []
        for sentence in doc.sentences:
            for figure in doc.figures_in(sentence.start, sentence.end):
                self.figures += 1
                status = bound.status.get(figure.start)
                if (figure.line, figure.column) in wrong or (status is not None and status[0] == "disagrees"):
                    continue
                if figure.start in agreed or (status is not None and status[0] == "verified"):
                    self.verified += 1
                elif figure.start in exempt:
                    self.not_a_finding += 1
                elif sentence.start in undecided:
                    self.undecided += 1
                else:
                    self.unverified += 1
                    problem = _unverified(path, figure, status, severity)
                    self.unverified_list.append(problem)
                    if status is not None or severity.listed(figure):
                        raised.append(problem)
        return raised


def _unverified(path: str, figure: Figure, status: tuple[str, str] | None, severity: Severity) -> Problem:
    """``FIG is unverified: …`` (nothing cites it) or ``FIG not compared with ID: …`` (its claim cannot judge it)."""
    text = " ".join(figure.text.split())
    if status is not None:
        message = (f"{text} not compared with {status[1]}: not in a unit the claim states or measures, nor "
                   "one of its inputs; bind it or mark it `<!-- not-a-finding: REASON -->`")
    else:
        message = (f"{text} is unverified: cite the claim that checks it (`<!-- claim: ID -->`), mark what "
                   "a run measured (`<!-- measured: ID on CLASS -->`) or why it is no finding "
                   "(`<!-- not-a-finding: setup -->`)")
    return Problem(path, figure.line, figure.column, message, severity.of(figure), code="unverified")


# A number with a unit-like suffix ("12 GFLOP/s", "3 ops/ms") that the figure parser does not know.
_UNITLIKE_RE = re.compile(r"(?<![\w.§#@$/])(?P<figure>\d+(?:\.\d+)?[ \u00a0]?(?P<unit>[A-Za-zµμ]+/[A-Za-z]+))"
                          r"(?![\w/])")


def unreadable(doc: MarkdownDoc, path: str, severity_of: Severity) -> list[Problem]:
    """A warning (or, on changed lines under ``--strict-changed``, an error) for each figure in an unknown unit."""
    problems = []
    for match in _UNITLIKE_RE.finditer(doc.masked):
        start = match.start("figure")
        if any(f.start <= start < f.end and (f.unit is not None or f.count_of is not None) for f in doc.figures):
            continue
        line, column = doc.position(start)
        problems.append(Problem(path, line, column, f"figure \"{match['figure']}\" cannot be read: unknown unit "
                                                    f"\"{match['unit']}\" (claimcheck.figures knows x, %, s, ms, µs, "
                                                    "GB/s, TB/s, tok/s, MiB, MB, nats and counts \"N of M\")",
                                severity_of.of_text(line, match["figure"]), code="unreadable-figure"))
    return problems



class Severity:
    """``error`` everywhere under ``--strict``; under ``--strict-changed`` for new or changed figures; else ``warning``.

    ``new`` holds the starts of the figures new or changed since the base (``None``: all of them, a new
    file); ``changed`` the changed lines, for findings that are not figures (anchors, unreadable units).
    """

    def __init__(self, strict: bool = False, ratchet: bool = False, changed: set[int] | None = None,
                 new: set[int] | None = None, gate_changes: bool = False, base: str | None = None) -> None:
        self.base = base  # the doc at the base, for text the parser cannot read as a figure
        self.strict = strict
        self.ratchet = ratchet
        self.changed = changed
        self.new = new
        self.gate_changes = gate_changes

    def is_changed(self, line: int) -> bool:
        """Whether ``line`` changed (every line of a new file did)."""
        return self.changed is None or line in self.changed

    def is_new(self, figure: Figure) -> bool:
        """Whether the figure is new or changed since the base."""
        return self.new is None or figure.start in self.new

    def listed(self, figure: Figure) -> bool:
        """Whether an unanchored figure is reported: under ``--strict``, or new since ``--changed-since``."""
        return self.strict or (self.gate_changes and self.is_new(figure))

    def of(self, figure: Figure) -> str:
        """The severity an unverified figure gets."""
        return "error" if self.strict or (self.ratchet and self.gate_changes and self.is_new(figure)) else "warning"

    def of_text(self, line: int, text: str) -> str:
        """The severity of a finding about ``text`` on ``line``: new text on a changed line is held to the ratchet."""
        old = self.base is not None and text in self.base
        return "error" if self.strict or (self.ratchet and self.is_changed(line) and not old) else "warning"

    def __call__(self, line: int) -> str:
        return "error" if self.strict or (self.ratchet and self.is_changed(line)) else "warning"
