"""Figures in prose: values, ranges, counts and ± spreads, with their units and places in the text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal

from ._units import BASE_UNITS, NUMBER_UNIT, UNITS, Unit, UnitError, convert, unit_of

FigureKind = Literal["value", "range", "count", "plusminus"]


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
        return unit_of(self.unit) or NUMBER_UNIT

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
    """Decimals printed; negative for the trailing zeros of a whole number of two or more significant digits.

    "840" (GB/s) is "0.84" (TB/s) converted: both are good to ±5 GB/s, so a conversion keeps the
    precision of the figure it converts. "100" or "5000" (one significant digit) stay exact to ±0.5.
    """
    if "." in text:
        return len(text.split(".", 1)[1])
    digits = text.replace(",", "")
    significant = digits.rstrip("0")
    return -(len(digits) - len(significant)) if len(significant) >= 2 else 0


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


def line_starts(text: str) -> list[int]:
    starts = [0]
    for match in re.finditer("\n", text):
        starts.append(match.end())
    return starts


def position_of(starts: list[int], offset: int) -> tuple[int, int]:
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
    starts = line_starts(text)
    bold = _bold_spans(text)
    group = 0
    i = 0

    def emit_value(token: _Token, *, role: str | None, unit: str | None, per: str | None, inherited: bool,
                   group_id: int) -> None:
        line, column = position_of(starts, token.start)
        kind: FigureKind = "count" if (unit is None and (token.count_of is not None or token.noun)) else "value"
        end = token.end
        if kind == "count" and token.noun and token.count_of is None:
            found = text.find(token.noun, token.end)  # "0 exact matches"; masked text may have lost the noun
            end = found + len(token.noun) if found >= 0 else token.end
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
            line, column = position_of(starts, token.start)
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
            line, column = position_of(starts, token.start)
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
            line, column = position_of(starts, left.start)
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
