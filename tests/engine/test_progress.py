"""Progress lines: the printing rule on a fake clock, the worker channel, the runner's looks, and a
blocked item's progress reaching pytest's output in one process and under xdist.

The end-to-end runs wait for states, never for durations: the probe blocks until the test has seen
its progress line in the run's output, then the test releases it.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from claimcheck.engine.progress import ItemProgress, Progress, ProgressBoard, ProgressChannel
from claimcheck.engine.runner import RunOptions, run_claim_item
from tests.reliability._project import claim_yaml, start_pytest, wait_for

DEADLINE_S = 900.0  # only a hung run gets near it


def _progress(look: int = 1, samples: int = 0, started: float = 100.0, note: str = "") -> Progress:
    return Progress(item_id="claim-a[n=1]", look=look, looks=3, samples=samples, started=started, note=note)


def test_line_says_item_look_samples_and_elapsed() -> None:
    line = _progress(look=2, samples=19, note="tracing").line(now=141.4)
    assert line == "claim-a[n=1]: look 2/3, 19 samples, 41 s — tracing"


def test_log_board_prints_each_running_item_once_per_interval() -> None:
    written: list[str] = []
    board = ProgressBoard(written.append, interval=10.0)
    board.update("gw0", _progress(), now=100.0)
    board.tick(now=109.9)
    assert written == [], "a line before the interval has passed"
    board.tick(now=110.0)
    assert written == ["claimcheck progress: [gw0] claim-a[n=1]: look 1/3, 0 samples, 10 s\n"]
    board.update("gw0", _progress(look=2, samples=8), now=112.0)
    board.tick(now=115.0)
    assert len(written) == 1, "a new look does not reset the interval"
    board.tick(now=120.0)
    assert written[-1].endswith("look 2/3, 8 samples, 20 s\n")
    board.update("gw0", None, now=121.0)
    board.tick(now=200.0)
    assert len(written) == 2, "a finished item keeps printing"


def test_log_board_prints_every_worker() -> None:
    written: list[str] = []
    board = ProgressBoard(written.append, interval=5.0)
    board.update("gw0", _progress(), now=0.0)
    board.update("gw1", _progress(look=3), now=0.0)
    board.tick(now=5.0)
    assert [line.split("]")[0] for line in written] == ["claimcheck progress: [gw0", "claimcheck progress: [gw1"]


def test_tty_board_redraws_one_line_on_every_update() -> None:
    written: list[str] = []
    board = ProgressBoard(written.append, interval=10.0, tty=True)
    board.update("", _progress(), now=100.0)
    board.update("", _progress(look=2), now=101.0)
    board.tick(now=500.0)
    board.update("", None, now=501.0)
    assert written == ["\r\033[K  claimcheck progress: claim-a[n=1]: look 1/3, 0 samples, 0 s",
                       "\r\033[K  claimcheck progress: claim-a[n=1]: look 2/3, 0 samples, 1 s", "\r\033[K"]


def test_channel_carries_a_workers_latest_progress_and_its_end(tmp_path: Path) -> None:
    channel = ProgressChannel(tmp_path)
    write = channel.writer("gw1")
    write(_progress(look=1))
    write(_progress(look=2, samples=8, note="prefill"))
    assert channel.read() == {"gw1": _progress(look=2, samples=8, note="prefill")}
    written: list[str] = []
    board = ProgressBoard(written.append, interval=1.0)
    channel.poll_into(board, now=100.0)
    assert board.sources() == {"gw1"}
    write(None)
    channel.poll_into(board, now=101.0)
    assert channel.read() == {} and board.sources() == set()


def test_channel_skips_a_torn_file(tmp_path: Path) -> None:
    (tmp_path / "gw0.json").write_text('{"item_id": "x", "lo')
    assert ProgressChannel(tmp_path).read() == {}


def test_item_progress_keeps_the_probe_note_across_looks() -> None:
    seen: list[Progress | None] = []
    tracker = ItemProgress("c", seen.append, clock=lambda: 5.0)
    tracker.look(1, 3, 0)
    tracker.note("stage one\nmore detail")
    tracker.look(2, 3, 8)
    tracker.finish()
    assert [(p.look, p.samples, p.note) if p else None for p in seen] == [
        (1, 0, ""), (1, 0, "stage one"), (2, 8, "stage one"), None]


RUNNER_CLAIM = """
id: steady
title: x is large
statement: x is at least 1000
source: {doc: d.md, section: "1", figure: f}
scope: {kind: portable}
probe: {name: steady}
check: {rule: at_least, output: x, threshold: 1000}
budget: {min_samples: 4, max_samples: 12, looks: 3, max_seconds: 600}
"""


def test_runner_reports_every_look_with_samples_so_far() -> None:
    from claimcheck.claims.loader import load_claims_text
    from claimcheck.probing.registry import Output, RegisteredProbe

    def steady(ctx, **params):
        return {"x": [10.0 + 0.01 * ((ctx.look * 7 + i) % 5) for i in range(ctx.n)]}

    probe = RegisteredProbe(name="steady", function=steady, outputs={"x": Output("ms")})
    claim = load_claims_text(RUNNER_CLAIM, "steady.yaml")[0]
    seen: list[Progress | None] = []
    result = run_claim_item(claim, claim.id, {}, probe, options=RunOptions(progress=seen.append), machine={})
    looks = [p for p in seen if p is not None]
    assert seen[-1] is None, "the item's end is reported"
    assert [p.look for p in looks] == list(range(1, len(looks) + 1)) and looks[0].samples == 0
    assert all(p.looks == looks[0].looks for p in looks) and looks[0].looks >= 2
    assert [p.samples for p in looks] == sorted(p.samples for p in looks)
    assert len(looks) == 1 or looks[-1].samples > 0
    assert result.verdict.value == "refuted", result.reason


BLOCKING_PROBE = '''
import os, time
from pathlib import Path

from claimcheck.probing.registry import Output, ProbeContext, probe


@probe("blocking", outputs={"x": Output("ms")})
def blocking(ctx: ProbeContext, *, tag: int) -> dict:
    """Blocks on its first look until the release file exists."""
    release = Path(os.environ["PROGRESS_RELEASE"])
    if ctx.look == 0:
        ctx.progress("waiting for release")
        while not release.exists():
            time.sleep(0.05)
    return {"x": [5.0 + 0.001 * i for i in range(ctx.n)]}
'''


@pytest.mark.parametrize("workers", [None, "2"], ids=["one-process", "xdist"])
def test_a_blocked_item_prints_progress_in_a_log(demo_project: pytest.Pytester, workers: str | None) -> None:
    (demo_project.path / "probes" / "blocking.py").write_text(BLOCKING_PROBE)
    (demo_project.path / "claims" / "blocking.yaml").write_text(claim_yaml(
        "blocked-claim", "blocking", params={"tag": 1}, check={"rule": "at_least", "output": "x", "threshold": 0},
        budget={"min_samples": 4, "max_samples": 4, "looks": 1, "max_seconds": 3600}))
    release = demo_project.path / "release"
    log = demo_project.path / "run.log"
    args = ["claims", "--claims-no-store", "--claims-progress=0.2", "--claims-family=none", "--claims-cv-bound=10"]
    if workers:
        args += ["-n", workers]
    proc = start_pytest(demo_project.path, log, *args, env={"PROGRESS_RELEASE": str(release)})
    expected = "claimcheck progress: " + ("[gw" if workers else "")
    try:
        wait_for(lambda: proc.poll() is not None or "blocked-claim: look 1/1, 0 samples" in log.read_text(),
                 DEADLINE_S, "a progress line for the blocked item")
        assert proc.poll() is None, f"the run ended before its item was released:\n{log.read_text()[-3000:]}"
        release.touch()
        code = proc.wait(timeout=DEADLINE_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    output = log.read_text()
    lines = [line for line in output.splitlines() if "blocked-claim: look 1/1" in line]
    assert lines and all(line.startswith(expected) for line in lines), output[-3000:]
    assert any(line.endswith("— waiting for release") for line in lines), "the probe's note is shown"
    assert code == 0, output[-3000:]
