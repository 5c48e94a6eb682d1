"""Figures that are not findings: ``<!-- not-a-finding: REASON -->`` markers, section numbers, correction banners.

Every number in a gated doc is verified, exempt for a reason a reviewer can read, or reported.
The exemptions are few and written down:

- ``<!-- not-a-finding: REASON -->`` after the figures it covers: every figure between the start
  of its sentence (or the comment before it in the sentence) and the marker. ``REASON`` is one
  of :data:`REASONS`, then optional words: ``<!-- not-a-finding: setup (seeds and prompts of our runs) -->``.
- a heading's leading section number (``## 3. Bandwidth``);
- the figures of a dated correction or note banner (``> **2026-12-03 CORRECTION …**``): the banner
  rule checks those (it must stand above a sentence whose claim is overturned).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from claimcheck.figures import Comment, Figure, MarkdownDoc

from ._model import Problem

#: Why a figure is no finding: how our runs were set up, a date, a section or position in a source, a
#: value named only to locate another (the size a bandwidth was measured at).
REASONS = {
    "setup": "a constant of how the runs were set up (seeds, prompts, cores, sample sizes)",
    "date": "a date or a run's time",
    "section": "a section, row or list number",
    "context": "a value named to locate another figure (the size or position it was measured at)",
    "derived": "a restatement of a verified figure of the same sentence (0.76 of the time, \"about 31% faster\")",
    "source": "an input the source prints and the sentence works with, that no claim takes as a parameter",
}
MARKER_RE = re.compile(r"^not-a-finding\s*:\s*(?P<reason>[a-z-]+)\b(?P<why>.*)$", re.S | re.I)
BANNER_RE = re.compile(r"^\s*>\s*\*\*\d{4}-\d{2}-\d{2}\s+(?:CORRECTION|NOTE)\b")
_SECTION_RE = re.compile(r"^\s*\d+(?:\.\d+)*\.?(?=\s)")


@dataclass
class Exempt:
    """Figure starts exempt from coverage, why, and malformed markers."""

    reason: dict[int, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    #: Figures a marker directly follows ("3.2% <!-- not-a-finding: derived -->"): no anchor judges them. The
    #: rest of a marker's clause is exempt only from coverage: an anchor that finds one of them wrong says so.
    direct: set[int] = field(default_factory=set)


def exemptions(doc: MarkdownDoc, path: str) -> Exempt:
    """The exempt figures of one doc (markers, section numbers, banners) and any malformed marker."""
    found = Exempt()
    for comment in doc.comments:
        if not comment.body.lower().startswith("not-a-finding"):
            continue
        line, column = doc.position(comment.start)
        match = MARKER_RE.match(comment.body)
        if match is None or match["reason"].lower() not in REASONS:
            got = match["reason"] if match else comment.body
            found.problems.append(Problem(path, line, column, f"not-a-finding marker: reason {got!r} is none of "
                                          f"{', '.join(REASONS)} (`<!-- not-a-finding: setup -->`)", code="marker"))
            continue
        covered = _covered(doc, comment)
        if not covered:
            found.problems.append(Problem(path, line, column, "not-a-finding marker follows no figure in its "
                                          "sentence: put it right after the figures it covers", code="marker"))
        for figure in covered:
            found.reason[figure.start] = match["reason"].lower()
        if covered and not doc.masked[covered[-1].end:comment.start].strip(" \t\n*_"):
            found.direct.add(covered[-1].start)
    for sentence in doc.sentences:
        if sentence.kind == "heading" and _SECTION_RE.match(doc.masked[sentence.start:sentence.end]):
            for figure in doc.figures_in(sentence.start, sentence.end)[:1]:
                if figure.start == sentence.start:
                    found.reason[figure.start] = "section"
    for start, end in banner_blocks(doc):
        for figure in doc.figures_in(start, end):
            found.reason[figure.start] = "banner"
    return found


def _covered(doc: MarkdownDoc, comment: Comment) -> list[Figure]:
    """The figures a marker covers: those of its own clause, as for a measured marker (:func:`quoted.figures_before`)."""
    from claimcheck.gate.quoted import figures_before

    return figures_before(doc, comment)


def banner_blocks(doc: MarkdownDoc) -> list[tuple[int, int]]:
    """Spans of the block quotes that open with a dated CORRECTION or NOTE banner."""
    spans: list[tuple[int, int]] = []
    lines = doc.text.split("\n")
    offset = 0
    open_at: int | None = None
    for line in lines:
        quoted = line.lstrip().startswith(">")
        if open_at is None and BANNER_RE.match(line):
            open_at = offset
        elif open_at is not None and not quoted:
            spans.append((open_at, offset))
            open_at = None
        offset += len(line) + 1
    if open_at is not None:
        spans.append((open_at, len(doc.text)))
    return spans
