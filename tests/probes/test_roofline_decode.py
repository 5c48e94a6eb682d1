"""Decode-loop arms: loop shapes on a fake model, ABBA order, the identical-tokens rule, and smoke runs."""

from __future__ import annotations

import pytest

from claimcheck.errors import ProbeError
from claimcheck.probing.registry import ProbeContext
from probes.decode.decode_loop import decode_arms, roofline
from probes.decode.decode_schedules import ArmRun, Session, compare_arms, make_arm, pipelined, prebuilt, serial


class FakeDevice:
    """A fake model whose step n -> n + 1; records what was in flight whenever a token is read."""

    def __init__(self, tokens: int = 6) -> None:
        self.tokens = tokens
        self.inflight: set[int] = set()
        self.events: list[str] = []
        self.inflight_at_read: list[int] = []
        self.now = 0.0

    def session(self) -> Session:
        def step(token):
            self.events.append(f"build {token + 1}")
            self.now += 1.0
            return token + 1

        def async_eval(token):
            self.inflight.add(token)

        def read(token):
            self.inflight_at_read.append(len(self.inflight | {token}))
            self.inflight.discard(token)
            self.events.append(f"read {token}")
            return token

        return Session(step=step, first=0, tokens=self.tokens, async_eval=async_eval, read=read, clock=lambda: self.now)


def test_baseline_builds_the_next_step_before_reading_the_current_one():
    device = FakeDevice(tokens=3)
    run = pipelined(device.session())
    assert run.tokens == [1, 2, 3]
    assert device.events == ["build 1", "build 2", "read 1", "build 3", "read 2", "read 3"]
    assert run.build_seconds == 3.0  # the fake clock advances 1 s per build


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_chain_k_keeps_k_plus_one_steps_in_flight_at_each_read(depth):
    device = FakeDevice(tokens=8)
    run = make_arm(f"chain-{depth}", spin_work_ms=0, spin_at="build")(device.session())
    assert run.tokens == list(range(1, 9))
    assert max(device.inflight_at_read) == depth + 1


def test_serial_reads_each_step_before_building_the_next():
    device = FakeDevice(tokens=3)
    assert serial(device.session()).tokens == [1, 2, 3]
    assert device.events == ["build 1", "read 1", "build 2", "read 2", "build 3", "read 3"]


def test_prebuilt_builds_everything_before_the_timed_loop():
    device = FakeDevice(tokens=3)
    run = prebuilt(device.session())
    assert device.events == ["build 1", "build 2", "build 3", "read 1", "read 2", "read 3"]
    assert run.seconds == 0.0  # building advanced the fake clock, but only before the timed window
    assert run.build_seconds == 3.0


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ("build", ["spin", "build 1", "spin", "build 2", "read 1", "read 2"]),
        ("pre", ["build 1", "build 2", "spin", "read 1", "spin", "read 2"]),
        ("post", ["build 1", "build 2", "read 1", "spin", "read 2", "spin"]),
    ],
)
def test_spin_goes_where_it_is_asked(monkeypatch, point, expected):
    device = FakeDevice(tokens=2)
    # Patched in the functions' own globals: the module object in sys.modules may be a later import of the file.
    monkeypatch.setitem(pipelined.__globals__, "spin", lambda ms, clock: device.events.append("spin"))
    make_arm("spin", spin_work_ms=1.0, spin_at=point)(device.session())
    assert device.events == expected


def test_arms_run_in_abba_order_after_a_warm_up_of_each():
    device = FakeDevice(tokens=2)
    calls: list[str] = []

    def arm(name):
        def run(session):
            calls.append(name)
            return pipelined(session)

        return run

    result = compare_arms({"baseline": arm("baseline"), "prebuilt": arm("prebuilt"), "serial": arm("serial")}, device.session, 2)
    assert calls[:3] == ["baseline", "prebuilt", "serial"]  # warm-up
    assert result.seconds.order == ["baseline", "prebuilt", "serial", "serial", "prebuilt", "baseline"]
    assert calls[3:] == result.seconds.order
    assert result.tokens == [1, 2]
    assert all(len(v) == 2 for v in result.seconds.samples.values())


def test_an_arm_that_diverges_is_a_probe_error():
    device = FakeDevice(tokens=4)

    def diverging(session):
        run = pipelined(session)
        return ArmRun(run.tokens[:2] + [99, 100], run.seconds)

    with pytest.raises(ProbeError, match=r"`wrong` produced different tokens from `baseline` \(first difference at step 2"):
        compare_arms({"baseline": pipelined, "wrong": diverging}, device.session, 2)


def test_unknown_arm_names_are_refused():
    with pytest.raises(ValueError, match="unknown decode arm"):
        make_arm("chain-x", spin_work_ms=0, spin_at="build")
    with pytest.raises(ValueError, match="spin_at"):
        make_arm("spin", spin_work_ms=1, spin_at="during")


def test_decode_arms_smoke_on_a_tiny_synthetic_model():
    ctx = ProbeContext(n=2)
    arms = ["baseline", "prebuilt", "serial", "spin", "chain-2", "chain-3"]
    out = decode_arms(ctx, model="synthetic:llama:tiny", variant="fp32", arms=arms, tokens=4, context=8, spin_work_ms=0.5)
    for arm in ("baseline", "prebuilt", "serial", "spin", "chain2", "chain3"):
        assert len(out[f"{arm}_ms"]) == 2
    for i in range(2):
        assert out["prebuilt_minus_baseline_ms"][i] == pytest.approx(out["prebuilt_ms"][i] - out["baseline_ms"][i])
        assert out["serial_excess_ms"][i] == pytest.approx(out["serial_minus_baseline_ms"][i] - out["build_ms"][i])
        assert out["spin_cost_frac"][i] == pytest.approx(out["spin_minus_baseline_ms"][i] / 0.5)
        assert out["spin_bound_ms"][i] == pytest.approx(out["baseline_ms"][i] + 0.5 * 0.5)  # spin_bound 0.5 of 0.5 ms
        assert out["baseline_plus_build_ms"][i] == pytest.approx(out["baseline_ms"][i] + out["build_ms"][i])
    assert len(ctx.artifacts["tokens"]) == 4
    assert ctx.info["model"] == "synthetic:llama:tiny"


def test_roofline_smoke_on_a_tiny_synthetic_model():
    ctx = ProbeContext(n=2)
    out = roofline(ctx, model="synthetic:llama:tiny", variant="fp32", tokens=4, context=8, raw_mib=8)
    for i in range(2):
        assert out["pct_of_roofline"][i] == pytest.approx(out["floor_ms"][i] / out["ms_per_token"][i] * 100)
        assert out["floor_ms"][i] == pytest.approx(ctx.info["bytes_per_token"] / max(out["raw_gbps"]) / 1e6)
    # fp32 tiny llama: weights 4 * 401,920 B (see the weight_bytes test) + KV at 8 + 4/2 positions, fp32.
    assert ctx.info["kv_bytes"] == 4 * 2 * 2 * 32 * 4 * 10
