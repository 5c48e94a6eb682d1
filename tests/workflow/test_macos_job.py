"""The macOS job without a Mac: a hosted runner's paravirtual GPU faked at the OS and MLX boundary.

``sys.platform``, the CPU arch, ``sysctl`` and ``mlx.core`` are replaced as in
``tests/test_machine_metal.py``; the fingerprint, the machine class, the scope check and the
Metal sanity step's decision are the real code. Where the step needs the GPU's numbers, the GPU
run is replaced by a result (agreeing, or the zeros a broken kernel returns) while the CPU run is real.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import types
from pathlib import Path

import pytest

from claimcheck import machine
from claimcheck.claims.loader import load_claims
from claimcheck.engine.runner import scope_problem
from claimcheck.workflow import metal_sanity
from claimcheck.workflow.metal_sanity import DeviceRun

from ._pr import clean_env

ROOT = Path(__file__).resolve().parents[2]
#: What GitHub's macos-14 runner reports: MLX's device_info there, and the VM's sysctl answers.
PARAVIRTUAL = {"device_name": "Apple Paravirtual device", "memory_size": 7516192768, "architecture": "air64_v26"}
RUNNER_SYSCTL = {"machdep.cpu.brand_string": "Apple M1 (Virtual)", "hw.memsize": str(7 * 2**30),
                 "kern.hv_vmm_present": "1"}


def _fake_mac(monkeypatch: pytest.MonkeyPatch, sysctl: dict[str, str], gpu_info: dict, *, on_cpu: bool = False) -> list:
    """This process as an Apple silicon Mac whose MLX reports ``gpu_info``; returns the devices set as default."""
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(platform, "machine", lambda: "arm64")
    monkeypatch.setattr(machine, "_sysctl", lambda name: sysctl.get(name, ""))
    monkeypatch.delenv(machine.BACKEND_ENV, raising=False)
    cpu, gpu = types.SimpleNamespace(type="cpu"), types.SimpleNamespace(type="gpu")
    state = {"default": cpu if on_cpu else gpu}
    chosen: list = []

    def set_default_device(device: object) -> None:
        chosen.append(device)
        state["default"] = device

    core = types.ModuleType("mlx.core")
    core.DeviceType = types.SimpleNamespace(cpu="cpu", gpu="gpu")
    core.cpu, core.gpu = cpu, gpu
    core.default_device = lambda: state["default"]
    core.set_default_device = set_default_device
    core.metal = types.SimpleNamespace(is_available=lambda: True)
    core.device_info = lambda d=None: dict(gpu_info) if (d or state["default"]) is gpu else {"device_name": "Apple M1"}
    package = types.ModuleType("mlx")
    package.core = core
    monkeypatch.setitem(sys.modules, "mlx", package)
    monkeypatch.setitem(sys.modules, "mlx.core", core)
    machine._compute_fingerprint.cache_clear()
    return chosen


@pytest.fixture(autouse=True)
def _fresh_fingerprint():
    machine._compute_fingerprint.cache_clear()
    yield
    machine._compute_fingerprint.cache_clear()


def _m1_max_claims() -> list:
    return [c for c in load_claims([ROOT / "claims"]) if c.scope.kind == "as-stated"
            and (c.scope.device or "").startswith("Apple M1 Max")]


def _params(claim) -> dict:
    return {**claim.probe.params, **{k: v[0] for k, v in claim.probe.grid.items() if v}}


def test_the_hosted_runner_is_a_paravirtual_class_of_its_own(monkeypatch) -> None:
    monkeypatch.delenv(machine.DEVICE_ENV, raising=False)
    _fake_mac(monkeypatch, RUNNER_SYSCTL, PARAVIRTUAL)
    fp = machine.fingerprint()
    assert (fp["backend"], fp["device"], fp["virtual"]) == ("metal", "Apple Paravirtual device", True)
    assert machine.machine_class(fp) == "metal/Apple Paravirtual device/<8GiB"
    assert machine.detect_backend() == "metal", "the metal profile, as on any Apple silicon"
    claims = _m1_max_claims()
    assert claims and all(scope_problem(c, _params(c), fp) is not None for c in claims), "as stated = a real M1 Max"


def test_a_real_m1_max_is_not_virtual(monkeypatch) -> None:
    monkeypatch.delenv(machine.DEVICE_ENV, raising=False)
    sysctl = {"machdep.cpu.brand_string": "Apple M1 Max", "hw.memsize": str(64 * 2**30), "kern.hv_vmm_present": "0"}
    _fake_mac(monkeypatch, sysctl, {"device_name": "Apple M1 Max", "memory_size": 64 * 2**30})
    fp = machine.fingerprint()
    assert fp["virtual"] is False and machine.machine_class(fp) == "metal/Apple M1 Max/64-128GiB"
    assert all(scope_problem(c, _params(c), fp) is None for c in _m1_max_claims())


def test_the_device_variable_moves_the_run_to_the_cpu_and_the_fingerprint_says_so(monkeypatch) -> None:
    monkeypatch.setenv(machine.DEVICE_ENV, "cpu")
    chosen = _fake_mac(monkeypatch, {**RUNNER_SYSCTL, "machdep.cpu.brand_string": "Apple M1"}, PARAVIRTUAL)
    fp = machine.fingerprint()
    core = sys.modules["mlx.core"]
    assert chosen == [core.cpu], "MLX's default device was set to the CPU"
    assert (fp["backend"], fp["device_override"], fp["gpu"]) == ("cpu", "cpu", "Apple Paravirtual device")
    assert machine.machine_class(fp) == "cpu/Apple M1 (virtual)/<8GiB", "still marked as the virtual machine"
    assert machine.detect_backend() == "cpu", "the cpu profile sizes the claims"


def test_a_wrong_device_value_is_one_line(monkeypatch) -> None:
    monkeypatch.setenv(machine.DEVICE_ENV, "tpu")
    with pytest.raises(ValueError, match=r"^CLAIMCHECK_DEVICE='tpu' is not a device; expected one of cpu, gpu$"):
        machine.detect_backend()


def test_the_plugin_sets_the_device_for_the_run_and_the_store_records_it(demo_project: pytest.Pytester,
                                                                         monkeypatch) -> None:
    from claimcheck.store import EvidenceStore

    (demo_project.path / "claims" / "one.yaml").write_text(
        "id: one\ntitle: t\nstatement: s\nsource: {doc: d.md, section: '1', figure: '1'}\n"
        "scope: {kind: portable, backend: any}\nprobe: {name: constant, params: {value: 1.0}}\n"
        "check: {rule: exact, output: value, expected: 1.0, tolerance: 0.1}\n")
    monkeypatch.setenv(machine.DEVICE_ENV, "cpu")
    assert demo_project.runpytest_subprocess("claims", "-p", "no:randomly").ret == 0
    with EvidenceStore(demo_project.path / "reports" / "claimcheck.sqlite", readonly=True) as store:
        run = store.latest_run()
    assert run is not None and run.machine["device_override"] == "cpu"

    monkeypatch.setenv(machine.DEVICE_ENV, "tpu")
    bad = demo_project.runpytest_subprocess("claims", "-p", "no:randomly")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["ERROR: CLAIMCHECK_DEVICE='tpu' is not a device; expected one of cpu, gpu"])
    assert "Traceback" not in bad.stderr.str()


@pytest.fixture(scope="module")
def cpu_run() -> DeviceRun:
    """The real ops on this machine's CPU device, as the step's CPU half computes them (no generation)."""
    return metal_sanity.run_device("cpu", model="smollm2-135m-instruct", tokens=0, timeout_s=300)


def _step(monkeypatch, tmp_path: Path, gpu: DeviceRun, cpu: DeviceRun) -> tuple[int, str, str]:
    """Run the step's main with the GPU half replaced; returns (exit, summary, $GITHUB_ENV)."""
    summary, env = tmp_path / "summary.md", tmp_path / "env"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ENV", str(env))
    monkeypatch.delenv(machine.DEVICE_ENV, raising=False)
    monkeypatch.setattr(metal_sanity, "run_device", lambda device, **_: gpu if device == "gpu" else cpu)
    status = metal_sanity.main(["--tokens", "0"])
    return status, summary.read_text(encoding="utf-8"), env.read_text(encoding="utf-8") if env.exists() else ""


def test_a_gpu_returning_zeros_sends_the_job_to_the_cpu(cpu_run, monkeypatch, tmp_path, capsys) -> None:
    assert cpu_run.error == "" and set(cpu_run.ops) == {"matmul", "quantized_matmul", "gather_qmm"}
    zeros = DeviceRun("Device(gpu, 0)", ops={name: [0.0] * len(v) for name, v in cpu_run.ops.items()})
    status, summary, env = _step(monkeypatch, tmp_path, zeros, cpu_run)
    assert status == 0 and env == "CLAIMCHECK_DEVICE=cpu\n"
    assert "disagrees with its CPU device on matmul, quantized_matmul, gather_qmm" in summary
    assert "runs on the CPU device" in summary
    assert "::warning title=claimcheck metal sanity::" in capsys.readouterr().out


def test_a_gpu_agreeing_with_the_cpu_keeps_the_gpu(cpu_run, monkeypatch, tmp_path) -> None:
    # A working GPU differs from the CPU by rounding: perturb every value by one part in 10^6.
    close = DeviceRun("Device(gpu, 0)", ops={name: [x * (1 + 1e-6) for x in v] for name, v in cpu_run.ops.items()})
    status, summary, env = _step(monkeypatch, tmp_path, close, cpu_run)
    assert status == 0 and env == ""
    assert "agrees with its CPU device on every op" in summary


def test_one_wrong_op_or_a_crash_is_enough(cpu_run, monkeypatch, tmp_path) -> None:
    ops = dict(cpu_run.ops)
    ops["gather_qmm"] = [x + 0.1 * max(map(abs, ops["gather_qmm"])) for x in ops["gather_qmm"]]
    status, summary, env = _step(monkeypatch, tmp_path, DeviceRun("Device(gpu, 0)", ops=ops), cpu_run)
    assert (status, env) == (0, "CLAIMCHECK_DEVICE=cpu\n") and "on gather_qmm:" in summary
    crashed = DeviceRun("gpu", error="the process died (SIGSEGV)")
    (tmp_path / "again").mkdir()
    status, summary, env = _step(monkeypatch, tmp_path / "again", crashed, cpu_run)
    assert (status, env) == (0, "CLAIMCHECK_DEVICE=cpu\n") and "The GPU run failed" in summary


def test_greedy_tokens_that_differ_disagree() -> None:
    cpu = DeviceRun("cpu", tokens=[1, 2, 3])
    (same,) = metal_sanity.compare(cpu, DeviceRun("gpu", tokens=[1, 2, 3]))
    (other,) = metal_sanity.compare(cpu, DeviceRun("gpu", tokens=[1, 2, 4]))
    assert same.agrees and not other.agrees and "from position 2" in other.detail


def test_the_step_on_a_machine_without_a_gpu_leaves_the_device_alone(tmp_path) -> None:
    summary, env_file = tmp_path / "summary.md", tmp_path / "env"
    env = {**clean_env(), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ENV": str(env_file)}
    done = subprocess.run([sys.executable, "-m", "claimcheck.workflow.metal_sanity"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "no GPU device here: the claims run on the CPU device" in summary.read_text(encoding="utf-8")
    assert not env_file.exists()


@pytest.mark.slow
def test_the_cpu_half_generates_greedy_tokens_on_the_embedded_model(tmp_path) -> None:
    env = {**clean_env(), machine.DEVICE_ENV: "cpu"}
    runs = []
    for k in range(2):
        out = tmp_path / f"cpu-{k}.json"
        done = subprocess.run([sys.executable, "-m", "claimcheck.workflow.sanity_ops", "--out", str(out), "--tokens", "8"],
                              env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(out.read_text(encoding="utf-8")))
    assert all(len(r["tokens"]) == 8 and r["device"].startswith("Device(cpu") for r in runs)
    assert runs[0]["tokens"] == runs[1]["tokens"], "greedy generation is deterministic on one device"
