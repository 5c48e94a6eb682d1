"""Anchors in a doc: ``<!-- claim: id -->`` comments, the sentences they anchor, the machines a sentence names."""

from __future__ import annotations

import re
from typing import Sequence

from claimcheck.figures import Figure, MarkdownDoc, Sentence

from ._model import ANCHOR_RE, Anchor, ID_RE, MACHINE_NAME_RE, Problem


def find_anchors(doc: MarkdownDoc, path: str) -> tuple[list[Anchor], list[Problem]]:
    """Claim anchors in a doc, each tied to its sentence; malformed ones are problems."""
    anchors: list[Anchor] = []
    problems: list[Problem] = []
    for comment in doc.comments:
        match = ANCHOR_RE.match(comment.body)
        if not match:
            continue
        line, column = doc.position(comment.start)
        sentence = _anchored_sentence(doc, comment.start)
        if sentence is None:
            problems.append(Problem(path, line, column, "claim anchor is not attached to a sentence: put it inside "
                                                        "or right after the sentence it vouches for"))
        for raw in match.group("ids").split(","):
            claim_id = raw.strip()
            if not ID_RE.match(claim_id):
                problems.append(Problem(path, line, column, f"malformed claim id {claim_id!r} in anchor "
                                                            "(expected a slug of a-z, 0-9 and '-')"))
                continue
            anchors.append(Anchor(claim_id, path, comment.start, line, column, sentence))
    return anchors, problems


def _anchored_sentence(doc: MarkdownDoc, offset: int) -> Sentence | None:
    before = [s for s in doc.sentences if s.start <= offset]
    if not before:
        return None
    sentence = before[-1]
    if offset < sentence.end:
        return sentence
    gap = doc.masked[sentence.end:offset]
    if not gap.strip() and gap.count("\n") <= 1 and sentence.kind != "table":
        return sentence
    return None


def machines_named(text: str) -> list[str]:
    """Machine names a sentence mentions (``"M1 Max"``, ``"H200"``, ``"CPU"``)."""
    return [" ".join(m.group().split()) for m in MACHINE_NAME_RE.finditer(text)]


def class_matches(machine_class: str, name: str) -> bool:
    """Whether a machine class (``backend/device/memory``) is the machine ``name`` refers to."""
    lowered = machine_class.lower()
    name = name.lower().removeprefix("apple ").strip()
    if name == "cpu":
        return lowered.startswith("cpu/")
    return re.search(r"(?<![a-z0-9])" + re.escape(name) + r"(?![a-z0-9])", lowered) is not None


def figures_by_anchor(doc: MarkdownDoc, anchors: Sequence[Anchor]) -> dict[int, list[Figure]]:
    """Split a sentence's figures between its anchors (figures before each anchor; the rest to the last)."""
    out: dict[int, list[Figure]] = {}
    offsets = sorted({a.offset for a in anchors})
    sentence = anchors[0].sentence
    assert sentence is not None
    figures = doc.figures_in(sentence.start, max(sentence.end, max(offsets)))
    previous = -1
    for k, offset in enumerate(offsets):
        last = k == len(offsets) - 1
        out[offset] = [f for f in figures if f.start > previous and (last or f.start < offset)]
        previous = offset
    return out
