"""Progress of a long batched stage: k of n done and the time left, on an injected clock."""

from __future__ import annotations

import pytest

from claimcheck.probing.sampling.countdown import Countdown, time_left


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_countdown_says_how_many_are_done_and_the_time_left() -> None:
    clock, lines = FakeClock(), []
    countdown = Countdown("bisector trace", "branches", 441, lines.append, every=5.0, clock=clock)
    countdown.start()
    clock.now += 90.0
    countdown.advance_to(212)
    # 90 s for 212 branches: 229 left take ~97 s, ~2 min
    assert lines == ["bisector trace: 0/441 branches", "bisector trace: 212/441 branches, ~2 min left"]


def test_updates_are_throttled_but_the_last_unit_always_reports() -> None:
    clock, lines = FakeClock(), []
    countdown = Countdown("route hazard", "departures", 10, lines.append, every=5.0, clock=clock)
    countdown.start()
    for done in range(1, 10):
        clock.now += 1.0
        countdown.advance_to(done)
    clock.now += 1.0
    countdown.advance_to(10)
    assert [line.split(",")[0] for line in lines] == ["route hazard: 0/10 departures", "route hazard: 5/10 departures",
                                                     "route hazard: 10/10 departures"]
    assert lines[-1] == "route hazard: 10/10 departures, done in 10 s"


@pytest.mark.parametrize(("seconds", "text"), [(0.2, "~1 s"), (40, "~40 s"), (200, "~3 min"), (7200, "~2.0 h")])
def test_time_left_is_rounded_for_a_log_reader(seconds: float, text: str) -> None:
    assert time_left(seconds) == text


def test_generation_reports_each_finished_request() -> None:
    pytest.importorskip("mlx.core")
    from claimcheck.probing.sampling.generate import GenerationRequest, generate_batch
    from claimcheck.probing.sampling.policies import get_policy
    from tests.sampling.tiny import tiny_model

    greedy = get_policy("greedy")
    requests = [GenerationRequest(prompt=[5, 6, 7], policy=greedy, max_tokens=n) for n in (2, 4, 4, 7)]
    counts: list[int] = []
    generate_batch(tiny_model(), requests, stop_ids=(), batch_size=2, finished=counts.append)
    assert counts and counts[-1] == len(requests)
    assert counts == sorted(counts) and len(set(counts)) == len(counts)
