"""Rows in and out: an :class:`ItemResult` flattened into a ``results`` row, and stored rows read back as typed results.

Writing keeps the whole record as canonical JSON beside the flat columns, so
reading rebuilds exactly what the runner produced; rows written before the
record existed (schema version 0) are rebuilt from their columns.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from claimcheck.claim import Claim
from claimcheck.engine.result import Adjustment, ItemResult
from claimcheck.verdict import Verdict

from ._base import VERDICTS, StoreError, dumps, loads, timestamp, to_float
from ._types import StoredResult

def claim_dict(claim: Claim | Mapping[str, Any]) -> dict[str, Any]:
    """A claim in its record form (the shape the ``claims`` columns are filled from)."""
    if isinstance(claim, Claim):
        return claim.to_record()
    if not isinstance(claim, Mapping):
        raise StoreError(f"claim must be a Claim or its record, got {type(claim).__name__}")
    return dict(claim)


def _probe_name(outcome: Mapping[str, Any]) -> str | None:
    """The probe that measured an item, wherever the outcome carries it."""
    for candidate in (
        outcome.get("probe"),
        (outcome.get("claim") or {}).get("probe"),
        (outcome.get("info") or {}).get("probe"),
    ):
        if isinstance(candidate, str) and candidate:
            return candidate
        if isinstance(candidate, Mapping) and isinstance(candidate.get("name"), str):
            return candidate["name"]
    return None


def result_row(run_id: str, outcome: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Flatten an outcome record into a ``results`` row (and its claim, if attached)."""
    if not isinstance(outcome, Mapping):
        raise StoreError(f"run {run_id}: an outcome must be a mapping, got {type(outcome).__name__}")
    item_id, claim_id, verdict = outcome.get("item_id"), outcome.get("claim_id"), outcome.get("verdict")
    verdict = getattr(verdict, "value", verdict)
    if not isinstance(item_id, str) or not item_id:
        raise StoreError(f"run {run_id}: outcome without an item_id")
    if not isinstance(claim_id, str) or not claim_id:
        raise StoreError(f"run {run_id}: outcome {item_id} has no claim_id")
    if verdict not in VERDICTS:
        raise StoreError(f"run {run_id}: outcome {item_id}: verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
    canonical = dumps(dict(outcome))
    decision = outcome.get("decision") or {}
    if not isinstance(decision, Mapping):
        raise StoreError(f"run {run_id}: outcome {item_id}: decision must be a mapping or null")
    claim = outcome.get("claim")
    claim = claim_dict(claim) if claim else None

    def text(value: Any) -> str | None:
        value = getattr(value, "value", value)
        return None if value is None else str(value)

    n = decision.get("n")
    row = {
        "run_id": run_id,
        "item_id": item_id,
        "claim_id": claim_id,
        "params": dumps(outcome.get("params") or {}),
        "samples": dumps(outcome.get("samples") or {}),
        "statistic": to_float(decision.get("statistic")),
        "low": to_float(decision.get("low")),
        "high": to_float(decision.get("high")),
        "confidence_level": to_float(decision.get("confidence_level")),
        "n": int(n) if isinstance(n, (int, float)) and not isinstance(n, bool) and math.isfinite(n) else None,
        "rule": text(decision.get("rule") or ((claim or {}).get("check") or {}).get("rule")),
        "alpha": to_float(decision.get("alpha")),
        "pvalue": to_float(decision.get("pvalue")),
        "mde": to_float(decision.get("mde")),
        "unit": text(decision.get("unit") or ((claim or {}).get("check") or {}).get("unit")),
        "estimate_label": text(decision.get("estimate_label")),
        "verdict": verdict,
        "recorded_verdict": verdict,
        "raw_verdict": text(outcome.get("raw_verdict") or decision.get("raw_verdict")),
        "adjusted_verdict": text(decision.get("adjusted_verdict")),
        "adjusted_pvalue": to_float(decision.get("adjusted_pvalue")),
        "reason": text(outcome.get("reason")),
        "duration": to_float(outcome.get("duration_s", outcome.get("duration"))),
        "started": timestamp(outcome.get("started")),
        "finished": timestamp(outcome.get("finished")),
        "probe": _probe_name(outcome),
        "info": dumps(outcome.get("info") or {}),
        "artifacts": dumps(outcome.get("artifacts") or {}),
        "decision": dumps(dict(decision)) if outcome.get("decision") is not None else None,
        "outcome": canonical,
        "outcome_hash": hashlib.sha256(canonical.encode()).hexdigest(),
    }
    return row, claim


def insert_adjustments(conn: sqlite3.Connection, run_id: str, item_id: str, adjustments: Sequence[Adjustment],
                        *, first_seq: int) -> None:
    for seq, adjustment in enumerate(adjustments, start=first_seq):
        conn.execute(
            "INSERT INTO adjustments (run_id, item_id, seq, step, before, after, reason, adjusted_pvalue, chain)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, item_id, seq, adjustment.step, adjustment.before.value, adjustment.after.value,
             adjustment.reason, to_float(adjustment.adjusted_pvalue),
             dumps(list(adjustment.chain)) if adjustment.chain else None),
        )


def insert_result(conn: sqlite3.Connection, row: Mapping[str, Any]) -> None:
    names = list(row)
    conn.execute(
        f"INSERT INTO results ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
        tuple(row[name] for name in names),
    )


def claim_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["claim_id"],
        "content_hash": row.get("content_hash"),
        "title": row.get("title"),
        "statement": row.get("statement"),
        "source": loads(row.get("source"), {}),
        "scope": loads(row.get("scope"), {}),
        "check": loads(row.get("check_spec"), {}),
        "probe": loads(row.get("probe"), None),
        "depends_on": loads(row.get("depends_on"), []),
        "tags": loads(row.get("tags"), []),
        "path": row.get("path"),
        "line": row.get("line"),
    }


def stored_claim(row: Mapping[str, Any]) -> Claim:
    """A ``claims`` row as the :class:`Claim` it was when the run recorded it."""
    record = claim_record(dict(row))
    probe = record.get("probe")
    record["probe"] = {"name": probe} if isinstance(probe, str) else probe if isinstance(probe, Mapping) else {}
    return Claim.from_record(record)


def stored_result(row: Mapping[str, Any], claim: Claim | None, adjustments: Sequence[Adjustment], *,
                  run_status: str) -> StoredResult:
    """A ``results`` row (joined with its run) as a typed result with every adjustment it has.

    Args:
        row: the row, with ``machine_class`` and ``run_started`` from its run.
        claim: the claim as the run recorded it; used when the record does not carry its own.
        adjustments: the ``adjustments`` rows of the item, in order.
        run_status: the run's effective status.
    """
    record = loads(row.get("outcome"), None)
    if isinstance(record, Mapping) and record.get("item_id"):
        base = ItemResult.from_record(record)
        has_claim = bool((record.get("claim") or {}).get("check"))
    else:
        base, has_claim = _from_columns(row), False
    changes: dict[str, Any] = {"machine_class": str(row.get("machine_class") or base.machine_class)}
    if claim is not None and not has_claim:
        changes["claim"] = claim
    if adjustments:
        changes["adjustments"] = tuple(adjustments)
    result = dataclasses.replace(base, **changes)
    final = Verdict(row["verdict"])
    if not adjustments and final is not result.verdict:  # changed in place before adjustments were kept
        result = result.adjusted(Adjustment("recorded", result.verdict, final, str(row.get("reason") or "")))
    return StoredResult(run_id=str(row["run_id"]), run_started=str(row.get("run_started") or ""),
                        run_status=run_status, result=result)


def _from_columns(row: Mapping[str, Any]) -> ItemResult:
    """A row written before whole records were kept, rebuilt from its flat columns."""
    decision = loads(row.get("decision"), None)
    if decision is None and row.get("rule") and row.get("statistic") is not None:
        decision = {name: row.get(name) for name in ("rule", "statistic", "low", "high", "confidence_level", "n",
                                                     "alpha", "pvalue", "mde", "estimate_label")}
        decision.update(verdict=row.get("raw_verdict") or row["verdict"], reason=row.get("reason") or "")
    recorded = row.get("recorded_verdict") or row["verdict"]
    return ItemResult.from_record({
        "claim_id": row["claim_id"], "item_id": row["item_id"], "params": loads(row.get("params"), {}),
        "verdict": recorded, "reason": row.get("reason") or "", "raw_verdict": row.get("raw_verdict") or recorded,
        "decision": decision, "samples": loads(row.get("samples"), {}), "info": loads(row.get("info"), {}),
        "artifacts": loads(row.get("artifacts"), {}), "started": row.get("started"), "finished": row.get("finished"),
        "duration_s": row.get("duration"), "claim": {"id": row["claim_id"]},
    })
