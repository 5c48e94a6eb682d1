"""Markdown documents split into sentences, headings and table rows, with code and comments blanked."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from markdown_it import MarkdownIt

from ._parse import Figure, line_starts, position_of, parse_figures


SentenceKind = Literal["prose", "list", "heading", "table", "quote"]


@dataclass(frozen=True)
class Cell:
    """A table cell: its span in the document and its column header."""

    start: int
    end: int
    header: str
    index: int


@dataclass(frozen=True)
class Sentence:
    """One sentence of prose, one heading, or one table row, with its place in the doc."""

    start: int
    end: int
    line: int
    kind: SentenceKind
    section: str
    cells: tuple[Cell, ...] = ()

    def text(self, doc: "MarkdownDoc", *, masked: bool = False) -> str:
        return (doc.masked if masked else doc.text)[self.start:self.end]


@dataclass(frozen=True)
class Comment:
    """An HTML comment ``<!-- ... -->``: its body and span."""

    body: str
    start: int
    end: int


@dataclass
class MarkdownDoc:
    """A Markdown document split into sentences, with code and comments blanked in ``masked``.

    Offsets are shared between ``text`` and ``masked`` (blanking keeps every character's
    place), so a figure found in ``masked`` can be reported at its real line and column.
    """

    text: str
    masked: str
    sentences: list[Sentence]
    comments: list[Comment]
    _starts: list[int] = field(default_factory=list, repr=False)
    _figures: list[Figure] | None = field(default=None, repr=False)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based ``(line, column)`` of a character offset."""
        if not self._starts:
            self._starts = line_starts(self.text)
        return position_of(self._starts, offset)

    @property
    def figures(self) -> list[Figure]:
        """Every figure outside code and comments, with lines and columns of the whole doc."""
        if self._figures is None:
            self._figures = parse_figures(self.masked)
        return self._figures

    def figures_in(self, start: int, end: int) -> list[Figure]:
        return [f for f in self.figures if start <= f.start and f.end <= end]

    def sentence_at(self, offset: int) -> Sentence | None:
        for sentence in self.sentences:
            if sentence.start <= offset < sentence.end:
                return sentence
        return None


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


_COMMENT_RE = re.compile(r"<!--(.*?)-->", re.S)
_LINK_TARGET_RE = re.compile(r"(?<=\])\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_HEADING_RE = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_LIST_RE = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+")
_RULE_RE = re.compile(r"^[ \t]{0,3}(?:-{3,}|\*{3,}|_{3,})[ \t]*$")
_TABLE_SEP_RE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_SENTENCE_END_RE = re.compile(r"[.!?][*_)\]\"'”’]*(?=\s+\S)")
_ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "etc.", "cf.", "approx.", "fig.", "no.", "al.", "resp.")


def _clean_heading(text: str) -> str:
    text = re.sub(r"[*_`]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def _split_sentences(masked: str, start: int, end: int) -> list[tuple[int, int]]:
    spans = []
    cursor = start
    for match in _SENTENCE_END_RE.finditer(masked, start, end):
        stop = match.end()
        head = masked[cursor:match.start() + 1].rstrip()
        lowered = head.lower()
        if any(lowered.endswith(a) for a in _ABBREVIATIONS) or re.search(r"(?:^|\s)[A-Z]\.$", head):
            continue
        if masked[cursor:stop].strip():
            spans.append((cursor, stop))
        cursor = stop
        while cursor < end and masked[cursor].isspace():
            cursor += 1
    if masked[cursor:end].strip():
        spans.append((cursor, end))
    return spans


def _table_cells(masked: str, line_start: int, line_end: int) -> list[tuple[int, int]]:
    """Spans of the cells of one table row (outer pipes dropped; escaped pipes kept)."""
    row = masked[line_start:line_end]
    bars = [m.start() for m in re.finditer(r"(?<!\\)\|", row)]
    edges = bars[:]
    if not row.lstrip().startswith("|"):
        edges.insert(0, -1)
    if not row.rstrip().endswith("|"):
        edges.append(len(row))
    cells = []
    for a, b in zip(edges, edges[1:]):
        cells.append((line_start + a + 1, line_start + b))
    return cells


_PARSER = MarkdownIt("commonmark").enable("table")
_BACKTICKS_RE = re.compile(r"(?<![`\\])`+(?!`)")


def _code_span(text: str, start: int, end: int, markup: str) -> tuple[int, int] | None:
    """Where the next code span opened by ``markup`` (a run of backticks) lies in ``text[start:end]``."""
    runs = [m for m in _BACKTICKS_RE.finditer(text, start, end) if len(m.group()) == len(markup)]
    return (runs[0].start(), runs[1].end()) if len(runs) >= 2 else None


def _mask(text: str) -> tuple[str, list[Comment]]:
    """``text`` with code (fenced, indented, inline), HTML comments and nothing else blanked; the comments.

    The block structure comes from a CommonMark parser (markdown-it-py) with its line maps, so a
    comment written inside a code span or a fence is code, never an anchor. Inline pieces are
    found in the source in parse order, starting from the block's first line.
    """
    chars = list(text)
    comments: list[Comment] = []
    starts = line_starts(text)

    def offset(line: int) -> int:
        return starts[line] if line < len(starts) else len(text)

    cursor = 0
    for token in _PARSER.parse(text):
        if not token.map:
            continue
        begin, end = offset(token.map[0]), offset(token.map[1])
        if token.type in ("fence", "code_block"):
            _blank(chars, begin, end)
        elif token.type == "html_block":
            for match in _COMMENT_RE.finditer(text, begin, end):
                comments.append(Comment(match.group(1).strip(), match.start(), match.end()))
                _blank(chars, match.start(), match.end())
        elif token.type == "inline":
            cursor = max(cursor, begin)
            for child in token.children or ():
                if child.type == "code_inline":
                    span = _code_span(text, cursor, end, child.markup)
                    if span is not None:
                        _blank(chars, *span)
                        cursor = span[1]
                elif child.type == "html_inline" and child.content.startswith("<!--"):
                    at = text.find(child.content, cursor, end)
                    if at >= 0:
                        stop = at + len(child.content)
                        comments.append(Comment(child.content[4:-3].strip(), at, stop))
                        _blank(chars, at, stop)
                        cursor = stop
    return "".join(chars), comments


def read_markdown(text: str) -> MarkdownDoc:
    """Split a Markdown document into sentences, headings and table rows.

    Headings become the section path (``"3. Roofline table > Notes"``, the top title left
    out when deeper headings exist); a table row is one sentence whose cells carry their
    column headers; list items and paragraphs are split at sentence ends.
    """
    masked, comments = _mask(text)
    chars = list(masked)
    for match in _LINK_TARGET_RE.finditer(masked):
        _blank(chars, match.start(), match.end())
    masked = "".join(chars)

    sentences: list[Sentence] = []
    headings: list[tuple[int, str]] = []
    lines = masked.split("\n")
    offsets = []
    position = 0
    for line in lines:
        offsets.append(position)
        position += len(line) + 1

    def section() -> str:
        if not headings:
            return ""
        deeper = [title for level, title in headings if level > 1]
        return " > ".join(deeper) if deeper else headings[-1][1]

    paragraph: list[int] = []  # line indexes
    paragraph_kind: SentenceKind = "prose"

    def flush() -> None:
        nonlocal paragraph
        if paragraph:
            start = offsets[paragraph[0]]
            end = offsets[paragraph[-1]] + len(lines[paragraph[-1]])
            for a, b in _split_sentences(masked, start, end):
                sentences.append(Sentence(a, b, masked.count("\n", 0, a) + 1, paragraph_kind, section()))
        paragraph = []

    index = 0
    while index < len(lines):
        line = lines[index]
        original = text[offsets[index]:offsets[index] + len(line)]
        stripped = line.strip()
        heading = _HEADING_RE.match(line)
        if not stripped:
            flush()
        elif heading:
            flush()
            level = len(heading.group(1))
            title = _clean_heading(original[heading.start(2):heading.end(2)] if heading.end(2) <= len(original)
                                   else heading.group(2))
            headings = [(lv, t) for lv, t in headings if lv < level] + [(level, title)]
            start = offsets[index] + heading.start(2)
            sentences.append(Sentence(start, offsets[index] + len(line), index + 1, "heading", section()))
        elif stripped.startswith("|") and index + 1 < len(lines) and _TABLE_SEP_RE.match(lines[index + 1]):
            flush()
            header_cells = _table_cells(masked, offsets[index], offsets[index] + len(line))
            headers = [_clean_heading(text[a:b]) for a, b in header_cells]
            index += 2
            while index < len(lines) and lines[index].strip().startswith("|"):
                row_start = offsets[index]
                row_end = row_start + len(lines[index])
                spans = _table_cells(masked, row_start, row_end)
                cells = tuple(Cell(a, b, headers[k] if k < len(headers) else "", k) for k, (a, b) in enumerate(spans))
                sentences.append(Sentence(row_start, row_end, index + 1, "table", section(), cells))
                index += 1
            continue
        elif _RULE_RE.match(line):
            flush()
        elif _LIST_RE.match(line):
            flush()
            paragraph_kind = "list"
            paragraph = [index]
        elif stripped.startswith(">"):
            if paragraph_kind != "quote":
                flush()
            paragraph_kind = "quote"
            paragraph.append(index)
        else:
            if not paragraph:
                paragraph_kind = "prose"
            paragraph.append(index)
        index += 1
    flush()
    return MarkdownDoc(text=text, masked=masked, sentences=sentences, comments=comments)
