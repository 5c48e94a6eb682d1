"""The evidence the gate compares with: latest results per claim and machine class, and the suggested corrections."""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Sequence

from claimcheck.store import ClassChoice, EvidenceStore, StoredResult, choose_class
from claimcheck.verdict import Verdict, worst


def _same_machine(recorded: Mapping[str, Any], facts: Mapping[str, Any]) -> bool:
    """Whether a stored run's fingerprint is this machine's: backend, CPU, architecture and memory band."""
    from claimcheck.machine import memory_band

    try:
        memory = memory_band(float(recorded.get("memory_gib") or 0))
    except (TypeError, ValueError):
        return False
    return (recorded.get("backend") == facts["backend"] and recorded.get("cpu") == facts["cpu"]
            and recorded.get("arch", facts["arch"]) == facts["arch"] and memory == memory_band(facts["memory_gib"]))


def this_machine_class(store: EvidenceStore | None) -> str | None:
    """This machine's class, named without importing MLX (the gate only reads evidence).

    The class of this machine's facts (:func:`claimcheck.machine.light_fingerprint`) when the
    store has a run of it, which is the fingerprint's class on the CPU backend and on Apple
    silicon; else the class of the newest stored run measured on this machine (a discrete GPU or
    a virtual Mac, whose GPU names only MLX can read); else the class of the facts. ``None`` when
    the facts cannot be read here.
    """
    from claimcheck.machine import light_fingerprint, machine_class

    try:
        facts = light_fingerprint()
    except Exception:  # noqa: BLE001 - e.g. a malformed CLAIMCHECK_BACKEND: the gate falls back to the store
        return None
    named = machine_class(facts)
    if store is None or store.runs(named, limit=1):
        return named
    mine = next((run.machine_class for run in store.runs() if _same_machine(run.machine, facts)), None)
    return mine or named


class Evidence:
    """Latest result items per claim and machine class, read from an evidence store.

    ``store`` is an evidence store, or ``None`` for "nothing measured yet".
    """

    def __init__(self, store: EvidenceStore | None, machine_class: str | None = None, *, label: str = "") -> None:
        self.store = store
        self.label = label
        self._loaded: dict[str, list[StoredResult]] | None = None
        mine = None if machine_class else this_machine_class(store)
        choice = choose_class(store, machine_class, mine=mine or "")  # "": unknown here, never measured with MLX
        self.choice = choice if choice.machine_class else ClassChoice(None, choice.how)
        self.gating_class = self.choice.machine_class
        #: On a runner that cannot measure every claim (a VM), the committed evidence cited for those it cannot.
        self.committed: Evidence | None = None

    def classes(self) -> list[str]:  # noqa: D102
        if self.store is None:
            return []
        return self.store.machine_classes()

    def _rows(self, claim_id: str) -> list[StoredResult]:
        """Every stored item of a claim, oldest run first; every run is read once, whole (its claims with it)."""
        assert self.store is not None
        if self._loaded is None:
            self._loaded = {}
            runs = sorted(self.store.evidence_runs(), key=lambda run: (run.started, run.run_id))
            for run in runs:
                for row in self.store.results(run.run_id):
                    self._loaded.setdefault(row.claim_id, []).append(row)
        return self._loaded.get(claim_id, [])

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
        """The newest exact computation of each of the claim's items, on any machine class.

        A deterministic probe (arithmetic on printed inputs, byte counts) gives the same value on
        every machine, so its result checks a doc's figure whatever machine the sentence names.
        Each item is read from the newest run that computed it, among the runs that recorded the
        claim as the newest one did: a run that computed only some items (a shard, a run of one
        item) does not hide the others, and items of an older wording of the claim do not return.
        Empty when the claim was never decided that way.
        """
        if self.store is None:
            return []
        rows = [row for row in self._rows(claim_id) if row.result.deterministic]
        if not rows:
            return []
        wording = rows[-1].claim.content_hash
        newest: dict[str, StoredResult] = {}
        for row in rows:  # oldest run first, so a later row replaces an earlier one
            if row.claim.content_hash == wording:
                newest[row.item_id] = row
        return list(newest.values())


def claim_verdict(items: Sequence[StoredResult]) -> Verdict | None:
    """One verdict for a claim's items: the worst of them (``None`` when there are none)."""
    return worst(item.verdict for item in items)


def suggested_sentence(reports_dir: str | Path | None, claim_id: str, verdict: Verdict | None = None) -> str | None:
    """The replacement sentence a report wrote for the claim, one line, if any.

    ``claimcheck report`` writes ``corrections/<id>.json`` for overturned claims and
    ``inconclusive/<id>.json`` for unconfirmed ones, each with a ``replacement`` sentence; the
    folder of ``verdict``'s report kind is read first.
    """
    from claimcheck.outcome.policy import REPORT_FOLDERS, report_kind

    if reports_dir is None:
        return None
    kind = report_kind(verdict) if verdict is not None else None
    first = REPORT_FOLDERS[kind] if kind is not None else REPORT_FOLDERS["correction"]
    folders = [first, *(f for f in REPORT_FOLDERS.values() if f != first)]
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
