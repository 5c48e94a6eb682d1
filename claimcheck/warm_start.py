"""Kernels compiled ahead of the items that need them: on a GPU, warm-up items' probes called once in background.

On MLX's CUDA backend the first run of each kernel compiles it, and on a machine that has never run
the suite that is much of the run: the MoE gather item took 49.8 s on a fresh H200 and 0.6 s once its
kernels were compiled (docs/gpu.md). Compiling is CPU work, and a GPU host has cores to spare while
the run drives the card from one, so the plugin starts a few background processes (:class:`Warmers`)
that call, once and for one sample, the probe of each item whose probe declares ``warm_up``. The first
takes the run's last items first (the run begins at the front); a second runs ahead of the run over the
items that time nothing, from the front: a model's first item there is mostly its conversion, load and
kernel compilation, which its warm-up does while the run is on the item before (a warm-up call is far
shorter than the items it passes). It leaves timing items to the first, since a call beside the run's
next timing item would hold that item up (below). Each compiles into a kernel folder of its own
and hands every finished module to the run's folder after each call
(:func:`claimcheck.engine.kernel_cache.hand_over`), where the run's MLX finds it.

What keeps them out of the measurements:

- nothing they measure is kept: the samples are dropped, and results a probe caches go to a folder
  of their own (converted models are shared: a model is the same whoever converts it);
- each call holds the run's lock shared, so a timing item, which holds it exclusively, never runs
  beside one, and one waits for a timing item to end;
- an item the run has begun is skipped, and the run never waits for one they began: each item is
  claimed by a marker file, created by whichever comes first;
- each caps its GPU memory at a share of the device, and they are stopped when the run ends.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from claimcheck.engine.exclusive import hold
from claimcheck.engine.kernel_cache import KERNEL_ENV, hand_over

CALL_LIMIT_S = 300.0  # a warm-up call that takes longer is abandoned (its kernels so far are kept)
MEMORY_SHARE = 0.1  # of the device, for each warm-up process


@dataclass(frozen=True)
class WarmTask:
    """One item to warm: where its claim is and the params its probe takes."""

    item_id: str
    path: str
    claim_id: str
    params: dict[str, Any]
    profile: str | None = None
    control: bool = False
    timing: bool = False  # the item holds the run's lock exclusively: only the process from the end warms it


def claim_item(folder: Path, item_id: str) -> bool:
    """Claim ``item_id`` for whoever calls first (the run or a warm-up process); False if already claimed."""
    marker = folder / hashlib.sha256(item_id.encode()).hexdigest()
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:
        return False
    return True


@dataclass
class Warmers:
    """The background processes of one run, and the folders they share with it."""

    processes: list[subprocess.Popen[bytes]]
    markers: Path
    scratch: tempfile.TemporaryDirectory[str]
    warmed: list[str] = field(default_factory=list)  # filled by stop(): the items the processes warmed

    @classmethod
    def start(cls, tasks: Sequence[WarmTask], *, workers: int, root: Path, lock: Path, kernels: Path,
              probe_sources: Sequence[str] | None = None) -> Warmers:
        """Start ``workers`` processes over ``tasks``, given in the order the run begins them.

        Even-numbered processes take them from the end, odd-numbered ones take the non-timing ones from
        the front; each takes the next unclaimed one in its order.
        """
        scratch = tempfile.TemporaryDirectory(prefix="claimcheck-warm-")
        base = Path(scratch.name)
        markers = base / "claimed"
        markers.mkdir()
        plan = base / "tasks.json"
        plan.write_text(json.dumps([asdict(task) for task in tasks]))
        processes = []
        for index in range(workers):
            private = base / f"worker-{index}"
            (private / "kernels").mkdir(parents=True)
            command = [sys.executable, "-m", "claimcheck.warm_start", str(plan), "--root", str(root),
                       "--lock", str(lock), "--markers", str(markers), "--kernels", str(kernels),
                       "--scratch", str(private), "--parent", str(os.getpid())]
            if index % 2:
                command.append("--ahead")
            for source in probe_sources or ():
                command += ["--probes", source]
            environment = {**os.environ, KERNEL_ENV: str(private / "kernels")}
            with open(private / "log", "wb") as log:
                processes.append(subprocess.Popen(command, env=environment, stdin=subprocess.DEVNULL,
                                                  stdout=log, stderr=subprocess.STDOUT))
        return cls(processes, markers, scratch)

    def claim(self, item_id: str) -> None:
        """The run begins ``item_id``: no warm-up process starts it from now on."""
        claim_item(self.markers, item_id)

    def stop(self) -> None:
        """End every process (a call in progress is abandoned), note what they warmed, remove the shared folders."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for done in sorted(Path(self.scratch.name).glob("worker-*/warmed.txt")):
            self.warmed += done.read_text().splitlines()
        self.scratch.cleanup()


def warm_one(task: WarmTask, scratch: Path) -> None:
    """Call ``task``'s probe once for one sample, as its item would first call it; the samples are dropped."""
    import random

    from claimcheck.claims.loader import check_probe, read_claim_file
    from claimcheck.engine.runner import item_seed, measurement_key
    from claimcheck.engine.sampler import Sampler
    from claimcheck.probing.registry import ProbeContext

    claim = next(claim for claim in read_claim_file(Path(task.path)) if claim.id == task.claim_id)
    probe = check_probe(claim)
    if claim.profiles:
        claim = claim.for_profile(task.profile)
    if task.control:
        claim = claim.for_control()
    claim = claim.at_point(task.params)
    seed = item_seed(0, measurement_key(claim, task.item_id))
    ctx = ProbeContext(seed=seed, rng=random.Random(seed), cache_dir=str(scratch / "results"))
    Sampler(claim, probe, dict(task.params), ctx).draw(1, 0)


def _prepare(root: Path, probe_sources: Sequence[str] | None) -> None:
    """What the run sets up before its first item: the device, the project's model names and probes, a memory cap."""
    from claimcheck.machine import apply_device
    from claimcheck.models import aliases
    from claimcheck.probing.registry import load_probe_modules

    apply_device()
    aliases.use_project(root)
    load_probe_modules(str(root), list(probe_sources) if probe_sources else None)
    from claimcheck.harness.device_memory import cap_device_memory

    cap_device_memory(MEMORY_SHARE)


def run_tasks(tasks: Iterable[WarmTask], *, root: Path, lock: Path, markers: Path, kernels: Path, scratch: Path,
              probe_sources: Sequence[str] | None = None, parent: int | None = None,
              call_limit: float = CALL_LIMIT_S) -> None:
    """Warm each task not yet claimed, handing kernels over after each; each warmed id goes to ``warmed.txt``.

    ``parent``: the run's process; once it is gone (killed before it could stop this one) no task starts.
    A call past ``call_limit`` is interrupted; one stuck in native code ends this process (the run's
    native-hang backstop, :mod:`claimcheck.engine.hang_watch`), so the lock it holds shared is released
    and no timing item of the run waits on it for ever.
    """
    from claimcheck.engine import hang_watch
    from claimcheck.engine.runner import time_limit
    from claimcheck.harness.device_memory import release_device_memory

    _prepare(root, probe_sources)
    scratch.mkdir(parents=True, exist_ok=True)
    private = Path(os.environ.get(KERNEL_ENV, str(scratch / "kernels")))
    for task in tasks:
        if parent is not None and os.getppid() != parent:
            break
        if not claim_item(markers, task.item_id):
            continue
        try:
            with hold(lock, mode="shared"), time_limit(call_limit), \
                    hang_watch.watch(call_limit, lambda: f"claimcheck warm-up: {task.item_id} hung; process ended"):
                warm_one(task, scratch)
            with open(scratch / "warmed.txt", "a") as record:
                record.write(task.item_id + "\n")
        except Exception:  # noqa: BLE001 - a warm-up that fails costs the run nothing: the item runs as ever
            pass
        release_device_memory()
        hand_over(private, kernels)


def order_for(tasks_in_run_order: Sequence[WarmTask], *, ahead: bool) -> list[WarmTask]:
    """One process's order: the non-timing tasks as the run begins them (``ahead``), else all from the end."""
    if ahead:
        return [task for task in tasks_in_run_order if not task.timing]
    return list(reversed(tasks_in_run_order))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m claimcheck.warm_start", description=__doc__.splitlines()[0])
    parser.add_argument("plan", type=Path, help="JSON list of tasks (WarmTask fields)")
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--lock", type=Path, required=True)
    parser.add_argument("--markers", type=Path, required=True)
    parser.add_argument("--kernels", type=Path, required=True, help="the run's kernel folder")
    parser.add_argument("--scratch", type=Path, required=True, help="this process's own folder")
    parser.add_argument("--probes", action="append", default=None, help="the run's probe sources")
    parser.add_argument("--parent", type=int, default=None, help="the run's process id")
    parser.add_argument("--call-limit", type=float, default=CALL_LIMIT_S, help="seconds one warm-up call may take")
    parser.add_argument("--ahead", action="store_true",
                        help="run ahead of the run: the non-timing tasks from the front, not all from the end")
    args = parser.parse_args(argv)
    tasks = order_for(tasks_in_run_order=[WarmTask(**entry) for entry in json.loads(args.plan.read_text())],
                      ahead=args.ahead)
    run_tasks(tasks, root=args.root, lock=args.lock, markers=args.markers, kernels=args.kernels,
              scratch=args.scratch, probe_sources=args.probes, parent=args.parent, call_limit=args.call_limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
