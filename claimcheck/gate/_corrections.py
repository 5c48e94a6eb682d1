"""Corrections in the doc itself: the dated banner above a sentence whose claim was refuted, or a strike-through.

The source docs correct themselves in place with a block quote that opens with a
date and the word CORRECTION (``> **2026-07-02 CORRECTION — …**``). The gate
requires one above every sentence that cites a refuted claim, and refuses one
above a sentence whose claim holds (a correction nobody needs misleads as much
as a wrong figure). ``claimcheck docs --fix`` inserts the banner a correction
report suggests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from claimcheck.figures import MarkdownDoc, Sentence

BANNER_RE = re.compile(r"^\s*>\s*\*\*\d{4}-\d{2}-\d{2}\s+CORRECTION\b")
STRUCK_RE = re.compile(r"^\W*~~.+~~\W*$", re.S)


def _paragraph_first_line(lines: list[str], index: int) -> int:
    """The first line of the block holding line ``index`` (0-based): back up to a blank line."""
    while index > 0 and lines[index - 1].strip():
        index -= 1
    return index


def banner_above(doc: MarkdownDoc, sentence: Sentence) -> str | None:
    """The correction banner directly above the sentence's paragraph (blank lines between allowed), if any.

    A banner inside the paragraph's own block quote, before the sentence, counts too.
    """
    lines = doc.text.split("\n")
    index = sentence.line - 1
    first = _paragraph_first_line(lines, index)
    for line in lines[first:index + 1]:
        if BANNER_RE.match(line):
            return line.strip()
    above = first - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    if above < 0 or not lines[above].lstrip().startswith(">"):
        return None
    start = _paragraph_first_line(lines, above)
    return lines[start].strip() if BANNER_RE.match(lines[start]) else None


#: A paragraph that is itself a correction of the source: ``**Correction (arithmetic, any machine).** …`` or
#: ``**Inconsistent within the source (…).** …``; its sentences quote the overturned figures to correct them.
CORRECTION_PARAGRAPH_RE = re.compile(r"^\s*\*\*(?:Correction|Inconsistent within the source)\b[^*]*\*\*")


def correction_paragraph(doc: MarkdownDoc, sentence: Sentence) -> bool:
    """The sentence belongs to a paragraph that opens as a correction (bold "Correction (…)." lead)."""
    lines = doc.text.split("\n")
    first = _paragraph_first_line(lines, sentence.line - 1)
    return bool(CORRECTION_PARAGRAPH_RE.match(lines[first]))


def corrected(doc: MarkdownDoc, sentence: Sentence | None) -> bool:
    """The sentence stands corrected in the doc: a banner above it, a strike-through, or a correction paragraph."""
    if sentence is None:
        return False
    return banner_above(doc, sentence) is not None or struck_through(doc, sentence) or \
        correction_paragraph(doc, sentence)


def struck_through(doc: MarkdownDoc, sentence: Sentence) -> bool:
    """The sentence is struck through as a whole (``~~…~~``), the other way a doc withdraws a figure."""
    return bool(STRUCK_RE.match(doc.masked[sentence.start:sentence.end].strip()))


@dataclass(frozen=True)
class Fix:
    """A banner to insert above the paragraph that holds ``line`` (1-based)."""

    line: int
    banner: str


def insert_banners(path: Path, fixes: list[Fix]) -> int:
    """Insert each banner above its paragraph (once per paragraph); returns how many were inserted."""
    lines = path.read_text(encoding="utf-8").split("\n")
    at: dict[int, list[str]] = {}
    for fix in fixes:
        first = _paragraph_first_line(lines, fix.line - 1)
        if fix.banner not in at.setdefault(first, []):
            at[first].append(fix.banner)
    for first in sorted(at, reverse=True):
        block: list[str] = []
        for banner in at[first]:
            block += [banner, ""]
        lines[first:first] = block
    path.write_text("\n".join(lines), encoding="utf-8")
    return sum(len(banners) for banners in at.values())
