"""Reading the store: runs, the claims as they were, results with their adjustments, history and drift.

Everything returned is typed (:class:`StoredRun`, :class:`StoredResult`,
:class:`~claimcheck.claim.Claim`, :class:`Drift`); rows never leave the store.
"""

from __future__ import annotations

import dataclasses
import math
import socket
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claimcheck.claim import Claim
from claimcheck.engine.controls import attach_controls
from claimcheck.engine.result import Adjustment
from claimcheck.verdict import Verdict

if TYPE_CHECKING:
    from claimcheck.outcome.run import RunOutcome

from ._base import StoreError, dumps, like_prefix, loads
from ._evidence import evidence_runs

#: SQL over ``results x``: the row was measured in its own run, not carried forward from an earlier one
#: (a carried row, or an adjudicated run's copy of its shards, repeats a figure already stored)
MEASURED_IN_RUN = "(x.outcome IS NULL OR instr(x.outcome, '\"carried_from\"') = 0)"
from ._provenance import process_alive
from ._rows import stored_claim, stored_result
from ._schema import column_names, table_names
from ._types import Drift, RunRows, StoredPlot, StoredResult, StoredRun


def effective_status(status: str, host: str | None, pid: int | None, pid_started: str | None) -> str:
    """``running`` only while its writer is alive on this host; a dead or unknown writer means incomplete."""
    if status != "running":
        return status
    if host == socket.gethostname() and process_alive(pid, pid_started):
        return "running"
    return "incomplete"


def _run(row: Mapping[str, Any]) -> StoredRun:
    return StoredRun(
        run_id=str(row["run_id"]), started=str(row["started"]), finished=row.get("finished"),
        status=str(row["status"]),
        effective_status=effective_status(str(row["status"]), row.get("host"), row.get("pid"), row.get("pid_started")),
        machine_class=str(row.get("machine_class") or ""), machine=loads(row.get("machine"), {}) or {},
        options=loads(row.get("options"), {}) or {}, suite_commit=row.get("suite_commit"),
        claims_commit=row.get("claims_commit"), host=row.get("host"), pid=row.get("pid"),
        result_count=int(row.get("result_count") or 0), judgement=loads(row.get("judgement"), None),
    )


def _with_controls(found: list[StoredResult]) -> list[StoredResult]:
    """The run's results with each claim's positive-control outcome attached (the control is stored on its own)."""
    attached = attach_controls([item.result for item in found])
    return [dataclasses.replace(item, result=result) for item, result in zip(found, attached)]


def _figure_moved(stat: float | None, low: float | None, high: float | None) -> bool:
    if stat is None or low is None or high is None:
        return False
    if math.isnan(stat) or math.isnan(low) or math.isnan(high):
        return False
    return not low <= stat <= high


class StoreReading:
    """The read side of :class:`~claimcheck.store.EvidenceStore` (one connection, no writes)."""

    path: Path
    _conn: sqlite3.Connection

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self._conn.execute(sql, tuple(args))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, values)) for values in cursor.fetchall()]

    def _select_runs(self, where: str = "", args: Sequence[Any] = ()) -> list[StoredRun]:
        rows = self._rows(
            "SELECT r.*, (SELECT COUNT(*) FROM results x WHERE x.run_id = r.run_id) AS result_count"
            f" FROM runs r {where} ORDER BY r.started, r.rowid", args)
        return [_run(row) for row in rows]

    def runs(self, machine_class: str | None = None, *, limit: int | None = None) -> list[StoredRun]:
        """Runs newest first (optionally of one machine class; at most ``limit``)."""
        if machine_class is None:
            found = self._select_runs()
        else:
            found = self._select_runs("WHERE r.machine_class = ?", (machine_class,))
        found.reverse()
        return found[:limit] if limit else found

    def evidence_runs(self, machine_class: str | None = None) -> list[StoredRun]:
        """Runs that are evidence of their class (whole, finished, adjudicated), newest first."""
        return evidence_runs(self.runs(machine_class))

    def latest_evidence(self, machine_class: str | None = None) -> StoredRun | None:
        """The newest run that is evidence of ``machine_class`` (any class when None), or None."""
        found = self.evidence_runs(machine_class)
        return found[0] if found else None

    def outcome(self, run_id: str) -> RunOutcome:
        """The run's outcome as it was shown: its final results judged by its recorded judgement.

        A run stored before judgements were kept reads as judged without a lock, and says so.
        """
        from claimcheck.outcome.run import Judgement, recorded

        run = self.run(run_id)
        record = dict(run.judgement or {})
        judgement = Judgement.from_record(record.get("judgement"), run.options)
        results = [stored.result for stored in self.results(run_id)]
        return recorded(run.run_id, run.machine_class, results, judgement, record.get("printed") or {})

    def holds_run(self, rows: RunRows) -> bool:
        """Whether this store holds the run of ``rows`` (another store's :meth:`run_rows`) row for row.

        Every table counts, adjustments and plot declarations too: a copy missing any of them is not held.
        """
        try:
            return self.run_rows(rows.run["run_id"]) == rows
        except StoreError:
            return False

    def run_ids(self) -> list[str]:
        """Every run id, oldest first (the order runs were started)."""
        return [row[0] for row in self._conn.execute("SELECT run_id FROM runs ORDER BY started, rowid")]

    def column_names(self, table: str) -> list[str]:
        """The columns a table of this file has, in order (a migrated file may have more than it once had)."""
        if table not in table_names(self._conn):
            raise StoreError(f"{self.path}: no table {table}")
        return column_names(self._conn, table)

    def run_rows(self, run_id: str) -> RunRows:
        """A run's rows exactly as stored, for copying it into another store."""
        found = self._rows("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        if not found:
            raise StoreError(f"{self.path}: no run {run_id}")
        return RunRows(
            run=found[0],
            claims=tuple(self._rows("SELECT * FROM claims WHERE run_id = ? ORDER BY rowid", (run_id,))),
            results=tuple(self._rows("SELECT * FROM results WHERE run_id = ? ORDER BY rowid", (run_id,))),
            adjustments={item: tuple(steps) for item, steps in self.adjustments(run_id).items()},
            plots=tuple(self._rows("SELECT * FROM plots WHERE run_id = ? ORDER BY probe", (run_id,)))
            if "plots" in table_names(self._conn) else (),
        )

    def plots(self, run_id: str) -> dict[str, StoredPlot]:
        """Probe name -> the plot declaration the run recorded (empty for runs recorded before plots were kept)."""
        if "plots" not in table_names(self._conn):
            return {}
        rows = self._conn.execute("SELECT probe, declaration FROM plots WHERE run_id = ? ORDER BY probe", (run_id,))
        return {probe: StoredPlot.from_record(probe, loads(text, {})) for probe, text in rows.fetchall()}

    def machine_classes(self) -> list[str]:
        """Every machine class with a run in the store, sorted."""
        return sorted({run.machine_class for run in self._select_runs()} - {""})

    def run(self, run_id: str) -> StoredRun:
        """One run; raises :class:`StoreError` when unknown."""
        found = self._select_runs("WHERE r.run_id = ?", (run_id,))
        if not found:
            raise StoreError(f"{self.path}: no run {run_id}")
        return found[0]

    def latest_run(self, machine_class: str | None = None) -> StoredRun | None:
        """The most recently started run (of one machine class), or ``None``."""
        found = self.runs(machine_class, limit=1)
        return found[0] if found else None

    def resolve_run(self, ref: str | None, machine_class: str | None = None) -> StoredRun:
        """A run from a full id, a unique id prefix, or ``None``/``"latest"`` (of ``machine_class`` when given)."""
        if ref in (None, "", "latest"):
            latest = self.latest_run(machine_class)
            if latest is None:
                where = f" of machine class {machine_class}" if machine_class else ""
                raise StoreError(f"{self.path}: the store has no runs{where} yet")
            return latest
        assert ref is not None
        exact = self._select_runs("WHERE r.run_id = ?", (ref,))
        if exact:
            return exact[0]
        matches = self._select_runs("WHERE r.run_id LIKE ? ESCAPE '\\'", (like_prefix(ref),))
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise StoreError(f"{self.path}: no run {ref}")
        raise StoreError(f"{self.path}: run prefix {ref} is ambiguous ({len(matches)} runs)")

    def previous_run(self, run_id: str) -> StoredRun | None:
        """The run started just before ``run_id`` on the same machine class."""
        run = self.run(run_id)
        same_class = self._select_runs("WHERE r.machine_class = ?", (run.machine_class,))
        index = [r.run_id for r in same_class].index(run_id)
        return same_class[index - 1] if index > 0 else None

    def claims(self, run_id: str) -> dict[str, Claim]:
        """The claims of a run by id, as the run recorded them."""
        return {row["claim_id"]: stored_claim(row) for row in self._rows("SELECT * FROM claims WHERE run_id = ?",
                                                                          (run_id,))}

    def adjustments(self, run_id: str) -> dict[str, list[Adjustment]]:
        """Every adjustment of a run by item, in the order applied."""
        return self._item_adjustments(run_id, None)

    def _item_adjustments(self, run_id: str, item_ids: Sequence[str] | None) -> dict[str, list[Adjustment]]:
        """The adjustments of a run's ``item_ids`` (all its items when None) by item, in the order applied."""
        if "adjustments" not in table_names(self._conn):
            return {}
        out: dict[str, list[Adjustment]] = {}
        chosen = "" if item_ids is None else f" AND item_id IN ({', '.join('?' * len(item_ids))})"
        cursor = self._conn.execute(
            "SELECT item_id, step, before, after, reason, adjusted_pvalue, chain FROM adjustments"
            f" WHERE run_id = ?{chosen} ORDER BY item_id, seq", (run_id, *(item_ids or ())))
        for item_id, step, before, after, reason, pvalue, chain in cursor.fetchall():
            out.setdefault(item_id, []).append(Adjustment(
                step, Verdict(before), Verdict(after), reason or "", pvalue, tuple(loads(chain, []) or ())))
        return out

    def results(self, run_id: str) -> list[StoredResult]:
        """Every item of a run in recording order, each with its claim and every adjustment."""
        run = self.run(run_id)
        claims = self.claims(run_id)
        adjustments = self.adjustments(run_id)
        rows = self._rows(
            "SELECT x.*, r.machine_class AS machine_class, r.started AS run_started FROM results x"
            " JOIN runs r ON r.run_id = x.run_id WHERE x.run_id = ? ORDER BY x.rowid", (run_id,))
        found = [stored_result(row, claims.get(row["claim_id"]), adjustments.get(row["item_id"], []),
                               run_status=run.effective_status) for row in rows]
        return _with_controls(found)

    def history(self, claim_id: str) -> list[StoredResult]:
        """Every stored item of a claim across runs and machines, oldest run first."""
        rows = self._rows(
            "SELECT x.*, r.started AS run_started, r.machine_class AS machine_class, r.status AS run_status,"
            " r.host AS run_host, r.pid AS run_pid, r.pid_started AS run_pid_started"
            " FROM results x JOIN runs r ON r.run_id = x.run_id"
            " WHERE x.claim_id = ? ORDER BY r.started, r.rowid, x.rowid", (claim_id,))
        found: list[StoredResult] = []
        # Only this claim's record and its items' adjustments are read from each run: reading every claim of
        # every run here made a report of 300 claims over 30 runs parse a million claim records.
        claims = {row["run_id"]: stored_claim(row) for row in self._rows("SELECT * FROM claims WHERE claim_id = ?",
                                                                          (claim_id,))}
        items_by_run: dict[str, list[str]] = {}
        for row in rows:
            items_by_run.setdefault(row["run_id"], []).append(row["item_id"])
        adjustments = {run_id: self._item_adjustments(run_id, items) for run_id, items in items_by_run.items()}
        for row in rows:
            run_id = row["run_id"]
            status = effective_status(str(row["run_status"]), row["run_host"], row["run_pid"], row["run_pid_started"])
            found.append(stored_result(row, claims.get(run_id), adjustments[run_id].get(row["item_id"], []),
                                       run_status=status))
        if claim_id.endswith("--control"):
            return found
        controls = self.history(f"{claim_id}--control")  # a claim's control is stored as a claim of its own
        if not controls:
            return found
        per_run: dict[str, list[StoredResult]] = {}
        for item in [*found, *controls]:
            per_run.setdefault(item.run_id, []).append(item)
        return [item for items in per_run.values() for item in _with_controls(items) if item.claim_id == claim_id]

    def item_estimates(self, item_id: str, machine_class: str, *, probe: Mapping[str, Any] | None = None,
                       limit: int = 20) -> list[float]:
        """The item's estimates in earlier complete runs on ``machine_class``, oldest first (at most ``limit``).

        What a between-run variance component reads (:func:`claimcheck.stats.widen_between_runs`):
        plain numbers, only runs that finished complete, only decisions with a finite estimate, each
        measurement once (a carried-forward copy would count one run's figure twice and shrink the spread).
        With ``probe`` (the claim's recorded probe: name, params, grid) only runs that measured that
        same design count: a control or claim whose params changed measured something else before,
        and its old figures would pass for a spread between runs.
        """
        design = ""
        arguments: tuple[Any, ...] = (item_id, machine_class)
        if probe is not None:
            design = (" AND EXISTS (SELECT 1 FROM claims c WHERE c.run_id = x.run_id AND c.claim_id = x.claim_id"
                      " AND c.probe = ?)")
            arguments += (dumps(dict(probe)),)
        rows = self._rows(
            "SELECT x.statistic AS statistic FROM results x JOIN runs r ON r.run_id = x.run_id"
            " WHERE x.item_id = ? AND r.machine_class = ? AND r.status = 'complete' AND x.statistic IS NOT NULL"
            f" AND {MEASURED_IN_RUN}{design} ORDER BY r.started DESC, r.rowid DESC LIMIT ?", (*arguments, limit))
        found = [float(row["statistic"]) for row in rows if math.isfinite(float(row["statistic"]))]
        return found[::-1]

    def drift(self, run_id: str) -> list[Drift]:
        """Items that moved since the previous run on the same machine class.

        An item drifts when its verdict changed, or when its figure now lies
        outside the interval the previous run measured. Only runs of the same
        machine class are compared: a figure from another machine is a
        different measurement, not a change.
        """
        previous = self.previous_run(run_id)
        if previous is None:
            return []
        before = {r.item_id: r for r in self.results(previous.run_id)}
        drifts = []
        for now in self.results(run_id):
            old = before.get(now.item_id)
            if old is None:
                continue
            stat = now.decision.statistic if now.decision else None
            low, high = (old.decision.low, old.decision.high) if old.decision else (None, None)
            verdict_changed = now.verdict is not old.verdict
            figure_moved = _figure_moved(stat, low, high)
            claim_changed = bool(now.claim.content_hash and old.claim.content_hash
                                 and now.claim.content_hash != old.claim.content_hash)
            if verdict_changed or figure_moved:
                drifts.append(Drift(
                    claim_id=now.claim_id, item_id=now.item_id, run_id=run_id, previous_run_id=previous.run_id,
                    machine_class=now.machine_class, verdict=now.verdict.value, previous_verdict=old.verdict.value,
                    statistic=stat, previous_statistic=old.decision.statistic if old.decision else None,
                    previous_low=low, previous_high=high, verdict_changed=verdict_changed,
                    figure_moved=figure_moved, claim_changed=claim_changed,
                ))
        return drifts
