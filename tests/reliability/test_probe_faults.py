"""Probe faults through a real pytest session: each is an `error` verdict with a one-line reason.

One session runs a probe that raises, one that hangs, children that run out of memory or are
killed, an in-process MemoryError, NaN, wrong shapes and types, a missing output, and healthy
claims between them. The session must finish, and the evidence store must hold every item once,
faults as `error` and healthy items as `holds`.

The probe contract for work done in a child process (what ``faults.py`` below does): the probe
checks the child's exit status and raises :class:`~claimcheck.errors.ProbeError` with a one-line
reason that says what happened (exit status or signal, the child's last line) and never returns
numbers from a failed child. The runner already turns any exception into `error`; it cannot see
a child, so the check belongs in the probe (or in a shared helper the probes call).
"""

from __future__ import annotations

import dataclasses
import signal
import threading

import numpy as np
import pytest

from claimcheck.claims.loader import load_claims_text
from claimcheck.probing.registry import Output, RegisteredProbe
from claimcheck.engine.runner import RunOptions, hard_limit, run_claim_item
from claimcheck.store import EvidenceStore
from tests.reliability._project import claim_yaml, documents, table

SCALE = 0.1  # --claims-budget-scale for the session: the hang is stopped at hard_limit(2 * SCALE)
MAX_SECONDS = 2

FAULT_PROBES = '''
import math, subprocess, sys, time

from claimcheck.errors import ProbeError
from claimcheck.probing.registry import Output, ProbeContext, probe

CHILD_LIMIT_MIB = 256
GREEDY = (
    "import resource\\n"
    f"resource.setrlimit(resource.RLIMIT_AS, ({CHILD_LIMIT_MIB} << 20, {CHILD_LIMIT_MIB} << 20))\\n"
    "blocks = []\\n"
    "while True:\\n"
    "    blocks.append(bytearray(16 << 20))\\n"
)
KILLED = "import os, signal\\nos.kill(os.getpid(), signal.SIGKILL)\\n"


def run_child(code: str) -> list[float]:
    """Run a measurement in a child; a failed child is a ProbeError, never numbers."""
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=600)
    if done.returncode < 0:
        raise ProbeError(f"measurement child killed by signal {-done.returncode} "
                         "(the OOM killer sends SIGKILL); nothing was measured")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ProbeError(f"measurement child failed with exit {done.returncode} ({last}) "
                         f"under a {CHILD_LIMIT_MIB} MiB address-space limit; nothing was measured")
    return [float(v) for v in done.stdout.split()]


@probe("fault", outputs={"x": Output("ms")})
def fault(ctx: ProbeContext, *, mode: str) -> dict:
    """A probe that fails in the way `mode` names (or works, for `ok`)."""
    if mode == "ok":
        return {"x": [5.0 + 0.01 * ctx.rng.random() for _ in range(ctx.n)]}
    if mode == "raise":
        raise RuntimeError("sensor unplugged\\nsecond line that must not be shown")
    if mode == "hang":
        while True:
            time.sleep(0.05)
    if mode == "child-oom":
        return {"x": run_child(GREEDY)}
    if mode == "child-killed":
        return {"x": run_child(KILLED)}
    if mode == "child-oom-unchecked":
        subprocess.run([sys.executable, "-I", "-c", GREEDY], check=True, capture_output=True)
        return {"x": [1.0] * ctx.n}
    if mode == "memory":
        return {"x": [float(len(bytearray(1 << 60)))]}
    if mode == "nan":
        return {"x": [float("nan")] * ctx.n}
    if mode == "shape":
        return {"x": [[1.0, 2.0]] * ctx.n}
    if mode == "type":
        return [1.0] * ctx.n
    if mode == "text":
        return {"x": "fast"}
    if mode == "missing":
        return {"y": [1.0] * ctx.n}
    raise ValueError(f"unknown mode {mode}")
'''

# mode -> what the one-line reason must say
FAULTS = {
    "raise": "RuntimeError: sensor unplugged",
    "hang": f"probe hung: no result within the item's hard limit of {hard_limit(MAX_SECONDS * SCALE):g} s",
    "child-oom": "measurement child failed with exit 1 (MemoryError) under a 256 MiB address-space limit",
    "child-killed": "measurement child killed by signal 9",
    "child-oom-unchecked": "CalledProcessError: Command",
    "memory": "MemoryError",
    "nan": "output `x` holds a non-finite value (nan)",
    "shape": "output `x` holds list [1.0, 2.0], expected numbers",
    "type": "probe returned list, expected a mapping of output -> samples",
    "text": "output `x` is str, expected a list of numbers",
    "missing": "probe returned no output `x` (it gave: y)",
}
HEALTHY = ["ok-1", "ok-2", "ok-3"]

CHECK = {"rule": "at_least", "output": "x", "threshold": 0}
BUDGET = {"min_samples": 40, "max_samples": 80, "max_seconds": MAX_SECONDS, "looks": 2}


def _claims() -> str:
    docs = []
    healthy = iter(HEALTHY)
    for index, mode in enumerate(FAULTS):
        docs.append(claim_yaml(f"fault-{mode}", "fault", params={"mode": mode}, check=CHECK, budget=BUDGET))
        name = next(healthy, None) if index % 4 == 1 else None
        if name:  # healthy claims between the faults
            docs.append(claim_yaml(f"healthy-{name}", "fault", params={"mode": "ok"}, check=CHECK, budget=BUDGET))
    return documents(*docs)


def test_probe_faults_are_error_verdicts_and_the_run_completes(demo_project: pytest.Pytester, report_table) -> None:
    (demo_project.path / "probes" / "faults.py").write_text(FAULT_PROBES)
    (demo_project.path / "claims" / "faults.yaml").write_text(_claims())
    store_path = demo_project.path / "evidence.sqlite"
    result = demo_project.runpytest_subprocess(
        "claims", f"--claims-store={store_path}", f"--claims-reports={demo_project.path / 'reports'}",
        f"--claims-budget-scale={SCALE}", "-p", "no:cacheprovider", timeout=900,
    )
    output = result.stdout.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", outcomes.get("error")) == len(FAULTS), output[-3000:]
    assert outcomes.get("passed") == len(HEALTHY), output[-3000:]
    assert "Traceback" not in output
    # The message's second line is never shown as a line of its own (the probe's source line, quoted in the
    # traceback frames under its `raised:` line, holds the literal).
    assert not any(line.strip().startswith("second line that must not be shown") for line in output.splitlines())
    assert "raised:   probes/faults.py" in output

    with EvidenceStore(store_path) as store:
        runs = store.runs()
        assert len(runs) == 1 and runs[0].status == "complete"
        results = store.results(runs[0].run_id)
        by_item = {}
        for row in results:
            assert row.item_id not in by_item, f"{row.item_id} stored twice"
            by_item[row.item_id] = row
        assert store.integrity_check() == "ok"

    rows = []
    for mode, expected in FAULTS.items():
        row = by_item[f"fault-{mode}"]
        reason = row.reason
        rows.append((mode, row.verdict.value, f"{row.result.duration_s:.1f}", reason if len(reason) < 110 else reason[:107] + "..."))
        assert row.verdict.value == "error", (mode, row.verdict.value, reason)
        assert len(reason.splitlines()) == 1, (mode, reason)
        assert expected in reason, (mode, reason)
    for name in HEALTHY:
        row = by_item[f"healthy-{name}"]
        rows.append((name, row.verdict.value, f"{row.result.duration_s:.1f}", row.reason[:80]))
        assert row.verdict.value == "holds", row.reason
    assert len(by_item) == len(FAULTS) + len(HEALTHY)
    hung = by_item["fault-hang"].result.duration_s
    # The timer cannot fire early; the upper bound only tells "interrupted" from "hung for ever" (the probe
    # sleeps without end), so it leaves room for a loaded machine.
    assert hard_limit(MAX_SECONDS * SCALE) <= hung < 10 * hard_limit(MAX_SECONDS * SCALE) + 60
    report_table(
        f"probe faults: one pytest session, --claims-budget-scale={SCALE} (hard limit {hard_limit(MAX_SECONDS * SCALE):g} s; "
        f"unscaled hard_limit({MAX_SECONDS}) = {hard_limit(MAX_SECONDS):g} s); store: {len(by_item)} items, each once",
        table(("case", "verdict", "s", "reason (one line)"), rows),
    )


# --------------------------------------------------------------------------- runner-level faults

def _unit_claim(max_seconds: float = 2) -> object:
    text = claim_yaml("unit", "unit-probe", check=CHECK, budget={"min_samples": 4, "max_samples": 8,
                                                                   "max_seconds": max_seconds, "looks": 1})
    return load_claims_text(text, "unit.yaml")[0]


def _run(function) -> object:
    registered = RegisteredProbe(name="unit-probe", function=function, outputs={"x": Output("ms")})
    return run_claim_item(_unit_claim(), "unit", {}, registered, options=RunOptions(), machine={"backend": "cpu"})


def test_probe_calling_sys_exit_is_an_error_verdict() -> None:
    def exits(ctx, **params):
        raise SystemExit(3)

    try:
        outcome = _run(exits)
    except SystemExit:
        pytest.fail("SystemExit escaped run_claim_item")
    assert outcome.verdict.value == "error"
    assert "SystemExit" in outcome.reason


def test_keyboard_interrupt_from_a_probe_is_not_swallowed() -> None:
    """Ctrl-C must stop the run (the interrupted-run tests rely on it), not become an `error` verdict."""
    def interrupted(ctx, **params):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(interrupted)


def test_hang_stops_at_the_hard_limit_in_process() -> None:
    """The SIGALRM backstop interrupts a sleeping probe (main thread) at hard_limit(max_seconds)."""
    claim = dataclasses.replace(_unit_claim(), budget=dataclasses.replace(_unit_claim().budget, max_seconds=0.05))

    def hangs(ctx, **params):
        import time

        while True:
            time.sleep(0.01)

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("SIGALRM backstop only works in the main thread")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    registered = RegisteredProbe(name="unit-probe", function=hangs, outputs={"x": Output("ms")})
    outcome = run_claim_item(claim, "unit", {}, registered, options=RunOptions(budget_scale=0.01),
                             machine={"backend": "cpu"})
    assert outcome.verdict.value == "error" and "probe hung" in outcome.reason
    # Never early; the loose upper bound only separates "interrupted" from "hung for ever".
    assert hard_limit(0.05 * 0.01) <= outcome.duration_s < 10 * hard_limit(0.05 * 0.01) + 60
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0), "the alarm outlived the item"


def test_reason_of_a_messageless_exception_has_no_dangling_colon() -> None:
    def fails(ctx, **params):
        raise MemoryError()

    outcome = _run(fails)
    assert outcome.verdict.value == "error"
    assert outcome.reason == "MemoryError"


def test_numpy_scalar_output_is_one_sample() -> None:
    def scalar(ctx, **params):
        return {"x": np.float32(5.0)}

    outcome = _run(scalar)
    assert outcome.verdict.value != "error", outcome.reason
