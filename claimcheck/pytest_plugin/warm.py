"""The run's warm-up processes (:mod:`claimcheck.warm_start`): started once the items are known, stopped at the end.

On a CUDA backend the run points MLX at claimcheck's kernel folder and, unless ``--claims-warm-start 0``,
starts up to two processes (a quarter of the CPU cores) over the items whose probe declares ``warm_up``:
one from the run's end, one ahead of the run over the items that time nothing. Elsewhere none start
unless the option asks for them. Under ``pytest -n`` (several workers already share the card) and with
``--collect-only`` nothing starts.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from claimcheck.warm_start import Warmers, WarmTask
from claimcheck.pytest_plugin.session import ClaimSession

MAX_WORKERS = 2


def default_workers(backend: str, cores: int) -> int:
    """Warm-up processes when the option is not given: a quarter of the cores, at most two, on CUDA only."""
    return min(MAX_WORKERS, cores // 4) if backend == "cuda" else 0


def task_of(item: Any, profile: str | None) -> WarmTask | None:
    """The warm-up of a claim item (with the params its probe warms it with), or None: no warm-up, carried, not JSON."""
    warm_up = getattr(getattr(item, "probe", None), "warm_up", False)
    if not warm_up or getattr(item, "carried", None) is not None:
        return None
    params = warm_up(dict(item.params)) if callable(warm_up) else dict(item.params)
    if params is None:
        return None
    control = getattr(item, "control_for", None)
    budget = getattr(item.claim, "budget", None)
    task = WarmTask(item_id=item.name, path=item.claim.path, claim_id=control or item.claim.id,
                    params=params, profile=profile, control=control is not None,
                    timing=bool(getattr(budget, "exclusive", False)))
    try:
        json.dumps(task.params)
    except (TypeError, ValueError):
        return None
    return task


class WarmStart:
    """Pytest hooks: plan and start the warm-up processes, mark each item the run begins, stop them."""

    def __init__(self, session: ClaimSession) -> None:
        self.session = session
        self.warmers: Warmers | None = None
        self.planned = 0
        self.summary = ""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        config = session.config
        if config.option.collectonly or not session.items:
            return
        chosen = config.getoption("--claims-warm-start")
        profile = self.session.profile()
        items: list[Any] = list(session.items)  # claim items in run order, duck-typed as task_of reads them
        candidates = [(item, task) for item in items if (task := task_of(item, profile)) is not None]
        if not candidates:  # a run of plain tests, or of claims whose probes declare no warm-up: nothing imported
            return
        from claimcheck.engine.kernel_cache import use_kernel_dir
        from claimcheck.engine.runner import scope_problem
        from claimcheck.machine import fingerprint

        machine = fingerprint()
        backend = str(machine.get("backend", "cpu"))
        kernels = use_kernel_dir() if backend == "cuda" or chosen else None
        workers = chosen if chosen is not None else default_workers(backend, os.cpu_count() or 1)
        if workers <= 0 or kernels is None:
            return
        tasks = [task for item, task in candidates if scope_problem(item.claim, item.params, machine) is None]
        if not tasks:
            return
        self.planned = len(tasks)
        self.warmers = Warmers.start(tasks, workers=min(workers, len(tasks)), root=self.session.rootdir,
                                     lock=self.session.lock_path, kernels=kernels,
                                     probe_sources=config.getini("claims_probes") or None)

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if self.warmers is not None:
            self.warmers.claim(item.name)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self._stop()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.summary:
            terminalreporter.write_line(self.summary)

    def pytest_unconfigure(self) -> None:
        self._stop()  # a run that ended before its session finished

    def _stop(self) -> None:
        if self.warmers is None:
            return
        warmers, self.warmers = self.warmers, None
        warmers.stop()
        self.summary = (f"claimcheck: warm start: {len(warmers.processes)} background processes ran "
                        f"{len(warmers.warmed)} of {self.planned} warm-up items' probes once, compiling their kernels "
                        "ahead of the run")
