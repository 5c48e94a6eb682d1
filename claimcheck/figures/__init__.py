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

from ._markdown import Cell, Comment, MarkdownDoc, Sentence, read_markdown
from ._parse import Figure, group_text, parse_figure, parse_figures
from ._units import BASE_UNITS, UNITS, Unit, UnitError, compatible, convert, family_of, format_value, split_per, unit_of

__all__ = [
    "BASE_UNITS", "Cell", "Comment", "Figure", "MarkdownDoc", "Sentence", "UNITS", "Unit", "UnitError",
    "compatible", "convert", "family_of", "format_value", "group_text", "parse_figure", "parse_figures",
    "read_markdown", "split_per", "unit_of",
]
