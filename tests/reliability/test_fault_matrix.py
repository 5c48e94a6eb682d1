"""The fault matrix: each bad input or fault in its own pytest run, with its exit code, line and stored rows.

Every case runs ``pytest claims/`` in a subprocess on a tiny project (a healthy item, then the
faulty one, then another healthy one) and checks three things: the exit status, the one line
that says what happened (and that no traceback reaches the user), and what the evidence store
holds afterwards (which items, with which verdict, and the run's status as a reader sees it).

Signals are sent at a known state (an item stored and the next one blocked, shown by a file the
probe writes), never after a guessed delay. Disk full and a read-only store use a tiny tmpfs and
a read-only bind mount where this process may mount (root on Linux, as in CI); elsewhere a
one-file pytest plugin in the project makes the same write fail with the same error.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from claimcheck.store import EvidenceStore
from tests.reliability._project import (claim_yaml, count_results, documents, start_pytest, table, wait_for,
                                        without_plots)

FAULT_PROBE = '''
import ctypes, os, resource, time
from pathlib import Path

from claimcheck.probing.registry import Output, ProbeContext, probe


def _blocked() -> None:
    Path(os.environ["FAULT_GATE"], "blocked").touch()
    while True:  # until the test signals the run
        time.sleep(0.05)


def _fill(folder: str) -> None:
    """Fill the store's file system, so the next write of the store fails with ENOSPC."""
    with open(Path(folder) / "filler", "wb") as handle:
        try:
            while True:
                handle.write(b"x" * 4096)
                handle.flush()
        except OSError:
            pass


def _oom() -> float:
    """Allocate past an address-space limit (the limit is put back afterwards)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    in_use = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (in_use + (1 << 30), hard))
    try:
        return float(len(bytearray(8 << 30)))
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@probe("fault", outputs={"x": Output("ms")})
def fault(ctx: ProbeContext, *, mode: str = "ok") -> dict:
    """Fails in the way ``mode`` names; ``ok`` measures."""
    if mode == "raise":
        thing = None
        return {"x": [thing.shape]}
    if mode == "python-hang":
        while True:
            time.sleep(0.05)
    if mode == "c-hang":
        ctypes.CDLL(None).system(b"exec sleep 120")  # waitpid retries on EINTR: SIGALRM cannot end it
    if mode == "oom":
        return {"x": [_oom()]}
    if mode == "block":
        _blocked()
    if mode == "fill" and os.environ.get("FAULT_FILL"):  # set only when the store lies on a tiny tmpfs
        _fill(os.environ["FAULT_FILL"])
    return {"x": [5.0 + 0.001 * ctx.rng.random() for _ in range(ctx.n)]}
'''

#: Loaded with ``-p`` where mounting is impossible: the store's second write fails as a full disk would.
FULL_DISK_PLUGIN = '''
import sqlite3

from claimcheck.store import EvidenceStore

_record = EvidenceStore.record
_calls = {"n": 0}


def _failing_record(self, run_id, outcome):
    _calls["n"] += 1
    if _calls["n"] >= 2:
        raise sqlite3.OperationalError("database or disk is full")
    return _record(self, run_id, outcome)


EvidenceStore.record = _failing_record
'''

#: Loaded with ``-p`` where mounting is impossible: the store's folder refuses new files.
READ_ONLY_PLUGIN = '''
import errno, tempfile

import claimcheck.pytest_plugin.store_faults as faults


def _refuse(*args, **kwargs):
    raise OSError(errno.EROFS, "Read-only file system")


faults.tempfile = type("ReadOnly", (), {"NamedTemporaryFile": staticmethod(_refuse)})
'''

CHECK = {"rule": "at_least", "output": "x", "threshold": 0}
QUICK = {"min_samples": 4, "max_samples": 4, "looks": 1, "max_seconds": 0.01}  # hard limit 5.02 s
PATIENT = {"min_samples": 4, "max_samples": 4, "looks": 1, "max_seconds": 3600}  # never meets its limit
DEADLINE_S = 300.0  # only a hung run gets near it; nothing waits for a duration


@dataclass
class Case:
    """One fault: the faulty item's probe mode and budget, how the run is disturbed, and what must follow."""

    name: str
    mode: str
    exit: int
    line: str
    rows: dict[str, str] | None  # item -> verdict in the store afterwards; None: no store file at all
    status: str | None = None  # the run's effective status
    budget: dict = field(default_factory=lambda: dict(QUICK))
    args: tuple[str, ...] = ()
    signal: signal.Signals | None = None


CASES = [
    Case("probe raises", "raise", 1, "AttributeError: 'NoneType' object has no attribute 'shape'",
         {"ok-before": "holds", "faulty": "error", "ok-after": "holds"}, "complete"),
    Case("hangs in Python", "python-hang", 1, "probe hung: no result within the item's hard limit of 5.02 s",
         {"ok-before": "holds", "faulty": "error", "ok-after": "holds"}, "complete"),
    Case("hangs in C", "c-hang", 2, "faulty: probe hung in native code: no result within the item's hard limit",
         {"ok-before": "holds", "faulty": "error"}, "incomplete"),
    Case("out of memory", "oom", 1, "why:      MemoryError",
         {"ok-before": "holds", "faulty": "error", "ok-after": "holds"}, "complete"),
    Case("SIGINT", "block", 2, "KeyboardInterrupt", {"ok-before": "holds"}, "incomplete", budget=dict(PATIENT),
         signal=signal.SIGINT),
    Case("SIGTERM", "block", -signal.SIGTERM, "", {"ok-before": "holds"}, "incomplete", budget=dict(PATIENT),
         signal=signal.SIGTERM),
    Case("SIGKILL", "block", -signal.SIGKILL, "", {"ok-before": "holds"}, "incomplete", budget=dict(PATIENT),
         signal=signal.SIGKILL),
    Case("disk full", "fill", 4, "cannot write to the store", {"ok-before": "holds"}, "incomplete"),
    Case("read-only store", "ok", 4, "cannot write the evidence store", {"qmv-large-bw[earlier]": "holds"}, "complete"),
    Case("corrupt store", "ok", 4, "is not a claimcheck store (file is not a database); it was left untouched",
         {"ok-before": "holds", "faulty": "holds", "ok-after": "holds"}, "complete"),
    Case("duplicate id", "ok", 4, "duplicate claim id `ok-before` (first defined at", None),
    Case("bad option", "ok", 4, "--claims-alpha 0.7: expected an error rate in (0, 0.5)", None,
         args=("--claims-alpha=0.7",)),
]

RESULTS: list[tuple[str, ...]] = []


def _can_mount(folder: Path) -> bool:
    """Whether this process may mount (root with the capability); tried once on a scratch folder.

    ``FAULT_MATRIX_NO_MOUNT=1`` takes the plugin path even where mounting works, to check it.
    """
    if os.environ.get("FAULT_MATRIX_NO_MOUNT") == "1":
        return False
    probe = folder / "mount-check"
    probe.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True)
    if done.returncode != 0:
        return False
    subprocess.run(["umount", str(probe)], check=True)
    return True


@contextlib.contextmanager
def _mounted(args: list[str], target: Path) -> Iterator[None]:
    subprocess.run(["mount", *args, str(target)], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def _project(root: Path, case: Case) -> None:
    (root / "probes" / "fault.py").write_text(FAULT_PROBE)
    docs = [claim_yaml("ok-before", "fault", check=CHECK, budget=QUICK),
            claim_yaml("faulty", "fault", params={"mode": case.mode}, check=CHECK, budget=case.budget),
            claim_yaml("ok-after", "fault", check=CHECK, budget=QUICK)]
    (root / "claims" / "faults.yaml").write_text(documents(*docs))
    if case.name == "duplicate id":
        (root / "claims" / "again.yaml").write_text(claim_yaml("ok-before", "fault", check=CHECK, budget=QUICK))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stored(path: Path) -> tuple[dict[str, str], str | None, str]:
    """Items and verdicts of the newest run, its effective status, and SQLite's integrity verdict."""
    with EvidenceStore.open_readonly(path) as store:
        runs = store.runs()
        if not runs:
            return {}, None, store.integrity_check()
        rows = {r.item_id: r.verdict.value for r in store.results(runs[0].run_id)}
        return rows, runs[0].effective_status, store.integrity_check()


def _run(case: Case, root: Path, store: Path, env: dict[str, str], extra: list[str],
         prepare: Callable[[], contextlib.AbstractContextManager[None]]
         ) -> tuple[int, str, tuple[dict[str, str], str | None, str] | None]:
    """Run the case; returns its exit status, its output and what the store holds (read before any unmount)."""
    gate = root / "gate"
    gate.mkdir(exist_ok=True)
    log = root / "run.log"
    args = ["claims", f"--claims-store={store}", f"--claims-reports={root / 'reports'}", "--claims-family=none",
            "--claims-cv-bound=10", *extra, *case.args]
    env = {**env, "FAULT_GATE": str(gate), "PYTHONFAULTHANDLER": "1"}
    stored: tuple[dict[str, str], str | None, str] | None = None
    with prepare():
        proc = start_pytest(root, log, *args, env=env)
        try:
            if case.signal is not None:
                wait_for(lambda: (count_results(store) >= 1 and (gate / "blocked").exists()) or proc.poll() is not None,
                         DEADLINE_S, "a stored item and a blocked one")
                assert proc.poll() is None, log.read_text()[-3000:]
                os.kill(proc.pid, case.signal)
            code = proc.wait(timeout=DEADLINE_S)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the run's own group: a hung item's child, if any
            proc.wait()
        if case.name == "disk full":  # read before the tmpfs goes
            stored = _stored(store) if store.exists() else None
    if case.name != "disk full":  # read after a read-only mount is gone (SQLite reads a WAL store writable)
        fresh = sorted(store.parent.glob("claimcheck.fresh-*.sqlite"))
        written = fresh[0] if fresh else store
        stored = _stored(written) if written.exists() else None
    return code, log.read_text(), stored


@pytest.mark.parametrize("case", CASES, ids=[c.name.replace(" ", "-") for c in CASES])
def test_fault(case: Case, demo_project: pytest.Pytester, tmp_path: Path, report_table) -> None:
    root = demo_project.path
    _project(root, case)
    env = without_plots(tmp_path / "blocked-modules")
    extra: list[str] = []
    store = root / "evidence" / "claimcheck.sqlite"
    store.parent.mkdir()
    prepare: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext
    mounting = case.name in ("disk full", "read-only store") and _can_mount(tmp_path)
    untouched = None
    if case.name == "disk full":
        env["FAULT_FILL"] = str(store.parent)
        if mounting:
            prepare = lambda: _mounted(["-t", "tmpfs", "-o", "size=1m", "tmpfs"], store.parent)  # noqa: E731
        else:
            (root / "full_disk_plugin.py").write_text(FULL_DISK_PLUGIN)
            extra = ["-p", "full_disk_plugin"]
            env["PYTHONPATH"] = os.pathsep.join([str(root), env["PYTHONPATH"]])
    if case.name == "read-only store":
        with EvidenceStore(store) as earlier:  # a store with evidence in it, which must stay as it is
            run_id = earlier.begin_run(machine={"backend": "cpu"}, machine_class="cpu/x", options={})
            from tests.store import synthetic as synth

            earlier.record(run_id, synth.outcome(item="earlier", verdict="holds", statistic=1.0, low=0.9, high=1.1))
            earlier.finish_run(run_id)
        untouched = _digest(store)
        if mounting:
            prepare = lambda: _mounted(["--bind", "-o", "ro", str(store.parent)], store.parent)  # noqa: E731
        else:
            (root / "read_only_plugin.py").write_text(READ_ONLY_PLUGIN)
            extra = ["-p", "read_only_plugin"]
            env["PYTHONPATH"] = os.pathsep.join([str(root), env["PYTHONPATH"]])
    if case.name == "corrupt store":
        store.write_text("half a database, then garbage\n" * 64)
        untouched = _digest(store)

    code, output, stored = _run(case, root, store, env, extra, prepare)

    assert code == case.exit, output[-3000:]
    assert case.line in output, output[-3000:]
    assert "Traceback" not in output and "INTERNALERROR" not in output, output[-3000:]
    if case.mode == "raise":
        assert "raised:   probes/fault.py" in output, "the probe's own file:line is shown"
    if case.name == "corrupt store":
        assert _digest(store) == untouched, "a file that is not a store was modified"
        (fresh,) = sorted(store.parent.glob("claimcheck.fresh-*.sqlite"))
        assert fresh.name in output
    if untouched is not None and case.name == "read-only store":
        assert _digest(store) == untouched
    if case.rows is None:
        assert stored is None, "a run was stored although nothing ran"
        rows, status, integrity = {}, None, "-"
    else:
        assert stored is not None, output[-3000:]
        rows, status, integrity = stored
        assert rows == case.rows, output[-3000:]
        assert status == case.status
        assert integrity == "ok"
    line = next((text for text in output.splitlines() if case.line and case.line in text), "")
    RESULTS.append((case.name, str(code), ", ".join(f"{k}={v}" for k, v in rows.items()) or "no store",
                    status or "-", ("mount" if mounting else "plugin") if case.name in ("disk full", "read-only store")
                    else "", line.strip()[:90]))
    if len(RESULTS) == len(CASES):
        report_table("fault matrix: one pytest run per fault; exit, stored rows of the newest run, its status, the line",
                     table(("fault", "exit", "stored rows", "run", "how", "line (first 90 chars)"), RESULTS))


def test_the_matrix_covers_every_listed_fault() -> None:
    listed = {"probe raises", "hangs in Python", "hangs in C", "out of memory", "SIGINT", "SIGTERM", "SIGKILL",
              "disk full", "read-only store", "corrupt store", "duplicate id", "bad option"}
    assert {case.name for case in CASES} == listed
