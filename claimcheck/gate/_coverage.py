"""How many of a doc's figures the gate vouches for, like a coverage line: verified, unanchored, undecided.

A ratchet needs a number to watch: ``figures: 412 · verified 301 · unanchored 111 · undecided 12``.
A figure counts when it carries a unit (time, bandwidth, size, throughput, %, x, nats) or is a
count "N of M"; it is *verified* when an anchor or a measured marker judged it and it agreed,
*undecided* when its anchor cites a claim with no decided result, *unanchored* when nothing cites
it. Figures an anchor judged and found wrong are errors, counted in the total only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from claimcheck.figures import Figure, MarkdownDoc

from ._model import PERFORMANCE_FAMILIES, Problem


def counted(figure: Figure) -> bool:
    """Whether a figure is one the coverage line counts (a unit, or a count "N of M")."""
    if figure.kind == "count":
        return figure.count_of is not None
    return figure.unit is not None and figure.family in PERFORMANCE_FAMILIES


@dataclass
class Coverage:
    """Figure counts over every doc gated."""

    figures: int = 0
    verified: int = 0
    unanchored: int = 0
    undecided: int = 0

    def line(self) -> str:
        """``figures: 412 · verified 301 · unanchored 111 · undecided 12``."""
        return (f"figures: {self.figures} · verified {self.verified} · unanchored {self.unanchored} · "
                f"undecided {self.undecided}")

    def add(self, doc: MarkdownDoc, anchored: Iterable[int], undecided: Iterable[int], marked: Iterable[int],
            problems: Iterable[Problem]) -> None:
        """Count one doc: ``anchored``/``undecided`` are sentence starts, ``marked`` figure starts."""
        anchored, undecided, marked = set(anchored), set(undecided), set(marked)
        wrong = {(p.line, p.column) for p in problems if p.code == "disagrees"}
        for sentence in doc.sentences:
            for figure in doc.figures_in(sentence.start, sentence.end):
                if not counted(figure):
                    continue
                self.figures += 1
                if (figure.line, figure.column) in wrong:
                    continue
                if figure.start in marked:
                    self.verified += 1
                elif sentence.start in undecided:
                    self.undecided += 1
                elif sentence.start in anchored:
                    self.verified += 1
                else:
                    self.unanchored += 1


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
                                severity_of(line), code="unreadable-figure"))
    return problems


class Severity:
    """``error`` everywhere under ``--strict``; under ``--strict-changed`` on changed lines only; else ``warning``."""

    def __init__(self, strict: bool = False, ratchet: bool = False, changed: set[int] | None = None) -> None:
        self.strict = strict
        self.ratchet = ratchet
        self.changed = changed  # None: the whole file is new (or no --changed-since: every line counts)

    def is_changed(self, line: int) -> bool:
        """Whether ``line`` changed (every line of a new file did)."""
        return self.changed is None or line in self.changed

    def __call__(self, line: int) -> str:
        return "error" if self.strict or (self.ratchet and self.is_changed(line)) else "warning"


def unanchored(doc: MarkdownDoc, path: str, severity: Severity, anchored: set[int]) -> list[Problem]:
    """Figures on changed lines in sentences that cite no claim and carry no measured marker."""
    problems = []
    for sentence in doc.sentences:
        if sentence.start in anchored:
            continue
        for figure in doc.figures_in(sentence.start, sentence.end):
            if not counted(figure) or not severity.is_changed(figure.line):
                continue
            problems.append(Problem(path, figure.line, figure.column,
                                    f"unanchored figure \"{figure.text}\" on a changed line: cite the claim that "
                                    "checks it with <!-- claim: ID --> (or draft one: claimcheck extract)",
                                    severity(figure.line), code="unanchored"))
    return problems
