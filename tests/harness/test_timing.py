"""The measurement protocol: arithmetic, ABBA order, forced evaluation, the lazy-eval guard."""

from __future__ import annotations

import pytest

from claimcheck.errors import ProbeError
from claimcheck.harness import timing
from claimcheck.harness.timing import Timer, check_bandwidth, gbps, interleaved_order, spin


class FakeClock:
    """A clock that advances only when told to, so timings are exact."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_gbps_is_decimal_gigabytes_per_second():
    # 1 GiB in 0.5 s: 2**30 / 0.5 / 1e9 = 2.147483648 GB/s exactly.
    assert gbps(2**30, 0.5) == pytest.approx(2.147483648, rel=1e-12)
    # the doc's qmv row: 540 MiB in 2.12 ms; 540 * 2**20 / 2.12e-3 / 1e9 = 267.0901... (the doc rounds
    # its unrounded inputs to 268). Tolerance: half a unit in the 4th significant digit.
    assert gbps(540 * 2**20, 2.12e-3) == pytest.approx(267.09, abs=0.005)


@pytest.mark.parametrize("seconds", [0.0, -1.0])
def test_gbps_refuses_non_positive_time(seconds):
    with pytest.raises(ValueError, match="seconds"):
        gbps(1, seconds)


def test_abba_order_alternates_direction():
    assert interleaved_order(["a", "b"], 4) == [["a", "b"], ["b", "a"], ["a", "b"], ["b", "a"]]
    assert interleaved_order(["a", "b", "c"], 2) == [["a", "b", "c"], ["c", "b", "a"]]


def test_abba_order_balances_positions_over_round_pairs():
    # Under a linear drift every arm must sit at the same mean position.
    rounds = interleaved_order(["a", "b", "c", "d"], 6)
    positions = {arm: [r.index(arm) for r in rounds] for arm in "abcd"}
    means = {arm: sum(p) / len(p) for arm, p in positions.items()}
    assert len(set(means.values())) == 1


def test_abba_order_rejects_duplicate_arms():
    with pytest.raises(ValueError, match="distinct"):
        interleaved_order(["a", "a"], 2)


def test_timer_stops_the_clock_only_after_evaluation():
    clock = FakeClock()
    evaluated = []

    def evaluate(outputs):
        clock.advance(0.25)  # the work happens here, inside the timed window
        evaluated.append(outputs)

    def build():
        clock.advance(0.01)
        return ["y"]

    timer = Timer(clock=clock, evaluate=evaluate)
    assert timer.time(build) == pytest.approx(0.26)
    assert evaluated == [["y"]]
    assert timer.time_split(build) == (pytest.approx(0.01), pytest.approx(0.26))


def test_timer_refuses_a_build_that_returns_nothing():
    timer = Timer(clock=FakeClock(), evaluate=lambda outputs: None)
    with pytest.raises(ProbeError, match="outputs were not evaluated"):
        timer.time(lambda: None)


def test_sample_warms_up_then_keeps_every_sample():
    clock = FakeClock()
    durations = iter([5.0, 1.0, 2.0, 3.0])  # the first (warm-up) must not appear in the samples

    def build():
        clock.advance(next(durations))
        return "y"

    samples = Timer(clock=clock, evaluate=lambda outputs: None).sample(build, 3, warmup=1)
    assert samples == [1.0, 2.0, 3.0]


def test_interleave_records_order_and_pairs_rounds():
    clock = FakeClock()
    calls = []

    def arm(name, seconds):
        def build():
            calls.append(name)
            clock.advance(seconds)
            return name

        return build

    runs = Timer(clock=clock, evaluate=lambda outputs: None).interleave({"a": arm("a", 1.0), "b": arm("b", 3.0)}, 3, warmup=1)
    assert calls[:2] == ["a", "b"]  # warm-up, untimed
    assert runs.order == ["a", "b", "b", "a", "a", "b"]
    assert runs.samples == {"a": [1.0, 1.0, 1.0], "b": [3.0, 3.0, 3.0]}
    assert runs.paired_differences("b", "a") == [2.0, 2.0, 2.0]


def test_bandwidth_guard_passes_physical_figures_and_refuses_the_rest():
    check_bandwidth([10.0, 19.9], 20.0, what="qmv")
    with pytest.raises(ProbeError, match=r"outputs were not evaluated: qmv reported 4\.4e\+03 GB/s"):
        check_bandwidth([10.0, 4400.0], 337.0, what="qmv")


def test_bandwidth_guard_slack_is_a_factor_on_the_ceiling():
    check_bandwidth([21.0], 20.0, what="x", slack=1.1)
    with pytest.raises(ProbeError):
        check_bandwidth([23.0], 20.0, what="x", slack=1.1)


def test_spin_busy_waits_for_the_requested_time():
    clock = FakeClock()
    ticks = []

    def ticking():
        ticks.append(clock.now)
        clock.advance(0.0005)
        return clock.now

    spin(2.0, ticking)
    assert clock.now - 100.0 == pytest.approx(0.0025, abs=0.0006)  # 2 ms, overshoot < one 0.5 ms tick


def test_reuse_builds_once_and_keeps_a_bounded_number():
    timing.forget_reused()
    built = []
    for key in ["a", "a", "b"]:
        timing.reuse(key, lambda k=key: built.append(k) or k)
    assert built == ["a", "b"]
    for i in range(timing.REUSE_KEEP + 1):
        timing.reuse(("n", i), lambda: i)
    assert "a" not in timing._REUSED
    timing.forget_reused()


def test_mlx_protocol_really_evaluates():
    # A lazy MLX sum timed under the protocol must come back computed.
    mx = timing.mlx_core()
    data = mx.ones((1024,))
    result = []

    def build():
        result.append(data.sum())
        return result[-1]

    Timer().time(build)
    assert result[0].item() == 1024.0


def test_read_ceiling_is_positive_and_cached():
    first = timing.read_ceiling_gbps(16)
    assert first > 0
    assert timing.read_ceiling_gbps(16) == first
