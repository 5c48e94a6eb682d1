"""Text comparison for the temperature search: exact matches, content-word recall, a match still possible."""

from __future__ import annotations

import re
from typing import Sequence

_WORD = re.compile(r"[a-z0-9']+")
STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being it its this that these "
    "those there their they them he she his her i you your we our my me not no so do does did can could should would "
    "will may might must have has had than then too very just also into about over under up down out off again".split()
)


def normalize_text(text: str) -> str:
    """Whitespace-normalised text for exact matching."""
    return " ".join(text.split())


def content_words(text: str) -> set[str]:
    """Lower-cased word set without common function words (the content of a text)."""
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


def content_recall(sample: str, target: str) -> float | None:
    """Share of the target's content words that the sample also uses (``None`` if the target has none)."""
    wanted = content_words(target)
    if not wanted:
        return None
    return len(wanted & content_words(sample)) / len(wanted)


MISS_MARGIN_CHARS = 8


def can_still_match(text: str, target: str, margin: int = MISS_MARGIN_CHARS) -> bool:
    """Whether a sample whose tokens so far decode to ``text`` can still equal ``target`` (whitespace-normalised).

    The text of a token prefix is a prefix of the final text except near its end (an incomplete
    UTF-8 character, a space that a detokenizer joins to the next token), so only a difference
    more than ``margin`` characters before its end rules the match out.
    """
    sample, wanted = normalize_text(text), normalize_text(target)
    settled = len(sample) - margin
    return settled <= 0 or wanted.startswith(sample[:settled])


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Number of leading tokens two sequences share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
