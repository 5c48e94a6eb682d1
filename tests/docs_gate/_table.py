"""The gate on copies of both findings docs, in process: the committed evidence opened once, claims read once."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from claimcheck.gate import Evidence, GateReport, check_docs, load_claim_index
from claimcheck.gate._config import DocsConfig
from claimcheck.store import EvidenceStore, merge

from ._clone import unpack_committed

#: The class CI gates on (`.github/workflows/claims.yml`, GATE_CLASS).
GATE_CLASS = "cpu/AMD EPYC/16-32GiB"
FINDINGS = "docs/findings"


@dataclass(frozen=True)
class Edit:
    """One replacement in one findings doc: ``before`` (its first occurrence) becomes ``after``."""

    doc: str
    before: str
    after: str
    at: str = ""  # the text of the edited figure as it stands after the edit (default: ``after``)

    def apply(self, text: str) -> str:
        assert text.count(self.before) >= 1, f"{self.doc}: {self.before!r} is not in the committed doc"
        return text.replace(self.before, self.after, 1)

    def position(self, text: str) -> tuple[int, int]:
        """Line and column of the edited figure in the edited text."""
        start = text.index(self.after)
        offset = start + self.after.rindex(self.at) if self.at else start
        line = text.count("\n", 0, offset) + 1
        return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


class Gate:
    """A scratch clone of the committed findings, claims and profiles; each run edits a fresh copy of the docs."""

    def __init__(self, folder: Path) -> None:
        self.root = unpack_committed(folder)
        self.pristine = {p.name: p.read_text(encoding="utf-8") for p in (self.root / FINDINGS).glob("*.md")}
        merged = folder / "profiles.sqlite"
        merge(merged, sorted((self.root / "reports" / "profiles").glob("*.sqlite")))
        self.store = EvidenceStore(merged, readonly=True)
        self.evidence = Evidence(self.store, GATE_CLASS)
        self.claims, problems = load_claim_index([self.root / "claims"])
        assert not problems, problems

    def run(self, *edits: Edit) -> tuple[GateReport, dict[str, str]]:
        """The gate over both docs with ``edits`` applied (docs/findings strict, as configured)."""
        texts = dict(self.pristine)
        for edit in edits:
            texts[edit.doc] = edit.apply(texts[edit.doc])
        for name, text in texts.items():
            (self.root / FINDINGS / name).write_text(text, encoding="utf-8")
        try:
            report = check_docs([self.root / FINDINGS], self.evidence, claims=self.claims, machine_class=GATE_CLASS,
                                reports_dir=self.root / "reports",
                                strict_paths=DocsConfig(strict=(str(self.root / FINDINGS),)))
        finally:
            for name, text in self.pristine.items():
                (self.root / FINDINGS / name).write_text(text, encoding="utf-8")
        return report, texts

    def close(self) -> None:
        self.store.close()
        shutil.rmtree(self.root, ignore_errors=True)
