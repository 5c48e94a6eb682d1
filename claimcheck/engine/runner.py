"""Run one claim item: scope check, sequential sampling, decision, outcome.

This is the only place that connects a claim to its probe and to the
statistics core. It never raises for a probe failure: every path ends in an
outcome with a verdict and a one-line reason, so one broken probe cannot take
measured results of other items down with it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fnmatch
import hashlib
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from claimcheck.engine import hang_watch
from claimcheck.engine.adjudicate import between_runs_inflation, between_runs_rereading, gate_noise, widen
from claimcheck.claim import Claim
from claimcheck.errors import NotApplicable, ProbeError, Undecidable
from claimcheck.probing.registry import ProbeContext, RegisteredProbe
from claimcheck.engine.probe_traceback import failure_info
from claimcheck.engine.progress import ItemProgress, ProgressSink, ignore_progress
from claimcheck.engine.result import ItemResult
from claimcheck.engine.options import RunOptions
from claimcheck.rules import decide_check, for_timing, sequential, timing_gate
from claimcheck.engine.sampler import Groups, Sampler
from claimcheck.stats import Adaptation, Decision, SequentialPlan
from claimcheck.verdict import Verdict



def scope_problem(claim: Claim, params: Mapping[str, Any], machine: Mapping[str, Any]) -> str | None:
    """Why this machine/model is outside the claim's scope, or None when inside."""
    scope = claim.scope
    backend = machine.get("backend", "cpu")
    if scope.backend != "any" and scope.backend != backend:
        return f"{scope.kind} claim scoped to backend `{scope.backend}`; this machine runs `{backend}`"
    device = str(machine.get("device", ""))
    if scope.device and not fnmatch.fnmatch(device.lower(), scope.device.lower()):
        return f"{scope.kind} claim scoped to device `{scope.device}`; this machine is `{device}`"
    if scope.model:
        model = params.get("model")
        if model is None or not fnmatch.fnmatch(str(model).lower(), scope.model.lower()):
            return f"{scope.kind} claim scoped to model `{scope.model}`; this item measures `{model or 'no model'}`"
    if scope.min_memory_gib and float(machine.get("memory_gib", 0) or 0) < scope.min_memory_gib:
        return f"needs {scope.min_memory_gib:g} GiB of memory; this machine has {machine.get('memory_gib')} GiB"
    return None


def measurement_key(claim: Claim, item_id: str) -> str:
    """The item id its measurement is keyed on: the checks of one ``checks:`` list share the document's id, so
    they draw one seed and (through :mod:`claimcheck.engine.shared`) one set of samples."""
    if claim.measurement and item_id.startswith(claim.id):
        return claim.measurement + item_id[len(claim.id):]
    return item_id


def _clock() -> float:
    """Seconds now: the item's budget is read against this (a test replaces it with a fake clock)."""
    return time.time()


def item_seed(run_seed: int, item_id: str) -> int:
    """A per-item seed that is stable across runs and independent of collection order."""
    digest = hashlib.sha256(f"{run_seed}:{item_id}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


class ProbeTimeout(ProbeError):
    """The probe ran past its item's hard time limit."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt a hung probe after ``seconds`` (main thread on POSIX; elsewhere a no-op).

    The limit is a backstop above the claim's own budget: a probe that keeps
    returning samples is stopped by the budget between looks, not by this.
    """
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable or seconds <= 0:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise ProbeTimeout(f"probe hung: no result within the item's hard limit of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def hard_limit(max_seconds: float) -> float:
    """The backstop for an item whose budget is ``max_seconds``: twice the budget plus 5 s.

    The budget is checked between looks; one look may overrun it, so the
    backstop leaves room for a whole extra look before calling a probe hung.
    """
    return 2.0 * max_seconds + 5.0


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    message = text[0] if text else ""
    if isinstance(error, (ProbeError, NotApplicable, Undecidable)) and message:
        return message
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def run_claim_item(
    claim: Claim,
    item_id: str,
    params: dict[str, Any],
    probe: RegisteredProbe,
    *,
    options: RunOptions,
    machine: Mapping[str, Any],
    machine_class: str = "",
    history: Sequence[float] = (),
    stop_alpha: float | None = None,
) -> ItemResult:
    """Measure and decide one item; always returns a result (its item-level adjustments already applied).

    ``history``: the item's estimates in earlier complete runs on ``machine_class`` (read by the
    caller), folded into a timing item's decision as its between-run spread
    (:func:`claimcheck.engine.adjudicate.widen`).
    ``stop_alpha``: the level the item is first tested at in its multiplicity family
    (:func:`claimcheck.engine.families.stop_levels`); its sequential stopping aims there, so a
    decision that stops early survives the family. None: it stops at its own alpha.
    """
    claim = claim.at_point(params)  # a threshold set per grid point takes this item's value
    started = _clock()
    seed = item_seed(options.seed, measurement_key(claim, item_id))
    tracker = ItemProgress(item_id, options.progress)
    ctx = ProbeContext(seed=seed, rng=random.Random(seed), fresh=options.fresh, cache_dir=options.cache_dir,
                       progress=tracker.note)
    sampler = Sampler(claim, probe, params, ctx)

    def finish(verdict: Verdict, reason: str, decision: Decision | None = None) -> ItemResult:
        end = _clock()
        return ItemResult(
            claim=claim, item_id=item_id, params=dict(params), raw_verdict=verdict, raw_reason=reason,
            decision=decision, samples={k: tuple(v) for k, v in sampler.samples().items()},
            machine=dict(machine), machine_class=machine_class, info=dict(ctx.info), artifacts=dict(ctx.artifacts),
            started=_timestamp(started), finished=_timestamp(end), duration_s=round(end - started, 3),
        )

    problem = scope_problem(claim, params, machine)
    if problem:
        return finish(Verdict.NOT_APPLICABLE, problem)
    alpha = options.alpha if options.alpha is not None else claim.check.alpha
    seconds = claim.budget.max_seconds * options.budget_scale
    limit = hard_limit(seconds)

    def hung() -> str:
        result = finish(Verdict.ERROR, f"probe hung in native code: no result within the item's hard limit of "
                                       f"{limit:g} s (+ {hang_watch.GRACE_S:g} s); the run was ended")
        if options.on_hang is not None:
            return options.on_hang(result)
        return f"claimcheck: {item_id}: {result.reason}"

    try:
        with time_limit(limit), hang_watch.watch(limit, hung):
            decision = _measure_and_decide(claim, probe, sampler, alpha, options, started + seconds, tracker,
                                           stop_alpha, history)
    except NotApplicable as error:
        return finish(Verdict.NOT_APPLICABLE, _one_line(error))
    except Undecidable as error:
        return finish(Verdict.INCONCLUSIVE, _one_line(error))
    except (Exception, SystemExit) as error:  # noqa: BLE001 - any probe failure is an `error` verdict
        ctx.info.update(failure_info(error))  # the probe's own file:line and its last frames
        return finish(Verdict.ERROR, _one_line(error))
    finally:
        tracker.finish()
    if decision is None:
        return finish(Verdict.INCONCLUSIVE, f"time budget of {seconds:g} s ran out before the first decision")
    result = widen(finish(decision.verdict, decision.reason, decision), history)
    return gate_noise(result, sampler.groups(), options.cv_bound)


def _timestamp(seconds: float) -> str:
    return _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc).isoformat(timespec="seconds")


def _measure_and_decide(claim: Claim, probe: RegisteredProbe, sampler: Sampler, alpha: float,
                        options: RunOptions, deadline: float, tracker: ItemProgress,
                        stop_alpha: float | None = None, history: Sequence[float] = ()) -> Decision | None:
    if probe.deterministic:
        sampler.draw(1, 0)
        return decide_check(claim.check, sampler.groups(), alpha, deterministic=True)
    return _sequential(claim, sampler, alpha, options, deadline, tracker, stop_alpha, history)


def _sequential(claim: Claim, sampler: Sampler, alpha: float, options: RunOptions, deadline: float,
                tracker: ItemProgress, stop_alpha: float | None = None, history: Sequence[float] = ()) -> Decision:
    """Draw in looks until the rule decides, stops for futility, the plan ends or the time budget runs out.

    A last look moved out (a promising-zone extension) is sized to end within the budget at the rate
    measured so far (:class:`claimcheck.stats.Adaptation`); the budget is checked before every look.
    A timing item's looks are read as :func:`widen` will adjudicate them, with ``history``: a look
    that decides within the run but would not survive it samples on, and the futility stop reads the
    chance of a verdict that would.
    """
    budget = claim.budget
    scale = options.budget_scale
    min_n = max(1, round(budget.min_samples * scale))
    max_n = max(min_n, round(budget.max_samples * scale))
    stop = min(stop_alpha, alpha) if stop_alpha is not None and stop_alpha > 0 else None
    plan = SequentialPlan(alpha, min_n, max_n, budget.looks, stop_alpha=stop)
    sampler.ctx.looks = len(plan.sizes)  # a probe over a fixed selection measures it in groups only with several looks
    looks = iter(range(len(plan.sizes)))
    begun = _clock()

    def room() -> int:
        """Samples per group the time budget still allows at the rate measured so far (setup included)."""
        now, taken = _clock(), sampler.count()
        if taken < 1 or now >= deadline:
            return 0
        rate = (now - begun) / taken
        return int((deadline - now) / rate) if rate > 0 else 10 * max_n

    def draw(k: int) -> Groups:
        look = next(looks)
        if look > 0 and _clock() > deadline:
            return []  # budget spent: decide on what was measured
        before = {label: len(values) for label, values in sampler.groups()}
        tracker.look(look + 1, len(plan.sizes), max(before.values(), default=0))
        sampler.draw(max(k, 1), look)
        return [(label, values[before[label]:]) for label, values in sampler.groups()]

    # timing outputs (exclusive items) decide on the median unless the claim names a statistic,
    # and their tested quantity is gated for spikes and drift inside the loop
    timing = claim.timing
    check = for_timing(replace(claim.check, alpha=alpha), timing)
    return sequential(check, draw, plan, gate=timing_gate(check) if timing else None,
                      adapt=Adaptation(room=room, between_runs=between_runs_rereading(claim, history),
                                       inflation=between_runs_inflation(claim, history)))
