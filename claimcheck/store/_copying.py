"""Copying one run's rows into a store as they are: the write side of merging stores."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from ._rows import insert_adjustments, insert_result
from ._schema import column_names
from ._types import RunRows


@dataclass
class RunCopy:
    """What copying one run did: rows added, items already there, items that differ."""

    run_added: bool = False
    run_finalised: bool = False
    claims_added: int = 0
    results_added: int = 0
    results_skipped: int = 0
    conflicts: list[str] = field(default_factory=list)


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, object], *, ignore: bool = False) -> int:
    """Insert the columns of ``row`` this table has (a source from an older schema has fewer)."""
    names = [name for name in row if name in set(column_names(conn, table))]
    verb = "INSERT OR IGNORE" if ignore else "INSERT"
    cursor = conn.execute(f"{verb} INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                          tuple(row[name] for name in names))
    return cursor.rowcount


def copy_rows(conn: sqlite3.Connection, rows: RunRows, label: str) -> RunCopy:
    """Copy ``rows`` inside the caller's write transaction; evidence already stored is never changed."""
    done = RunCopy()
    run = dict(rows.run)
    run_id = run["run_id"]
    have = conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if have is None:
        _insert(conn, "runs", run)
        done.run_added = True
    elif have[0] == "running" and run.get("status") in ("complete", "incomplete"):
        conn.execute("UPDATE runs SET status = ?, finished = ? WHERE run_id = ?",
                     (run["status"], run.get("finished"), run_id))
        if run.get("judgement") is not None and "judgement" in column_names(conn, "runs"):
            conn.execute("UPDATE runs SET judgement = ? WHERE run_id = ?", (run["judgement"], run_id))
        done.run_finalised = True
    for claim in rows.claims:
        done.claims_added += _insert(conn, "claims", dict(claim), ignore=True)
    for plot in rows.plots:
        _insert(conn, "plots", dict(plot), ignore=True)
    result_columns = set(column_names(conn, "results"))
    for row in rows.results:
        existing = conn.execute("SELECT outcome_hash FROM results WHERE run_id = ? AND item_id = ?",
                                (row["run_id"], row["item_id"])).fetchone()
        if existing is not None:
            if existing[0] is not None and row.get("outcome_hash") is not None and existing[0] != row["outcome_hash"]:
                done.conflicts.append(f"{label}: run {row['run_id']} item {row['item_id']} differs from the stored "
                                      "one; kept the stored one")
            done.results_skipped += 1
            continue
        insert_result(conn, {name: value for name, value in row.items() if name in result_columns})
        insert_adjustments(conn, row["run_id"], row["item_id"], list(rows.adjustments.get(row["item_id"], ())),
                           first_seq=0)
        done.results_added += 1
    return done
