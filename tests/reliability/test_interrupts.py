"""Interrupted runs: Ctrl-C (SIGINT) and SIGKILL of `pytest claims/` mid-run.

Items that finished before the signal stay in the store exactly once, the run reads as
incomplete, SQLite's own integrity check passes, and the next run starts clean (the exclusive
lock of the killed run is gone) and completes.

The run is interrupted at a known state, not after a guessed delay: the probe lets the first
``FREE`` items through and then blocks until the process is signalled, and the test signals
only once those items are in the store and the next one is blocked. So the run can never end
before the signal, however fast or slow the machine is.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from claimcheck.store import EvidenceStore
from tests.reliability._project import claim_yaml, count_results, documents, run_pytest, start_pytest, table, wait_for

GATED_PROBE = '''
import os, time
from pathlib import Path

from claimcheck.probing.registry import Output, ProbeContext, probe


@probe("gated", outputs={"x": Output("ms")})
def gated(ctx: ProbeContext, *, tag: int) -> dict:
    """With RELIABILITY_GATE set, the first RELIABILITY_FREE items pass and every later one blocks."""
    gate = os.environ.get("RELIABILITY_GATE")
    if gate:
        _pass_gate(Path(gate), tag, int(os.environ["RELIABILITY_FREE"]))
    return {"x": [5.0 + 0.001 * ctx.rng.random() for _ in range(ctx.n)]}  # seeded per item: independent draws


def _pass_gate(gate: Path, tag: int, free: int) -> None:
    """Return if this item holds one of ``free`` slots (claimed atomically); else block until signalled."""
    if (gate / f"free-{tag}").exists():
        return
    for slot in range(free):
        try:
            os.close(os.open(gate / f"slot-{slot}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            continue
        (gate / f"free-{tag}").touch()
        return
    (gate / f"blocked-{tag}").touch()
    while True:  # until SIGINT (KeyboardInterrupt here) or SIGKILL
        time.sleep(0.05)
'''

ITEMS = 12
FREE = 3  # items stored before the run blocks
DEADLINE_S = 900.0  # only a hung run gets near it (a loaded machine must not); nothing waits for a duration
# A blocked item must not meet the runner's hard limit (2 x max_seconds + 5 s) before the signal.
MAX_SECONDS = 3600


def _project(project: pytest.Pytester) -> None:
    (project.path / "probes" / "gated.py").write_text(GATED_PROBE)
    docs = [
        claim_yaml(f"gated-{tag}", "gated", params={"tag": tag}, check={"rule": "at_least", "output": "x", "threshold": 0},
                   budget={"min_samples": 8, "max_samples": 8, "looks": 1, "exclusive": tag % 3 == 0,
                           "max_seconds": MAX_SECONDS})
        for tag in range(ITEMS)
    ]
    (project.path / "claims" / "gated.yaml").write_text(documents(*docs))


def _wait(proc: subprocess.Popen, log: Path, predicate: Callable[[], bool], what: str) -> None:
    """Wait for a state of the run; fail with its log if it exits first or the deadline passes."""
    try:
        wait_for(lambda: predicate() or proc.poll() is not None, DEADLINE_S, what)
    except AssertionError as error:
        raise AssertionError(f"{error}\n{log.read_text()[-2000:]}") from None
    assert proc.poll() is None, f"the run ended while waiting for {what}:\n{log.read_text()[-2000:]}"


def _wait_exit(proc: subprocess.Popen, log: Path) -> int:
    """The run's exit status; a run still alive at the deadline is made to print every thread's stack."""
    try:
        return proc.wait(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGABRT)  # PYTHONFAULTHANDLER=1: the child dumps its tracebacks first
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
        raise AssertionError(f"the run did not stop within {DEADLINE_S:g} s of the signal:\n{log.read_text()[-6000:]}") from None


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_interrupted_run_keeps_finished_items_and_next_run_completes(
    demo_project: pytest.Pytester, sig: signal.Signals, report_table
) -> None:
    _project(demo_project)
    store_path = demo_project.path / "evidence.sqlite"
    gate = demo_project.path / "gate"
    gate.mkdir()
    args = ("claims", f"--claims-store={store_path}", f"--claims-reports={demo_project.path / 'reports'}",
            "--claims-cv-bound=10", "--claims-family=none")
    log = demo_project.path / "interrupted.log"
    proc = start_pytest(demo_project.path, log, *args, env={"RELIABILITY_GATE": str(gate), "RELIABILITY_FREE": str(FREE),
                                                             "PYTHONFAULTHANDLER": "1"})
    try:
        _wait(proc, log, lambda: count_results(store_path) >= FREE and any(gate.glob("blocked-*")),
              f"{FREE} stored results and a blocked item")
        at_signal = count_results(store_path)
        os.kill(proc.pid, sig)
        stopped = _wait_exit(proc, log)
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
        rows = store.results(run.run_id)
        items = [r.item_id for r in rows]
        assert len(items) == len(set(items)), "an item was stored twice"
        passed = sorted(f"gated-{path.name.split('-', 1)[1]}" for path in gate.glob("free-*"))
        assert at_signal == FREE and sorted(items) == passed, (
            f"stored {sorted(items)}, but exactly the items that finished before the signal were {passed}")
        assert {r.verdict.value for r in rows} == {"holds"}
        raw_status, effective = run.status, run.effective_status
        assert effective == "incomplete"
        # Ctrl-C lets the session finish the run as incomplete; SIGKILL leaves `running`, read as incomplete.
        assert raw_status == ("incomplete" if sig == signal.SIGINT else "running")

    code, rerun_output, wall = run_pytest(demo_project.path, *args, env={"RELIABILITY_GATE": ""}, timeout=900)
    assert code == pytest.ExitCode.OK, rerun_output[-3000:]
    with EvidenceStore(store_path) as store:
        assert store.integrity_check() == "ok"
        newest, interrupted = store.runs()
        assert interrupted.run_id == run.run_id
        assert interrupted.status == "incomplete", "the next run did not mark the dead run incomplete"
        assert newest.status == "complete"
        fresh = store.results(newest.run_id)
        assert sorted(r.item_id for r in fresh) == sorted(f"gated-{t}" for t in range(ITEMS))
        assert len(store.results(interrupted.run_id)) == len(items), "the next run changed the old evidence"

    report_table(
        f"interrupted run: {sig.name} once {at_signal} results were stored and the next item blocked ({ITEMS} items)",
        table(("signal", "exit", "stored", "raw status", "read as", "integrity", "next run", "next items", "next wall s"),
              [(sig.name, stopped, len(items), raw_status, effective,
                integrity, newest.status, len(fresh), f"{wall:.1f}")]),
    )
