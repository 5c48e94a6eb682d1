"""Interrupted runs: Ctrl-C (SIGINT) and SIGKILL of `pytest claims/` mid-run.

Items that finished before the signal stay in the store exactly once, the run reads as
incomplete, SQLite's own integrity check passes, and the next run starts clean (the exclusive
lock of the killed run is gone) and completes.
"""

from __future__ import annotations

import os
import signal

import pytest

from claimcheck.store import EvidenceStore
from tests.reliability._project import claim_yaml, count_results, documents, run_pytest, start_pytest, table, wait_for

SLOW_PROBE = '''
import os, time

from claimcheck.probe import Output, ProbeContext, probe


@probe("slow", outputs={"x": Output("ms")})
def slow(ctx: ProbeContext, *, tag: int) -> dict:
    """Sleeps RELIABILITY_SLOW_S per call, so a run can be interrupted between items."""
    time.sleep(float(os.environ.get("RELIABILITY_SLOW_S", "0")))
    return {"x": [5.0 + 0.001 * i for i in range(ctx.n)]}
'''

ITEMS = 30
SEEN_BEFORE_SIGNAL = 3


def _project(project: pytest.Pytester) -> None:
    (project.path / "probes" / "slow.py").write_text(SLOW_PROBE)
    docs = [
        claim_yaml(f"slow-{tag}", "slow", params={"tag": tag}, check={"rule": "at_least", "output": "x", "threshold": 0},
                   budget={"min_samples": 3, "max_samples": 3, "looks": 1, "exclusive": tag % 3 == 0})
        for tag in range(ITEMS)
    ]
    (project.path / "claims" / "slow.yaml").write_text(documents(*docs))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_interrupted_run_keeps_finished_items_and_next_run_completes(
    demo_project: pytest.Pytester, sig: signal.Signals, report_table
) -> None:
    _project(demo_project)
    store_path = demo_project.path / "evidence.sqlite"
    args = ("claims", f"--claims-store={store_path}", f"--claims-reports={demo_project.path / 'reports'}",
            "--claims-cv-bound=10")
    log = demo_project.path / "interrupted.log"
    proc = start_pytest(demo_project.path, log, *args, env={"RELIABILITY_SLOW_S": "0.25"})
    try:
        wait_for(lambda: count_results(store_path) >= SEEN_BEFORE_SIGNAL or proc.poll() is not None, 120,
                 f"{SEEN_BEFORE_SIGNAL} stored results")
        assert proc.poll() is None, f"the run ended before it could be interrupted:\n{log.read_text()[-2000:]}"
        at_signal = count_results(store_path)
        os.kill(proc.pid, sig)
        stopped = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    output = log.read_text()
    if sig == signal.SIGINT:
        assert stopped == pytest.ExitCode.INTERRUPTED, output[-2000:]
        assert "KeyboardInterrupt" in output
    else:
        assert stopped == -signal.SIGKILL

    with EvidenceStore(store_path) as store:
        integrity = store.integrity_check()
        assert integrity == "ok"
        (run,) = store.runs()
        rows = store.results(run["run_id"])
        items = [r["item_id"] for r in rows]
        assert len(items) == len(set(items)), "an item was stored twice"
        assert at_signal <= len(items) < ITEMS, "finished items were lost, or the run was not interrupted"
        assert {r["verdict"] for r in rows} == {"holds"}
        raw_status, effective = run["status"], run["effective_status"]
        assert effective == "incomplete"
        # Ctrl-C lets the session finish the run as incomplete; SIGKILL leaves `running`, read as incomplete.
        assert raw_status == ("incomplete" if sig == signal.SIGINT else "running")

    code, rerun_output, wall = run_pytest(demo_project.path, *args, env={"RELIABILITY_SLOW_S": "0"}, timeout=180)
    assert code == pytest.ExitCode.OK, rerun_output[-3000:]
    with EvidenceStore(store_path) as store:
        assert store.integrity_check() == "ok"
        newest, interrupted = store.runs()
        assert interrupted["run_id"] == run["run_id"]
        assert interrupted["status"] == "incomplete", "the next run did not mark the dead run incomplete"
        assert newest["status"] == "complete"
        fresh = store.results(newest["run_id"])
        assert sorted(r["item_id"] for r in fresh) == sorted(f"slow-{t}" for t in range(ITEMS))
        assert len(store.results(interrupted["run_id"])) == len(items), "the next run changed the old evidence"

    report_table(
        f"interrupted run: {sig.name} after {at_signal} stored results ({ITEMS} items, 0.25 s each)",
        table(("signal", "exit", "stored", "raw status", "read as", "integrity", "next run", "next items", "next wall s"),
              [(sig.name, stopped, len(items), raw_status, effective,
                integrity, newest["status"], len(fresh), f"{wall:.1f}")]),
    )
