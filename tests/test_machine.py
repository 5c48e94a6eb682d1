"""Machine fingerprint and machine class."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata

import pytest

from claimcheck import machine


def test_importing_machine_does_not_import_mlx():
    code = "import sys, claimcheck.machine\nassert 'mlx' not in sys.modules and 'mlx.core' not in sys.modules\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr


def test_fingerprint_fields():
    fp = machine.fingerprint()
    assert fp["backend"] in ("cpu", "metal", "cuda")
    assert fp["device"] and fp["cpu"]
    assert isinstance(fp["cores"], int) and fp["cores"] >= 1
    assert 1 <= fp["cores_available"] <= fp["cores"]
    assert fp["memory_gib"] > 0
    assert fp["python"] == ".".join(map(str, sys.version_info[:3]))
    assert fp["mlx"] == metadata.version("mlx")
    assert fp["mlx_lm"] == metadata.version("mlx-lm")
    assert fp["os"]
    assert fp["blas_kind"] in ("openblas", "blis", "mkl", "flexiblas", "atlas", "accelerate", "reference", "unknown")
    assert fp["blas"].startswith(fp["blas_kind"])


def test_fingerprint_matches_this_process():
    import mlx.core as mx

    fp = machine.fingerprint()
    expected = "cpu" if mx.default_device().type == mx.DeviceType.cpu else ("metal" if mx.metal.is_available() else "cuda")
    assert fp["backend"] == expected
    if sys.platform.startswith("linux"):
        from claimcheck.harness.blas import blas_in_use, classify

        assert fp["blas_kind"] == classify(blas_in_use())


def test_fingerprint_is_computed_once_and_returned_as_a_copy():
    first = machine.fingerprint()
    first["backend"] = "changed"
    first["cpu_flags"].append("changed")
    second = machine.fingerprint()
    assert second["backend"] != "changed" and "changed" not in second["cpu_flags"]
    hits = machine._compute_fingerprint.cache_info().hits
    machine.fingerprint()
    assert machine._compute_fingerprint.cache_info().hits == hits + 1


@pytest.mark.parametrize(
    "name, backend, expected",
    [
        ("AMD EPYC 9R14 96-Core Processor", "cpu", "AMD EPYC 9xxx"),
        ("AMD EPYC 7763 64-Core Processor", "cpu", "AMD EPYC 7xxx"),
        ("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", "cpu", "Intel Xeon Platinum 8xxx"),
        ("AMD EPYC", "cpu", "AMD EPYC"),
        ("Apple M1 Max", "metal", "Apple M1 Max"),
        ("Apple M4 Pro", "cpu", "Apple M4 Pro"),
        ("NVIDIA H200", "cuda", "NVIDIA H200"),
    ],
)
def test_device_class_keeps_the_chip_family(name, backend, expected):
    assert machine.device_class(name, backend) == expected


@pytest.mark.parametrize("gib, band", [(3.8, "<8GiB"), (8.0, "8-16GiB"), (23.5, "16-32GiB"), (32.0, "32-64GiB"), (139.8, "128-256GiB")])
def test_memory_band_is_a_power_of_two_range(gib, band):
    assert machine.memory_band(gib) == band


def test_machine_class_format():
    fp = {"backend": "cpu", "device": "AMD EPYC 9R14 96-Core Processor", "memory_gib": 23.5}
    assert machine.machine_class(fp) == "cpu/AMD EPYC 9xxx/16-32GiB"
    gpu = {"backend": "cuda", "device": "NVIDIA H200", "memory_gib": 2000.0, "device_memory_gib": 139.8}
    assert machine.machine_class(gpu) == "cuda/NVIDIA H200/128-256GiB"  # discrete GPUs: device memory
    assert re.fullmatch(r"(cpu|metal|cuda)/[^/]+/(<8|\d+-\d+)GiB", machine.machine_class())


# --------------------------------------------------------------------------- detect_backend


def _installed(tmp_path, monkeypatch, *names: str) -> None:
    """Make ``importlib.metadata`` see exactly ``names`` as installed distributions (real dist-info folders)."""
    site = tmp_path / "site"
    for name in names:
        info = site / f"{name.replace('-', '_')}-0.32.4.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.32.4\n")
    site.mkdir(exist_ok=True)
    real = metadata.distributions
    monkeypatch.setattr(machine.metadata, "distributions", lambda **kwargs: real(path=[str(site)]))


def _host(monkeypatch, system: str, arch: str) -> None:
    monkeypatch.setattr(machine.sys, "platform", system)
    monkeypatch.setattr(machine.platform, "machine", lambda: arch)


@pytest.fixture
def no_override(monkeypatch):
    monkeypatch.delenv(machine.BACKEND_ENV, raising=False)


def test_apple_silicon_is_metal(tmp_path, monkeypatch, no_override):
    _installed(tmp_path, monkeypatch, "mlx", "mlx-metal")
    _host(monkeypatch, "darwin", "arm64")
    assert machine.detect_backend() == "metal"


def test_an_intel_mac_is_cpu(tmp_path, monkeypatch, no_override):
    _installed(tmp_path, monkeypatch, "mlx")
    _host(monkeypatch, "darwin", "x86_64")
    assert machine.detect_backend() == "cpu"


@pytest.mark.parametrize("cuda_build", ["mlx-cuda-13", "mlx-cuda-12", "mlx_cuda", "MLX-CUDA"])
def test_an_installed_cuda_build_means_cuda(tmp_path, monkeypatch, no_override, cuda_build):
    _installed(tmp_path, monkeypatch, "mlx", cuda_build, "mlx-lm")
    _host(monkeypatch, "linux", "x86_64")
    assert machine.detect_backend() == "cuda"


def test_linux_without_a_cuda_build_is_cpu(tmp_path, monkeypatch, no_override):
    _installed(tmp_path, monkeypatch, "mlx", "mlx-cpu", "mlx-lm", "cuda-python")
    _host(monkeypatch, "linux", "aarch64")
    assert machine.detect_backend() == "cpu"


@pytest.mark.parametrize("value, expected", [("cuda", "cuda"), (" CPU ", "cpu"), ("Metal", "metal")])
def test_the_environment_variable_overrides_the_guess(tmp_path, monkeypatch, value, expected):
    _installed(tmp_path, monkeypatch, "mlx-cuda-13")
    _host(monkeypatch, "darwin", "arm64")
    monkeypatch.setenv(machine.BACKEND_ENV, value)
    assert machine.detect_backend() == expected


def test_an_unknown_backend_in_the_environment_is_an_error(monkeypatch):
    monkeypatch.setenv(machine.BACKEND_ENV, "rocm")
    with pytest.raises(ValueError, match="CLAIMCHECK_BACKEND='rocm'.*metal, cuda, cpu"):
        machine.detect_backend()


def test_detecting_the_backend_does_not_import_mlx():
    code = (
        "import sys\nfrom claimcheck import machine\nmachine.detect_backend()\n"
        "assert not any(name == 'mlx' or name.startswith('mlx.') for name in sys.modules)\n"
    )
    environment = {key: value for key, value in os.environ.items() if key != machine.BACKEND_ENV}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=environment)
    assert result.returncode == 0, result.stderr


def test_the_detected_backend_is_the_one_mlx_uses_here(no_override):
    assert machine.detect_backend() == machine.fingerprint()["backend"]
