"""The evidence the gate compares with: latest results per claim and machine class, and the suggested corrections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from claimcheck.store import EvidenceStore, StoredResult, choose_class
from claimcheck.verdict import worst


class Evidence:
    """Latest result items per claim and machine class, read from an evidence store.

    ``store`` is an evidence store, or ``None`` for "nothing measured yet".
    """

    def __init__(self, store: EvidenceStore | None, machine_class: str | None = None, *, label: str = "") -> None:
        self.store = store
        self.label = label
        self._history: dict[str, list[StoredResult]] = {}
        self.choice = choose_class(store, machine_class)
        self.gating_class = self.choice.machine_class

    def classes(self) -> list[str]:  # noqa: D102
        if self.store is None:
            return []
        return self.store.machine_classes()

    def _rows(self, claim_id: str) -> list[StoredResult]:
        assert self.store is not None
        if claim_id not in self._history:
            self._history[claim_id] = list(self.store.history(claim_id))
        return self._history[claim_id]

    def latest(self, claim_id: str, machine_class: str | None) -> list[StoredResult]:
        """Items of the newest run on ``machine_class`` that has a result for ``claim_id``."""
        if self.store is None or machine_class is None:
            return []
        rows = [row for row in self._rows(claim_id) if row.machine_class == machine_class]
        if not rows:
            return []
        last_run = rows[-1].run_id
        return [row for row in rows if row.run_id == last_run]

    def computed(self, claim_id: str) -> list[StoredResult]:
        """Items of the newest run, on any machine class, that computed the claim exactly.

        A deterministic probe (arithmetic on printed inputs, byte counts) gives the same value on
        every machine, so its result checks a doc's figure whatever machine the sentence names.
        Empty when the claim was never decided that way.
        """
        if self.store is None:
            return []
        rows = [row for row in self._rows(claim_id) if row.result.deterministic]
        if not rows:
            return []
        last_run = rows[-1].run_id
        return [row for row in rows if row.run_id == last_run]


def claim_verdict(items: Sequence[StoredResult]) -> str:
    """One verdict for a claim's items: the worst of them (``missing`` when there are none)."""
    chosen = worst(item.verdict for item in items)
    return chosen.value if chosen else "missing"


def suggested_sentence(reports_dir: str | Path | None, claim_id: str, verdict: str = "refuted") -> str | None:
    """The replacement sentence a report wrote for the claim, one line, if any.

    ``claimcheck report`` writes ``corrections/<id>.json`` for refuted claims and
    ``inconclusive/<id>.json`` for inconclusive ones, each with a ``replacement`` sentence.
    """
    if reports_dir is None:
        return None
    folders = ("inconclusive", "corrections") if verdict == "inconclusive" else ("corrections", "inconclusive")
    for folder in folders:
        try:
            data = json.loads((Path(reports_dir) / folder / f"{claim_id}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for key in ("replacement", "suggested_sentence", "suggestion"):
            value = data.get(key) if isinstance(data, dict) else None
            if isinstance(value, str) and value.strip():
                return " ".join(value.split())
    return None
