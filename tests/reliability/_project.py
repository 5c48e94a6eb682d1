"""Helpers for reliability runs: claim YAML builders, store queries and subprocess pytest runs."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Mapping

ROOT = Path(__file__).resolve().parents[2]


def flow(value: Any) -> str:
    """A value as a one-line YAML flow node (JSON is valid YAML flow syntax)."""
    return json.dumps(value, ensure_ascii=False)


def claim_yaml(
    claim_id: str,
    probe: str,
    *,
    params: Mapping[str, Any] | None = None,
    grid: Mapping[str, list[Any]] | None = None,
    check: Mapping[str, Any],
    budget: Mapping[str, Any] | None = None,
    title: str = "reliability claim",
    statement: str = "A claim written by the reliability suite.",
) -> str:
    """One claim document in the schema v1 layout."""
    probe_spec: dict[str, Any] = {"name": probe}
    if params:
        probe_spec["params"] = dict(params)
    if grid:
        probe_spec["grid"] = dict(grid)
    lines = [
        f"id: {claim_id}",
        f"title: {flow(title)}",
        f"statement: {flow(statement)}",
        'source: {doc: reliability.md, section: "1", figure: "synthetic"}',
        "scope: {kind: portable, backend: any}",
        f"probe: {flow(probe_spec)}",
        f"check: {flow(dict(check))}",
    ]
    if budget:
        lines.append(f"budget: {flow(dict(budget))}")
    return "\n".join(lines) + "\n"


def documents(*docs: str) -> str:
    return "---\n".join(docs)


def result_rows(store_path: Path) -> list[dict[str, Any]]:
    """Every stored result row (run_id, item_id, verdict, reason), read-only and without the store API."""
    conn = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True, timeout=30)
    try:
        cursor = conn.execute("SELECT run_id, item_id, claim_id, verdict, reason FROM results ORDER BY rowid")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
    finally:
        conn.close()


def count_results(store_path: Path) -> int:
    """Results committed so far (0 while the store or its tables do not exist yet)."""
    if not store_path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def duplicated_items(store_path: Path, run_id: str) -> list[tuple[str, int]]:
    """``(item_id, rows)`` for items stored more than once in a run."""
    conn = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(
            "SELECT item_id, COUNT(*) FROM results WHERE run_id = ? GROUP BY item_id HAVING COUNT(*) > 1", (run_id,)
        ).fetchall()
    finally:
        conn.close()


def pytest_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]


def _default_sigint() -> None:
    """In the child before exec: Ctrl-C as a terminal delivers it.

    A process started in the background by a non-interactive shell inherits SIGINT ignored, and
    Python then installs no KeyboardInterrupt handler, so a signalled run would never stop.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_pytest(cwd: Path, log: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen:
    """A ``pytest`` subprocess writing its output to ``log`` (a pipe could fill up and stall it)."""
    handle = open(log, "w")
    try:
        return subprocess.Popen(pytest_command(*args), cwd=cwd, stdout=handle, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})}, start_new_session=True,
                                preexec_fn=_default_sigint)
    finally:
        handle.close()


def run_pytest(cwd: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 240) -> tuple[int, str, float]:
    """Run pytest to the end; returns ``(exit code, output, wall seconds)``."""
    started = time.perf_counter()
    done = subprocess.run(pytest_command(*args), cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)
    return done.returncode, done.stdout + done.stderr, time.perf_counter() - started


def wait_for(predicate, timeout: float, what: str, poll: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(poll)


def table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    """A plain fixed-width text table."""
    cells = [tuple(str(c) for c in header)] + [tuple(str(c) for c in row) for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def without_plots(folder: Path) -> dict[str, str]:
    """Environment for a pytest subprocess in which matplotlib cannot be imported.

    The report step draws one forest-plot row per item (~10-15 ms a row here), which would make
    large synthetic runs measure matplotlib. The report code skips a plot whose drawing fails
    with a one-line warning, so a ``matplotlib`` that refuses to import turns plots off while
    everything else (store, markdown and HTML reports) still runs.
    """
    package = folder / "matplotlib"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text('raise ImportError("matplotlib is blocked for this run (no plots)")\n')
    path = [str(folder), os.environ.get("PYTHONPATH", "")]
    return {"PYTHONPATH": os.pathsep.join(p for p in path if p)}
