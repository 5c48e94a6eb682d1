"""Warm-up processes: kernels handed over whole, items claimed once, the run's lock respected, the run unchanged.

The end-to-end tests wait for states, never for durations: a warm-up process that holds the lock
shared cannot call its probe while the test holds it exclusively, so the probe's mark is absent
until the test lets go.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from claimcheck.engine.exclusive import hold
from claimcheck.engine.kernel_cache import KERNEL_ENV, hand_over, kernel_dir, use_kernel_dir
from claimcheck.warm_start import Warmers, WarmTask, claim_item, order_for
from claimcheck.pytest_plugin.warm import default_workers, task_of
from tests.reliability._project import claim_yaml, start_pytest, wait_for

DEADLINE_S = 300.0  # only a hung process gets near it


def _module(folder: Path, name: str, *, names: bool = True, code: bytes = b"ptx") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.ptx").write_bytes(code)
    if names:
        (folder / f"{name}.txt").write_text(f"{name}\t_Z{name}\n")


def test_hand_over_copies_whole_modules_only_and_never_replaces_one(tmp_path: Path) -> None:
    private, shared = tmp_path / "private", tmp_path / "shared"
    _module(private, "gather_qmm_4")
    _module(private, "half_written", names=False)  # its names not yet written: not a module to load
    _module(private, "rms_norm", code=b"mine")
    _module(shared, "rms_norm", code=b"theirs")
    assert hand_over(private, shared) == 1
    assert (shared / "gather_qmm_4.ptx").read_bytes() == b"ptx"
    assert (shared / "gather_qmm_4.txt").read_text().startswith("gather_qmm_4\t")
    assert not (shared / "half_written.ptx").exists()
    assert (shared / "rms_norm.ptx").read_bytes() == b"theirs"
    assert not list(shared.glob(".*.part")), "no partial file is left behind"
    assert hand_over(private, shared) == 0, "a module already handed over is not copied again"


def test_the_kernel_folder_is_claimchecks_unless_the_user_named_one(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAIMCHECK_CACHE", str(tmp_path / "cache"))
    environ: dict[str, str] = {}
    folder = use_kernel_dir(environ)
    assert folder == kernel_dir() and folder.is_relative_to(tmp_path / "cache" / "kernels") and folder.is_dir()
    assert environ[KERNEL_ENV] == str(folder)
    mine = {KERNEL_ENV: str(tmp_path / "mine")}
    assert use_kernel_dir(mine) == tmp_path / "mine" and mine == {KERNEL_ENV: str(tmp_path / "mine")}


def test_an_item_is_claimed_once(tmp_path: Path) -> None:
    assert claim_item(tmp_path, "qmm-4bit[bits=4]") is True
    assert claim_item(tmp_path, "qmm-4bit[bits=4]") is False
    assert claim_item(tmp_path, "qmm-4bit[bits=8]") is True


def test_the_shipped_heavy_probes_warm_light() -> None:
    """The MoE gather warms on one layer; the decode arms leave synthetic models cold (both are tens of GB)."""
    from claimcheck.probing.registry import load_probe_modules, registered_probes

    load_probe_modules()
    probes = registered_probes()
    moe, decode = probes["moe_gather"].warm_up, probes["decode_arms"].warm_up
    assert callable(moe) and moe({"n_experts": 128, "layers": 8}) == {"n_experts": 128, "layers": 1}
    assert callable(decode) and decode({"model": "synthetic:llama:4b"}) is None
    assert decode({"model": "smollm2-135m-instruct", "variant": "4bit"}) == {"model": "smollm2-135m-instruct",
                                                                           "variant": "4bit"}


def test_processes_start_on_cuda_only_unless_asked() -> None:
    assert default_workers("cuda", 16) == 2 and default_workers("cuda", 4) == 1 and default_workers("cuda", 64) == 2
    assert default_workers("cpu", 64) == 0 and default_workers("metal", 16) == 0


def test_only_items_whose_probe_declares_a_warm_up_are_planned() -> None:
    claim = SimpleNamespace(path="claims/x.yaml", id="x")

    def item(warm: object, **extra: object) -> SimpleNamespace:
        return SimpleNamespace(name="x[n=1]", claim=claim, params={"n": 1}, probe=SimpleNamespace(warm_up=warm),
                               carried=None, control_for=None) if not extra else \
            SimpleNamespace(**{"name": "x[control]", "claim": claim, "params": {"n": 2},
                               "probe": SimpleNamespace(warm_up=warm), "carried": None, "control_for": None, **extra})

    assert task_of(item(True), "cuda") == WarmTask("x[n=1]", "claims/x.yaml", "x", {"n": 1}, "cuda", False)
    assert task_of(item(False), None) is None
    assert task_of(item(True, carried=object()), None) is None, "a carried item measures nothing"
    control = task_of(item(True, control_for="x"), None)
    assert control is not None and control.control and control.claim_id == "x"
    assert task_of(item(True, params={"n": object()}), None) is None, "params that cannot travel as JSON"
    lighter = task_of(item(lambda params: {**params, "layers": 1}), None)
    assert lighter is not None and lighter.params == {"n": 1, "layers": 1}, "the probe's own warm-up params"
    assert task_of(item(lambda params: None), None) is None, "an item the probe leaves cold"
    timed = SimpleNamespace(path="claims/t.yaml", id="t", budget=SimpleNamespace(exclusive=True))
    found = task_of(item(True, claim=timed, name="t"), None)
    assert found is not None and found.timing, "a timing item is marked, so no process runs ahead into it"


def test_one_process_takes_the_plan_from_the_end_and_the_other_runs_ahead_over_what_times_nothing() -> None:
    tasks = [WarmTask(name, "claims/x.yaml", "x", {}, timing=name.startswith("t")) for name in ("c1", "t1", "c2", "t2")]
    assert [t.item_id for t in order_for(tasks, ahead=False)] == ["t2", "c2", "t1", "c1"]
    assert [t.item_id for t in order_for(tasks, ahead=True)] == ["c1", "c2"]


def test_a_models_first_curve_item_warms_light() -> None:
    """The identity control warms on one seed of four tokens: the model's conversion, load and kernels, little else."""
    from claimcheck.probing.registry import load_probe_modules, registered_probes

    load_probe_modules()
    warm = registered_probes()["identity_control"].warm_up
    params = {"model": "gemma3-270m", "variant": "fp32", "prompts": "all", "seeds": 3, "max_tokens": 16}
    assert callable(warm) and warm(params) == {**params, "seeds": 1, "max_tokens": 4}


MARKING_PROBE = '''
import os
from pathlib import Path

from claimcheck.probing.registry import Output, ProbeContext, probe


@probe("marking", outputs={"x": Output("ms")}, warm_up=True)
def marking(ctx: ProbeContext, *, tag: int) -> dict:
    """Leaves a file per call (pid and tag), so a test sees who called it."""
    folder = Path(os.environ["WARM_MARKS"])
    folder.mkdir(exist_ok=True)
    (folder / f"{os.getpid()}-{tag}").touch()
    return {"x": [5.0 + 0.001 * i for i in range(ctx.n)]}
'''


def _project(root: Path) -> None:
    (root / "probes").mkdir(exist_ok=True)
    (root / "probes" / "marking.py").write_text(MARKING_PROBE)
    (root / "claims").mkdir(exist_ok=True)
    (root / "claims" / "marking.yaml").write_text(claim_yaml(
        "marked", "marking", grid={"tag": [1, 2, 3]}, check={"rule": "at_least", "output": "x", "threshold": 0},
        budget={"min_samples": 4, "max_samples": 4, "looks": 1, "max_seconds": 600}))


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="reads blocked locks from Linux's /proc/locks")
def test_a_warm_up_process_waits_for_a_timing_item_and_skips_what_the_run_began(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path)
    marks = tmp_path / "marks"
    monkeypatch.setenv("WARM_MARKS", str(marks))
    tasks = [WarmTask(f"marked[tag={tag}]", str(tmp_path / "claims" / "marking.yaml"), "marked", {"tag": tag})
             for tag in (1, 2, 3)]  # as the run begins them: the one process takes them from the end
    lock, kernels = tmp_path / ".claimcheck" / "exclusive.lock", tmp_path / "kernels"
    with hold(lock, mode="exclusive"):  # a timing item of the run
        warmers = Warmers.start(tasks, workers=1, root=tmp_path, lock=lock, kernels=kernels)
        try:
            warmers.claim("marked[tag=2]")  # the run began this one
            child = warmers.processes[0]
            wait_for(lambda: waiting_on(lock, child.pid) or marks.exists() or child.poll() is not None, DEADLINE_S,
                     "the warm-up process to wait for the lock or to call its probe")
            assert child.poll() is None, (Path(warmers.scratch.name) / "worker-0" / "log").read_text()
            assert not marks.exists(), "a warm-up call began beside a timing item"
        except BaseException:
            warmers.stop()
            raise
    try:
        wait_for(lambda: warmers.processes[0].poll() is not None, DEADLINE_S, "the warm-up process to finish")
        log = (Path(warmers.scratch.name) / "worker-0" / "log").read_text()
    finally:
        warmers.stop()
    called = sorted(path.name.split("-")[1] for path in marks.iterdir())
    assert called == ["1", "3"], log
    assert {path.name.split("-")[0] for path in marks.iterdir()} != {str(os.getpid())}
    assert sorted(warmers.warmed) == ["marked[tag=1]", "marked[tag=3]"]
    assert not Path(warmers.scratch.name).exists(), "the shared folders are removed"


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="reads blocked locks from Linux's /proc/locks")
def test_with_two_processes_one_begins_at_the_runs_end_and_one_at_its_front(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path)
    monkeypatch.setenv("WARM_MARKS", str(tmp_path / "marks"))
    tasks = [WarmTask(f"marked[tag={tag}]", str(tmp_path / "claims" / "marking.yaml"), "marked", {"tag": tag})
             for tag in (1, 2, 3)]
    lock, kernels = tmp_path / ".claimcheck" / "exclusive.lock", tmp_path / "kernels"
    with hold(lock, mode="exclusive"):  # both block on their first call, having claimed its item
        warmers = Warmers.start(tasks, workers=2, root=tmp_path, lock=lock, kernels=kernels)
        try:
            wait_for(lambda: all(waiting_on(lock, p.pid) or p.poll() is not None for p in warmers.processes),
                     DEADLINE_S, "both warm-up processes to wait for the lock")
            assert all(p.poll() is None for p in warmers.processes)
            claimed = {path.name for path in warmers.markers.iterdir()}
        finally:
            warmers.stop()
    names = {"marked[tag=1]", "marked[tag=2]", "marked[tag=3]"}
    by_marker = {hashlib.sha256(name.encode()).hexdigest(): name for name in names}
    assert {by_marker[marker] for marker in claimed} == {"marked[tag=1]", "marked[tag=3]"}


def test_a_run_with_warm_up_processes_decides_as_without(demo_project: pytest.Pytester) -> None:
    _project(demo_project.path)
    marks = demo_project.path / "marks"
    outputs = {}
    for workers in ("0", "2"):
        log = demo_project.path / f"run-{workers}.log"
        proc = start_pytest(demo_project.path, log, "claims", "--claims-no-store", f"--claims-warm-start={workers}",
                            "--claims-family=none", "--claims-cv-bound=10", "-rA",
                            env={"WARM_MARKS": str(marks), "CLAIMCHECK_CACHE": str(demo_project.path / "cache")})
        try:
            code = proc.wait(timeout=DEADLINE_S)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        outputs[workers] = log.read_text()
        assert code == 0, outputs[workers][-3000:]
    assert "warm start" not in outputs["0"]
    summary = [line for line in outputs["2"].splitlines() if line.startswith("claimcheck: warm start: 2 background")]
    assert summary and " of 3 warm-up items" in summary[0], outputs["2"][-3000:]
    for output in outputs.values():
        assert output.count("PASSED claims/marking.yaml::marked[tag=") == 3, output[-3000:]
    deadline = time.monotonic() + DEADLINE_S
    while any(pid_alive(int(path.name.split("-")[0])) for path in marks.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(pid_alive(int(path.name.split("-")[0])) for path in marks.iterdir()), "a process outlived the run"


def waiting_on(lock: Path, pid: int) -> bool:
    """Whether process ``pid`` is blocked waiting for an flock on ``lock`` (Linux's /proc/locks)."""
    inode = f":{os.stat(lock).st_ino} "
    lines = Path("/proc/locks").read_text().splitlines()
    return any("->" in line and f" {pid} " in line and inode in line for line in lines)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="reads blocked locks from Linux's /proc/locks")
def test_a_waiting_timing_item_goes_before_a_later_shared_holder(tmp_path: Path) -> None:
    """Without the gate, flock lets shared holders in while an exclusive one waits, so warm-up calls one after
    another could keep a timing item waiting until they had all run."""
    import threading

    lock = tmp_path / "exclusive.lock"
    gate = tmp_path / "exclusive.lock.gate"
    order: list[str] = []
    release_first, release_timing = threading.Event(), threading.Event()

    def holder(name: str, mode: str, release: threading.Event | None) -> None:
        with hold(lock, mode=mode):
            order.append(name)
            if release is not None:
                release.wait(DEADLINE_S)

    first = threading.Thread(target=holder, args=("first shared", "shared", release_first))
    first.start()
    wait_for(lambda: order == ["first shared"], DEADLINE_S, "the first shared holder")
    timing = threading.Thread(target=holder, args=("timing", "exclusive", release_timing))
    timing.start()
    wait_for(lambda: waiting_on(lock, os.getpid()), DEADLINE_S, "the timing item to wait")
    later = threading.Thread(target=holder, args=("later shared", "shared", None))
    later.start()
    wait_for(lambda: waiting_on(gate, os.getpid()) or "later shared" in order, DEADLINE_S,
             "the later shared holder to wait at the gate or get in")
    assert order == ["first shared"], "a shared holder got in while a timing item waited"
    release_first.set()
    wait_for(lambda: "timing" in order, DEADLINE_S, "the timing item")
    release_timing.set()
    for thread in (first, timing, later):
        thread.join(DEADLINE_S)
    assert order == ["first shared", "timing", "later shared"]


def test_a_warm_up_process_whose_run_is_gone_starts_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run killed before it could stop its warm-up processes leaves them nothing to start."""
    import json
    import subprocess
    import sys

    _project(tmp_path)
    marks = tmp_path / "marks"
    monkeypatch.setenv("WARM_MARKS", str(marks))
    plan = tmp_path / "tasks.json"
    plan.write_text(json.dumps([{"item_id": "marked[tag=1]", "path": str(tmp_path / "claims" / "marking.yaml"),
                                 "claim_id": "marked", "params": {"tag": 1}}]))
    (tmp_path / "markers").mkdir()
    command = [sys.executable, "-m", "claimcheck.warm_start", str(plan), "--root", str(tmp_path), "--lock",
               str(tmp_path / "exclusive.lock"), "--markers", str(tmp_path / "markers"), "--kernels",
               str(tmp_path / "kernels"), "--scratch", str(tmp_path / "scratch")]
    done = subprocess.run(command + ["--parent", "1"], capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not marks.exists(), "a task started after the run was gone"
    done = subprocess.run(command + ["--parent", str(os.getpid())], capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 0 and [path.name.split("-")[1] for path in marks.iterdir()] == ["1"], done.stderr[-3000:]


STUCK_PROBE = '''
import signal, time

from claimcheck.probing.registry import Output, ProbeContext, probe


@probe("stuck", outputs={"x": Output("ms")}, warm_up=True)
def stuck(ctx: ProbeContext) -> dict:
    """Stuck as a native call is: the hard limit's SIGALRM never reaches it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(3600)
    return {"x": [1.0]}
'''


def test_a_warm_up_call_stuck_in_native_code_ends_its_process_and_frees_the_lock(tmp_path: Path) -> None:
    """Else a timing item of the run would wait for the lock that call holds shared, for ever."""
    import fcntl
    import json
    import subprocess
    import sys

    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "stuck.py").write_text(STUCK_PROBE)
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "stuck.yaml").write_text(claim_yaml(
        "stuck-claim", "stuck", check={"rule": "at_least", "output": "x", "threshold": 0},
        budget={"min_samples": 1, "max_samples": 1, "looks": 1, "max_seconds": 600}))
    plan = tmp_path / "tasks.json"
    plan.write_text(json.dumps([{"item_id": "stuck-claim", "path": str(tmp_path / "claims" / "stuck.yaml"),
                                 "claim_id": "stuck-claim", "params": {}}]))
    (tmp_path / "markers").mkdir()
    lock = tmp_path / "exclusive.lock"
    done = subprocess.run([sys.executable, "-m", "claimcheck.warm_start", str(plan), "--root", str(tmp_path), "--lock",
                           str(lock), "--markers", str(tmp_path / "markers"), "--kernels", str(tmp_path / "kernels"),
                           "--scratch", str(tmp_path / "scratch"), "--call-limit", "1"],
                          capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode != 0 and "stuck-claim hung" in done.stdout + done.stderr, done.stderr[-3000:]
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if the lock were still held
