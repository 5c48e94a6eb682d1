"""Figures (numbers with units, ranges, counts) and the Markdown sentences that carry them.

Both the docs gate and the claim drafter read prose such as ``reaches **74–88%** of raw
bandwidth``, ``~10–15 µs/op``, ``2.12 ms → 268 GB/s`` or ``0 exact matches in 924``; this
module turns that text into typed :class:`Figure` objects and converts between units of one
family (``GiB`` is 2**30 bytes, ``GB`` is 10**9: the two are never mixed up), so that a
quoted figure can be compared with a measured interval in whatever unit either was written.

What is *not* a figure, on purpose: identifiers with digits (``e4b``, ``M1``, ``bf16``,
``12B``, ``4-bit``, ``CPM5-1B``), versions (``0.31.2``), dates (``2026-07-01``), section
and issue marks (``§3``, ``#4``), file positions (``generate.ts:512-516``), dimension products
(``2816×704×3``) and context sizes (``@8k``). Inline code, fenced code and HTML comments are
blanked before parsing by :func:`read_markdown`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Literal

FigureKind = Literal["value", "range", "count", "plusminus"]

# ---------------------------------------------------------------------------
# Units


@dataclass(frozen=True)
class Unit:
    """A unit spelling's meaning: its family and the factor to the family's base unit."""

    symbol: str  # canonical spelling, e.g. "µs", "GB/s", "%"
    family: str  # "time" | "bandwidth" | "size" | "throughput" | "fraction" | "information" | "count" | "number"
    factor: float  # value in this unit x factor = value in the family's base unit
    higher_is_better: bool | None = None


BASE_UNITS = {
    "time": "s",
    "bandwidth": "B/s",
    "size": "B",
    "throughput": "tok/s",
    "fraction": "ratio",
    "information": "nat",
    "count": "count",
    "number": "",
}

_KI, _MI, _GI, _TI = 2.0**10, 2.0**20, 2.0**30, 2.0**40


def _units() -> dict[str, Unit]:
    table: dict[str, Unit] = {}

    def add(symbol: str, family: str, factor: float, *spellings: str, better: bool | None = None) -> None:
        unit = Unit(symbol, family, factor, better)
        for spelling in (symbol, *spellings):
            table[spelling] = unit

    add("s", "time", 1.0, "sec", "secs", "seconds", better=False)
    add("ms", "time", 1e-3, "msec", better=False)
    add("µs", "time", 1e-6, "μs", "us", "usec", better=False)
    add("ns", "time", 1e-9, better=False)
    for prefix, decimal, binary in (("K", 1e3, _KI), ("M", 1e6, _MI), ("G", 1e9, _GI), ("T", 1e12, _TI)):
        add(f"{prefix}B/s", "bandwidth", decimal, *(["kB/s"] if prefix == "K" else []), better=True)
        add(f"{prefix}iB/s", "bandwidth", binary, better=True)
        add(f"{prefix}B", "size", decimal, *(["kB"] if prefix == "K" else []))
        add(f"{prefix}iB", "size", binary)
    add("B/s", "bandwidth", 1.0, better=True)
    add("bytes", "size", 1.0, "byte", "B")
    add("tok/s", "throughput", 1.0, "tokens/s", "token/s", "tok/sec", "tokens/sec", "t/s", better=True)
    add("%", "fraction", 0.01)
    add("x", "fraction", 1.0, "×")
    add("ratio", "fraction", 1.0, "rate", "fraction", "1")
    add("nat", "information", 1.0, "nats")
    add("bit", "information", math.log(2.0), "bits")
    add("count", "count", 1.0)
    return table


UNITS: dict[str, Unit] = _units()
_NUMBER_UNIT = Unit("", "number", 1.0)


class UnitError(ValueError):
    """Two units cannot be compared (different families) or a spelling is unknown."""


def split_per(spelling: str) -> tuple[str, str | None]:
    """``"ms/tok"`` -> ``("ms", "tok")``; units whose own spelling has a slash stay whole."""
    spelling = spelling.strip()
    if spelling in UNITS or "/" not in spelling:
        return spelling, None
    head, _, per = spelling.rpartition("/")
    if head in UNITS:
        return head, per
    return spelling, None


def unit_of(spelling: str | None) -> Unit | None:
    """The :class:`Unit` for a spelling (``"GiB"``, ``"µs/op"``, ``"%"``); ``None`` if unknown.

    ``None``/``""`` mean a bare number (family ``number``).
    """
    if spelling is None or not spelling.strip():
        return _NUMBER_UNIT
    head, _ = split_per(spelling)
    return UNITS.get(head)


def family_of(spelling: str | None) -> str | None:
    unit = unit_of(spelling)
    return unit.family if unit else None


def compatible(family_a: str | None, family_b: str | None) -> bool:
    """Families that convert into each other: equal ones, and bare numbers with fractions."""
    if family_a is None or family_b is None:
        return False
    return family_a == family_b or {family_a, family_b} == {"number", "fraction"}


def convert(value: float, from_unit: str | None, to_unit: str | None) -> float:
    """Convert ``value`` between two units of one family (``0.448 GiB`` -> ``0.481 GB``)."""
    source, target = unit_of(from_unit), unit_of(to_unit)
    if source is None or target is None:
        raise UnitError(f"unknown unit {from_unit if source is None else to_unit!r}")
    if not compatible(source.family, target.family):
        raise UnitError(f"cannot convert {source.symbol or 'a bare number'} ({source.family}) "
                        f"to {target.symbol or 'a bare number'} ({target.family})")
    if math.isinf(value):
        return value
    return value * source.factor / target.factor


def format_value(value: float | None, unit: str | None = None) -> str:
    """A readable number with its unit: ``41%``, ``268 GB/s``, ``0.41``, ``-inf``."""
    if value is None:
        return "?"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    text = f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    if "e" in text:
        text = f"{value:.3e}"
    symbol = (known.symbol if (known := unit_of(unit)) else unit) or ""
    if symbol in ("", "ratio", "count"):
        return text
    if symbol == "%":
        return f"{text}%"
    if symbol == "x":
        return f"{text}x"
    return f"{text} {unit}"


# ---------------------------------------------------------------------------
# Figures


@dataclass(frozen=True)
class Figure:
    """One figure as written: a value or a ``low``–``high`` range, its unit and where it sits.

    ``start``/``end`` are character offsets into the parsed text, ``line``/``column`` are
    1-based. Figures joined by an arrow (``2.12 ms → 268 GB/s``), a slash list
    (``299 / 320 / 337 GB/s``) or a count fraction share a ``group`` number; a figure that
    took its unit from a neighbour (``3.5→1.2 ms``) has ``unit_inherited``.
    """

    text: str
    low: float
    high: float
    unit: str | None
    start: int
    end: int
    line: int = 1
    column: int = 1
    approx: bool = False
    kind: FigureKind = "value"
    per: str | None = None
    count_of: int | None = None
    noun: str | None = None
    role: str | None = None  # None | "from" | "to" | "list"
    group: int = 0
    unit_inherited: bool = False
    decimals: int = 0
    bold: bool = False

    @property
    def is_range(self) -> bool:
        return self.kind in ("range", "plusminus")

    @property
    def value(self) -> float | None:
        """The point value (``None`` for a range)."""
        return None if self.is_range else self.low

    @property
    def unit_info(self) -> Unit:
        return unit_of(self.unit) or _NUMBER_UNIT

    @property
    def family(self) -> str:
        if self.kind == "count" and self.unit is None:
            return "count"
        return self.unit_info.family

    @property
    def full_unit(self) -> str | None:
        """Unit with its per-qualifier, as written: ``"ms/tok"``."""
        if self.unit and self.per:
            return f"{self.unit}/{self.per}"
        return self.unit

    @property
    def rounding(self) -> float:
        """Half a unit of the last digit written: the rounding a reader must allow."""
        return 0.5 * 10.0 ** (-self.decimals)

    def interval(self, unit: str | None = None, *, tolerant: bool = False) -> tuple[float, float]:
        """``(low, high)`` in ``unit`` (default: as written).

        ``tolerant`` widens by the printed rounding, and approximate figures (``~``, ``≈``)
        by a further 10% of their magnitude, which is what "about" can honestly mean.
        """
        low, high = self.low, self.high
        if tolerant and self.kind != "count":  # counts are exact
            slack = self.rounding
            if self.approx:
                slack += 0.1 * max(abs(low), abs(high))
            low, high = low - slack, high + slack
        if unit is not None or self.unit is not None:
            source = self.unit if self.kind != "count" else "count"
            target = unit if unit is not None else self.unit
            if self.kind == "count" and (known := unit_of(target)) and known.family == "fraction":
                denominator = self.count_of or (1 if self.low == self.high == 0 else None)
                if denominator:
                    return convert(low / denominator, "ratio", target), convert(high / denominator, "ratio", target)
                raise UnitError(f"count {self.text!r} has no denominator to make a rate")
            low, high = convert(low, source, target), convert(high, source, target)
        return (min(low, high), max(low, high))

    def canonical(self) -> tuple[float, float, str]:
        """``(low, high, family)`` in the family's base unit (bytes, seconds, B/s, ratio...)."""
        base = BASE_UNITS.get(self.family, "")
        if self.kind == "count":
            return self.low, self.high, "count"
        low, high = self.interval(base or None) if self.unit else (self.low, self.high)
        return low, high, self.family


_SIGN_CHARS = "+-−±"
_MINUS = "-−"
_APPROX_SYMBOLS = ("~", "≈", "≃", "∼", "about", "around", "roughly", "approximately", "approx.", "nearly", "circa")
_NUMBER_RE = re.compile(r"\d+(?:,\d{3}(?!\d))+(?:\.\d+)?|\d+(?:\.\d+)?|(?<![\d.])\.\d+")
_DATE_RE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
# Spellings recognised after a number in prose. "B" is left out: "12B" names a model size far more
# often than it counts bytes; "x" and "×" are handled apart (glued only).
_UNIT_SPELLINGS = sorted((s for s in UNITS if s not in ("ratio", "rate", "fraction", "1", "count", "x", "×", "B")),
                         key=len, reverse=True)
_UNIT_RE = re.compile(
    r"(?P<unit>" + "|".join(re.escape(s) for s in _UNIT_SPELLINGS) + r")"
    r"(?:(?<=[%])|(?![A-Za-z0-9µμ]))"
    r"(?P<per>/(?!s(?![A-Za-z]))[A-Za-z]{1,8}(?![A-Za-z0-9/]))?"
)
_RATIO_RE = re.compile(r"[x×](?![A-Za-z0-9])")
_MULTIPLIER_RE = re.compile(r"(?P<mult>[kKM])(?![A-Za-z0-9])")
_COUNT_OF_RE = re.compile(r"(?P<noun>(?:\s+[A-Za-z][\w-]*){0,3}?)\s+(?:of|in|out of)\s+(?P<of>\d+)(?![\d.,]\d)")
_NOUN_RE = re.compile(r"(?:\s+|-)(?P<noun>[A-Za-z][A-Za-z-]*(?:\s+[a-z][a-z-]*)?)")
_STOP_NOUNS = {"of", "in", "and", "or", "to", "the", "a", "an", "at", "on", "vs", "for", "is", "are", "was", "with",
               "than", "per", "from", "by", "as", "each", "that", "this", "it", "then"}


@dataclass
class _Token:
    start: int  # first character (sign or digit)
    num_start: int
    end: int  # after the unit, if any
    number: float
    decimals: int
    integer: bool
    sign: str = ""
    unit: str | None = None
    per: str | None = None
    approx: bool = False
    glued_hyphen_before: bool = False  # "74-88": the 88
    count_of: int | None = None
    noun: str | None = None
    group: int = -1


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _prefix_length(pattern: str, text: str) -> int:
    """Length of ``pattern``'s match at the start of ``text``; the patterns used here may match nothing."""
    match = re.match(pattern, text)
    return match.end() if match else 0


def _decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


def _scan(text: str) -> list[_Token]:
    """Find candidate number tokens, rejecting identifiers, versions and dates."""
    blocked = [False] * (len(text) + 1)
    for match in _DATE_RE.finditer(text):
        for i in range(match.start(), match.end()):
            blocked[i] = True
    tokens: list[_Token] = []
    skip_until = -1
    for match in _NUMBER_RE.finditer(text):
        start, end = match.span()
        raw = match.group()
        if start < skip_until or blocked[start]:
            continue
        before = text[start - 1] if start else " "
        before2 = text[start - 2] if start >= 2 else " "
        after = text[end] if end < len(text) else " "
        after2 = text[end + 1] if end + 1 < len(text) else " "
        # identifiers (e4b, M1, bf16, CPM5), marks (§3, #4, @8k, $5), file positions (x.ts:512)
        if before and (_is_word_char(before) or before in "§#@$\\"):
            continue
        if before in ".:" and not before2.isspace():
            continue
        if before == "=" and _is_word_char(before2):
            continue  # assignments: "M=1", "FUSED_GELU=0"
        glued_hyphen = False
        if before in "-−" and before2 and _is_word_char(before2):
            if before2.isdigit():
                glued_hyphen = True  # "74-88": maybe a range, decided when joining
            else:
                continue  # "CPM5-1B", "A4B"
        if before == "×" and before2.isdigit():
            continue
        # versions (0.31.2) and dimension products (2816×704)
        if after == "." and after2.isdigit():
            skip_until = _prefix_length(r"[\d.]*", text[end:]) + end
            continue
        if after in "×x" and after2.isdigit():
            skip_until = _prefix_length(r"[\d×x]*", text[end:]) + end
            continue
        if after == "-" and after2.isalpha():
            continue  # "4-bit", "1-B", "14-year-old"
        number = float(raw.replace(",", ""))
        token = _Token(start=start, num_start=start, end=end, number=number, decimals=_decimals(raw),
                       integer="." not in raw, glued_hyphen_before=glued_hyphen)
        # unit, multiplier or ratio right after (one space at most before a unit)
        rest = end
        multiplier = _MULTIPLIER_RE.match(text, rest)
        if multiplier:
            token.number *= 1e3 if multiplier.group("mult") in "kK" else 1e6
            token.integer = float(token.number).is_integer()
            token.decimals = 0
            rest = multiplier.end()
            token.end = rest
        ratio = _RATIO_RE.match(text, rest)
        if ratio and not multiplier:
            token.unit, token.end = "x", ratio.end()
        else:
            gap = _prefix_length(r"[ \u00a0\u202f]?", text[rest:])
            unit = _UNIT_RE.match(text, rest + gap)
            if unit:
                spelled = unit.group("unit")
                token.unit = UNITS[spelled].symbol
                per = unit.group("per")
                token.per = per[1:] if per else None
                token.end = unit.end()
            elif after.isalpha() or after in "µμ":
                continue  # "12B", "24L", "2kv", "128d", "1a"
        # sign and approximation marks just before the number
        if before in _SIGN_CHARS and not (_is_word_char(before2) or before2 == ".") and not glued_hyphen:
            token.sign = "-" if before in _MINUS else before
            token.start = start - 1
        lead = text[max(0, token.start - 16):token.start].rstrip(" *_(\u00a0").lower()
        token.approx = any(lead.endswith(mark) for mark in _APPROX_SYMBOLS)
        marker = re.search(r"[~≈≃∼] ?$", text[max(0, token.start - 2):token.start])
        if marker:  # the figure as written includes its "~"
            token.start -= len(marker.group())
        if token.sign == "-":
            token.number = -token.number
        # counts: "0 of 924", "0 exact matches in 924", "924 samples"
        if token.unit is None and token.integer and not token.sign:
            of = _COUNT_OF_RE.match(text, token.end)
            if of and len(of.group("noun").split()) <= 3:
                token.count_of = int(of.group("of"))
                token.noun = of.group("noun").strip() or None
                token.end = of.end()
                skip_until = token.end
            else:
                noun = _NOUN_RE.match(text, token.end)
                words = noun.group("noun").split() if noun else []
                if words and words[0].lower() not in _STOP_NOUNS:
                    token.noun = " ".join(w for w in words[:2] if w.lower() not in _STOP_NOUNS)
        tokens.append(token)
    return tokens


def _between(text: str, left: _Token, right: _Token) -> str:
    return text[left.end:right.start]


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for match in re.finditer("\n", text):
        starts.append(match.end())
    return starts


def _position(starts: list[int], offset: int) -> tuple[int, int]:
    import bisect

    index = bisect.bisect_right(starts, offset) - 1
    return index + 1, offset - starts[index] + 1


def _bold_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__", text)]


def parse_figures(text: str) -> list[Figure]:
    """Every figure in ``text``, in order of appearance.

    Ranges (``74–88%``, ``−4 to −10%``, ``~10–15 µs``), arrows (``3.5→1.2 ms``), slash lists
    (``299 / 320 / 337 GB/s``) and count fractions (``9/9``, ``8/128``) share units
    right-to-left: a number without a unit takes the unit of the number it is joined to.
    """
    tokens = _scan(text)
    figures: list[Figure] = []
    starts = _line_starts(text)
    bold = _bold_spans(text)
    group = 0
    i = 0
    pending: list[tuple[_Token, str | None, str | None, bool]] = []  # token, role, unit, inherited

    def emit_value(token: _Token, *, role: str | None, unit: str | None, per: str | None, inherited: bool,
                   group_id: int) -> None:
        line, column = _position(starts, token.start)
        kind: FigureKind = "count" if (unit is None and (token.count_of is not None or token.noun)) else "value"
        end = token.end
        if kind == "count" and token.noun and token.count_of is None:
            end = text.index(token.noun, token.end) + len(token.noun)  # "0 exact matches"
        figures.append(Figure(
            text=text[token.start:end].strip(), low=token.number, high=token.number, unit=unit,
            start=token.start, end=end, line=line, column=column, approx=token.approx, kind=kind,
            per=per, count_of=token.count_of, noun=token.noun, role=role, group=group_id,
            unit_inherited=inherited, decimals=token.decimals,
            bold=any(a <= token.start and token.end <= b for a, b in bold)))

    while i < len(tokens):
        token = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        gap = _between(text, token, nxt) if nxt else ""
        # plus-minus: "±0.01 ms"
        if token.sign == "±":
            line, column = _position(starts, token.start)
            figures.append(Figure(
                text=text[token.start:token.end].strip(), low=-token.number, high=token.number, unit=token.unit,
                start=token.start, end=token.end, line=line, column=column, approx=token.approx, kind="plusminus",
                per=token.per, group=group, decimals=token.decimals))
            group += 1
            i += 1
            continue
        # ranges: "74–88%", "74-88 %", "0.4–2.0", "−4 to −10%", "~10–15 µs/op"
        joined = (gap == "-" and nxt.glued_hyphen_before) if nxt else False
        if nxt and token.count_of is None and (joined or re.fullmatch(r"[*_]*(?:\s*–\s*|\s+to\s+)[*_]*", gap)) and (
                token.unit is None or token.unit == nxt.unit):
            low, high = sorted((token.number, nxt.number))
            line, column = _position(starts, token.start)
            unit = nxt.unit
            figures.append(Figure(
                text=text[token.start:nxt.end].strip(), low=low, high=high, unit=unit,
                start=token.start, end=nxt.end, line=line, column=column, approx=token.approx or nxt.approx,
                kind="range", per=nxt.per, group=group, decimals=max(token.decimals, nxt.decimals),
                unit_inherited=token.unit is None and unit is not None,
                bold=any(a <= token.start and nxt.end <= b for a, b in bold) or any(
                    a <= nxt.num_start < b for a, b in bold)))
            group += 1
            i += 2
            continue
        if token.glued_hyphen_before:
            i += 1  # "512-516" whose left side was an identifier: not a figure
            continue
        # chains joined by "/" (lists, count fractions) or arrows
        chain = [token]
        joiners: list[str] = []
        j = i
        while j + 1 < len(tokens):
            here, there = tokens[j], tokens[j + 1]
            between = _between(text, here, there)
            if re.fullmatch(r"[*_]*\s*/\s*[*_]*", between) and here.count_of is None:
                joiners.append("/")
            elif re.fullmatch(r"[*_]*\s*(?:→|->|⟶|=>)\s*[*_]*", between):
                joiners.append("→")
            else:
                break
            chain.append(there)
            j += 1
        if len(chain) == 1:
            emit_value(token, role=None, unit=token.unit, per=token.per, inherited=False, group_id=group)
            group += 1
            i += 1
            continue
        # a count fraction "9/9", "8/128": two bare integers glued by one slash
        if (len(chain) == 2 and joiners == ["/"] and all(t.unit is None and t.integer for t in chain)
                and _between(text, chain[0], chain[1]) == "/"):
            left, right = chain
            line, column = _position(starts, left.start)
            figures.append(Figure(
                text=text[left.start:right.end].strip(), low=left.number, high=left.number, unit=None,
                start=left.start, end=right.end, line=line, column=column, approx=left.approx, kind="count",
                count_of=int(right.number), noun=right.noun, group=group))
            group += 1
            i = j + 1
            continue
        # units flow right-to-left to members without one
        unit, per = None, None
        inherited: list[tuple[str | None, str | None, bool]] = [(None, None, False)] * len(chain)
        for k in range(len(chain) - 1, -1, -1):
            member = chain[k]
            if member.unit is not None:
                unit, per = member.unit, member.per
                inherited[k] = (unit, per, False)
            else:
                inherited[k] = (unit, per, unit is not None)
        for k, member in enumerate(chain):
            if k > 0 and joiners[k - 1] == "→":
                role = "to"
            elif k + 1 < len(chain) and joiners[k] == "→":
                role = "from"
            else:
                role = "list"
            m_unit, m_per, was_inherited = inherited[k]
            emit_value(member, role=role, unit=m_unit, per=m_per, inherited=was_inherited, group_id=group)
        group += 1
        i = j + 1
    return figures


def parse_figure(text: str) -> Figure | None:
    """The first figure with a unit in ``text`` (else the first figure), or ``None``."""
    figures = parse_figures(text)
    for figure in figures:
        if figure.unit is not None:
            return figure
    return figures[0] if figures else None


def group_text(text: str, figures: Iterable[Figure]) -> str:
    """The source text spanned by figures of one group (``2.12 ms → 268 GB/s``)."""
    figures = list(figures)
    return text[min(f.start for f in figures):max(f.end for f in figures)].strip()


# ---------------------------------------------------------------------------
# Markdown sentences

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
            self._starts = _line_starts(self.text)
        return _position(self._starts, offset)

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


_FENCE_RE = re.compile(r"^[ \t]{0,3}(```+|~~~+).*?$.*?^[ \t]{0,3}\1[ \t]*$", re.M | re.S)
_COMMENT_RE = re.compile(r"<!--(.*?)-->", re.S)
_INLINE_CODE_RE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
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


def read_markdown(text: str) -> MarkdownDoc:
    """Split a Markdown document into sentences, headings and table rows.

    Headings become the section path (``"3. Roofline table > Notes"``, the top title left
    out when deeper headings exist); a table row is one sentence whose cells carry their
    column headers; list items and paragraphs are split at sentence ends.
    """
    chars = list(text)
    comments = []
    for match in _FENCE_RE.finditer(text):
        _blank(chars, match.start(), match.end())
    for match in _COMMENT_RE.finditer(text):
        if chars[match.start()] == "<":  # not inside a fence
            comments.append(Comment(match.group(1).strip(), match.start(), match.end()))
            _blank(chars, match.start(), match.end())
    partial = "".join(chars)
    for match in _INLINE_CODE_RE.finditer(partial):
        _blank(chars, match.start(), match.end())
    partial = "".join(chars)
    for match in _LINK_TARGET_RE.finditer(partial):
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


__all__ = [
    "BASE_UNITS", "Cell", "Comment", "Figure", "MarkdownDoc", "Sentence", "UNITS", "Unit", "UnitError",
    "compatible", "convert", "family_of", "format_value", "group_text", "parse_figure", "parse_figures",
    "read_markdown", "split_per", "unit_of",
]
