"""The decode loop's arms: how each schedules building, dispatching and reading greedy decode steps.

Pure Python over a :class:`Session` (the step function, the clock, the device's wait); the probes in
:mod:`probes.decode.decode_loop` hand it MLX's step, and the tests a fake one. Each arm returns the tokens it
read and its timed seconds; :func:`compare_arms` runs arms interleaved and refuses any whose tokens
differ from the first arm's.
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from claimcheck.api import Clock, Interleaved, ProbeError, interleaved_order, spin

SPIN_POINTS = ("build", "pre", "post")
_CHAIN = re.compile(r"^chain-(\d+)$")


@dataclass
class Session:
    """One decode pass's starting point: what an arm needs to decode ``tokens`` greedy steps.

    Attributes:
        step: ``token -> next token``, building (not evaluating) one decode step's graph.
        first: the token the prefill produced (evaluated).
        tokens: decode steps to run.
        async_eval / read: start evaluating outputs / block for one token's int value.
        clock: the timing clock.
        synchronize: wait until the device is idle (before the clock stops).
    """

    step: Callable[[Any], Any]
    first: Any
    tokens: int
    async_eval: Callable[..., None]
    read: Callable[[Any], int]
    clock: Clock
    synchronize: Callable[[], None] = lambda: None


@dataclass
class ArmRun:
    """What one arm produced in one pass."""

    tokens: list[int]
    seconds: float
    build_seconds: float = 0.0


Arm = Callable[[Session], ArmRun]


def pipelined(session: Session, *, depth: int = 1, spin_ms: float = 0.0, spin_at: str = "build") -> ArmRun:
    """The generate_step loop: ``depth`` steps are in flight while the oldest token is read."""
    if depth < 1:
        raise ValueError(f"pipeline depth must be >= 1, got {depth}")
    clock = session.clock
    built = 0.0
    out: list[int] = []
    inflight: collections.deque[Any] = collections.deque()

    def issue(previous: Any) -> Any:
        """Build the next step's graph (timed as build), start it, and queue it."""
        nonlocal built
        if spin_ms and spin_at == "build":
            spin(spin_ms, clock)
        b0 = clock()
        step = session.step(previous)
        built += clock() - b0
        session.async_eval(step)
        inflight.append(step)
        return step

    start = clock()
    y = session.first
    for _ in range(min(depth, session.tokens)):
        y = issue(y)
    issued = len(inflight)
    while inflight:
        if issued < session.tokens:
            y = issue(y)
            issued += 1
        if spin_ms and spin_at == "pre":
            spin(spin_ms, clock)
        out.append(session.read(inflight.popleft()))
        if spin_ms and spin_at == "post":
            spin(spin_ms, clock)
    session.synchronize()
    return ArmRun(out, clock() - start, built)


def prebuilt(session: Session) -> ArmRun:
    """Build every step graph first (untimed), then time only dispatch + read, still pipelined."""
    clock = session.clock
    b0 = clock()
    steps, y = [], session.first
    for _ in range(session.tokens):
        y = session.step(y)
        steps.append(y)
    build_seconds = clock() - b0
    start = clock()
    out: list[int] = []
    if steps:
        session.async_eval(steps[0])
    for i, y in enumerate(steps):
        if i + 1 < len(steps):
            session.async_eval(steps[i + 1])
        out.append(session.read(y))
    session.synchronize()
    return ArmRun(out, clock() - start, build_seconds)


def serial(session: Session) -> ArmRun:
    """Build one step, evaluate it fully, read it, then build the next: no pipelining."""
    clock = session.clock
    built = 0.0
    out: list[int] = []
    start = clock()
    y = session.first
    for _ in range(session.tokens):
        b0 = clock()
        y = session.step(y)
        built += clock() - b0
        out.append(session.read(y))
    session.synchronize()
    return ArmRun(out, clock() - start, built)


def make_arm(name: str, *, spin_work_ms: float, spin_at: str) -> Arm:
    """The arm function for a name: baseline, prebuilt, serial, spin, chain-<k>."""
    if name == "baseline":
        return pipelined
    if name == "prebuilt":
        return prebuilt
    if name == "serial":
        return serial
    if name == "spin":
        if spin_at not in SPIN_POINTS:
            raise ValueError(f"`spin_at` must be one of {list(SPIN_POINTS)}, got {spin_at!r}")
        return lambda session: pipelined(session, spin_ms=spin_work_ms, spin_at=spin_at)
    match = _CHAIN.match(name)
    if match and int(match.group(1)) >= 1:
        depth = int(match.group(1))
        return lambda session: pipelined(session, depth=depth)
    raise ValueError(f"unknown decode arm {name!r}; expected baseline, prebuilt, serial, spin or chain-<k>")


def padded(arm: Arm, pad_ms: float) -> Arm:
    """``arm`` with ``pad_ms`` of host busy-work inside its timed pass, before its first step is issued.

    Nothing is in flight on the device then, so nothing can absorb the work: the pass takes
    ``pad_ms`` longer. A positive control: an arm made slower on purpose must be told apart.
    """

    def run(session: Session) -> ArmRun:
        start = session.clock()
        spin(pad_ms, session.clock)
        padding = session.clock() - start
        result = arm(session)
        return ArmRun(result.tokens, result.seconds + padding, result.build_seconds)

    return run


def repeated(arm: Arm, passes: int, fresh: Callable[[], Session]) -> Arm:
    """``arm`` run ``passes`` times per round, each pass on a fresh session, their timed seconds summed.

    A positive control whose cost scales with the arm's own: a fixed pad adds the same seconds to
    every round, so as the machine's speed drifts the per-round ratio drifts with it and its rounds
    depend on each other; a second pass slows with the machine exactly as the reference arm does,
    so the ratio holds near ``passes``. Only the first pass's tokens are compared with the others'.
    """
    if passes < 1:
        raise ValueError(f"`pad_passes` must be at least 1, got {passes}")

    def run(session: Session) -> ArmRun:
        first = arm(session)
        seconds, build = first.seconds, first.build_seconds
        for _ in range(passes - 1):
            again = arm(fresh())
            seconds, build = seconds + again.seconds, build + again.build_seconds
        return ArmRun(first.tokens, seconds, build)

    return run


def output_name(arm: str) -> str:
    """``chain-2`` -> ``chain2``: output names are identifiers."""
    return arm.replace("-", "")


@dataclass
class ArmComparison:
    """Per-pass results of interleaved arms; index ``i`` of every list is round ``i``."""

    seconds: Interleaved
    build_seconds: dict[str, list[float]] = field(default_factory=dict)
    tokens: list[int] = field(default_factory=list)


def compare_arms(arms: Mapping[str, Arm], new_session: Callable[[], Session], rounds: int, *, warmup: int = 1) -> ArmComparison:
    """Run every arm once per round in ABBA order; all arms must reproduce the reference tokens.

    The reference is the first arm's warm-up pass (the baseline, when listed
    first). Warm-up passes run every arm untimed on the exact shapes timed.
    """
    reference: list[int] | None = None

    def checked(name: str, run: ArmRun) -> ArmRun:
        nonlocal reference
        if reference is None:
            reference = run.tokens
        elif run.tokens != reference:
            at = next((i for i, (a, b) in enumerate(zip(run.tokens, reference)) if a != b), min(len(run.tokens), len(reference)))
            raise ProbeError(
                f"decode arm `{name}` produced different tokens from `{next(iter(arms))}` "
                f"(first difference at step {at}: {run.tokens[at:at + 1]} vs {reference[at:at + 1]})"
            )
        return run

    for _ in range(warmup):
        for name, arm in arms.items():
            checked(name, arm(new_session()))
    result = ArmComparison(seconds=Interleaved(samples={name: [] for name in arms}), build_seconds={name: [] for name in arms})
    for round_arms in interleaved_order(list(arms), rounds):
        for name in round_arms:
            run = checked(name, arms[name](new_session()))
            result.seconds.samples[name].append(run.seconds)
            result.seconds.order.append(name)
            result.build_seconds[name].append(run.build_seconds)
    result.tokens = list(reference or [])
    return result
