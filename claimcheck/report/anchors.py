"""Where the docs cite each claim: every ``<!-- claim: id -->`` anchor as file, line and the sentence it vouches for.

The anchors are found by the docs gate's own finder, so the report links exactly the sentences the
gate checks. Malformed anchors are the gate's to report; here they are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable


@dataclass(frozen=True)
class DocLink:
    """One doc sentence anchoring a claim."""

    claim_id: str
    path: Path
    line: int
    sentence: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def doc_links(paths: Iterable[str | Path]) -> tuple[dict[str, list[DocLink]], list[str]]:
    """Claim id -> the doc sentences anchoring it (in file and line order), and one note per unreadable doc."""
    from claimcheck.gate import doc_files, find_anchors
    from claimcheck.figures import read_markdown

    links: dict[str, list[DocLink]] = {}
    notes: list[str] = []
    for path in doc_files([p for p in paths if Path(p).exists()]):
        try:
            doc = read_markdown(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            notes.append(f"{path}: cannot read it for claim anchors ({type(error).__name__})")
            continue
        anchors, _ = find_anchors(doc, str(path))
        for anchor in anchors:
            sentence = " ".join(anchor.sentence.text(doc).split()) if anchor.sentence is not None else ""
            links.setdefault(anchor.claim_id, []).append(DocLink(anchor.claim_id, path, anchor.line, sentence))
    return links, notes
