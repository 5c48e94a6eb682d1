"""The Metal path without a Mac: an M1 Max faked at the OS and MLX boundary reads as one, and its claims apply.

Every Apple-specific answer the code asks for (``sys.platform``, the CPU arch, ``sysctl``, and
MLX's device) is replaced; everything after that boundary is the real code.
"""

from __future__ import annotations

import platform
import sys
import types
from pathlib import Path

import pytest

from claimcheck import machine
from claimcheck.claims.loader import load_claims
from claimcheck.engine.runner import scope_problem

ROOT = Path(__file__).resolve().parents[1]
SYSCTL = {"machdep.cpu.brand_string": "Apple M1 Max", "hw.memsize": str(64 * 2**30)}


@pytest.fixture
def m1_max(monkeypatch: pytest.MonkeyPatch) -> dict:
    """This process as a 64 GiB M1 Max running MLX on Metal; yields its fingerprint."""
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(platform, "machine", lambda: "arm64")
    monkeypatch.setattr(machine, "_sysctl", lambda name: SYSCTL.get(name, ""))
    monkeypatch.delenv(machine.BACKEND_ENV, raising=False)

    core = types.ModuleType("mlx.core")
    gpu = types.SimpleNamespace(type="gpu")
    core.DeviceType = types.SimpleNamespace(cpu="cpu", gpu="gpu")
    core.default_device = lambda: gpu
    core.metal = types.SimpleNamespace(is_available=lambda: True)
    core.device_info = lambda: {"device_name": "Apple M1 Max", "memory_size": 64 * 2**30}
    package = types.ModuleType("mlx")
    package.core = core
    monkeypatch.setitem(sys.modules, "mlx", package)
    monkeypatch.setitem(sys.modules, "mlx.core", core)
    machine._compute_fingerprint.cache_clear()
    yield machine.fingerprint()
    machine._compute_fingerprint.cache_clear()


def test_the_fingerprint_reads_an_m1_max_on_metal(m1_max) -> None:
    assert machine.detect_backend() == "metal"
    assert (m1_max["backend"], m1_max["device"], m1_max["cpu"]) == ("metal", "Apple M1 Max", "Apple M1 Max")
    assert m1_max["memory_gib"] == 64.0 and m1_max["blas_kind"] == "accelerate"
    assert machine.machine_class(m1_max) == "metal/Apple M1 Max/64-128GiB"


def test_the_as_stated_m1_max_claims_are_in_scope_there_and_only_there(m1_max) -> None:
    claims = [c for c in load_claims([ROOT / "claims"]) if c.scope.kind == "as-stated"
              and (c.scope.device or "").startswith("Apple M1 Max")]
    assert len(claims) >= 5, "the suite states claims for the M1 Max"
    cpu = {"backend": "cpu", "device": "AMD EPYC 9R14 96-Core Processor", "memory_gib": 24.0}
    for claim in claims:
        params = {**claim.probe.params, **{k: v[0] for k, v in claim.probe.grid.items() if v}}
        assert scope_problem(claim, params, m1_max) is None, claim.id
        assert scope_problem(claim, params, cpu) is not None, claim.id


def test_the_metal_profile_is_chosen_without_importing_mlx(m1_max, monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "mlx.core")
    assert machine.detect_backend() == "metal"
    assert "mlx.core" not in sys.modules
