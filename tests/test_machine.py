"""Machine fingerprint and machine class."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata

import pytest

from claimcheck import machine


def test_importing_machine_does_not_import_mlx():
    code = "import sys, claimcheck.machine\nassert 'mlx' not in sys.modules and 'mlx.core' not in sys.modules\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
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
