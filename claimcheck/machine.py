"""Machine fingerprint (what a result was measured on) and machine class (which results are comparable).

The fingerprint records every fact that can move a measurement: backend, chip, cores, memory, OS,
Python and library versions (MLX and its backend build, mlx-lm, numpy, scipy, claimcheck), and the
BLAS MLX's CPU GEMMs go through. The machine class is the coarse
part of it that decides whether two results may be compared or a cached result reused: backend, chip
family and memory band, so that two 24 GiB EPYC boxes share a class while a laptop does not.

MLX is imported only inside :func:`fingerprint`, after :func:`claimcheck.harness.blas.ensure_fast_blas`
so that computing a fingerprint never locks MLX onto the slow reference BLAS. :func:`detect_backend`
names the backend without importing MLX at all, for code that runs while claims are collected.
"""

from __future__ import annotations

import functools
import math
import os
import platform
import re
import subprocess
import sys
from importlib import metadata
from typing import Any


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "absent"


#: Backends MLX can run on, as :func:`detect_backend` and the fingerprint name them.
BACKENDS = ("metal", "cuda", "cpu")
#: Environment variable that names the backend outright (e.g. when the guess below is wrong).
BACKEND_ENV = "CLAIMCHECK_BACKEND"
#: Environment variable that sets MLX's default device for a run, ``cpu`` or ``gpu`` (CI sets ``cpu`` on a
#: machine whose GPU results disagree with the CPU's). It is part of the fingerprint.
DEVICE_ENV = "CLAIMCHECK_DEVICE"
DEVICES = ("cpu", "gpu")
#: What a virtual machine's GPU calls itself (GitHub's hosted macOS runners report "Apple Paravirtual device").
PARAVIRTUAL = "paravirtual"


def requested_device() -> str | None:
    """The device :data:`DEVICE_ENV` asks for, or ``None`` when it is unset.

    Raises:
        ValueError: it names something other than one of :data:`DEVICES`.
    """
    value = os.environ.get(DEVICE_ENV, "").strip().lower()
    if not value:
        return None
    if value not in DEVICES:
        raise ValueError(f"{DEVICE_ENV}={value!r} is not a device; expected one of {', '.join(DEVICES)}")
    return value


def apply_device() -> str | None:
    """Make :data:`DEVICE_ENV`'s device MLX's default; returns it (``None``: unset, MLX not imported).

    Call it before anything creates MLX streams (mlx-lm makes its generation stream on import), i.e.
    when a run starts; the fingerprint calls it too, so what it records is what the run used.
    """
    wanted = requested_device()
    if wanted is None:
        return None
    import mlx.core as mx

    try:
        mx.set_default_device(mx.cpu if wanted == "cpu" else mx.gpu)
    except ValueError as error:  # a GPU asked for where MLX has none
        raise ValueError(f"{DEVICE_ENV}={wanted}: {' '.join(str(error).split())}") from None
    return wanted


def detect_backend() -> str:
    """The backend MLX will use here, ``"metal"``, ``"cuda"`` or ``"cpu"``, judged without importing MLX.

    Collecting claims must never import MLX (it is slow, and must not happen before the BLAS is
    chosen), so this reads what is installed instead: Apple silicon means Metal; an installed
    distribution of MLX's CUDA build (``mlx-cuda-13``, ``mlx-cuda-12``, ``mlx_cuda``, ...) means CUDA;
    anything else the CPU. :data:`BACKEND_ENV` overrides the guess, and :data:`DEVICE_ENV` ``=cpu`` means the CPU. The distributions are scanned on
    every call, so call it once rather than per claim.

    Raises:
        ValueError: :data:`BACKEND_ENV` is set to something other than one of :data:`BACKENDS`.
    """
    override = os.environ.get(BACKEND_ENV, "").strip().lower()
    if override:
        if override not in BACKENDS:
            raise ValueError(f"{BACKEND_ENV}={override!r} is not a backend; expected one of {', '.join(BACKENDS)}")
        return override
    if requested_device() == "cpu":
        return "cpu"
    if sys.platform == "darwin" and platform.machine() == "arm64":
        return "metal"
    if _cuda_build_installed():
        return "cuda"
    return "cpu"


def _cuda_build_installed() -> bool:
    """Whether a distribution of MLX's CUDA backend is installed (names compared as pip normalises them)."""
    for distribution in metadata.distributions():
        facts = distribution.metadata  # None or without a name for a broken installation
        if facts is not None and "Name" in facts and re.sub(r"[-_.]+", "-", facts["Name"].lower()).startswith("mlx-cuda"):
            return True
    return False


def _backend_build() -> str | None:
    """``mlx-cuda-13 0.32.4``: the installed build of MLX's CUDA backend, ``None`` without one."""
    for distribution in metadata.distributions():
        facts = distribution.metadata
        if facts is not None and "Name" in facts and re.sub(r"[-_.]+", "-", facts["Name"].lower()).startswith("mlx-cuda"):
            return f"{facts['Name']} {distribution.version}"
    return None


def _sysctl(name: str) -> str:
    try:
        return subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def cpu_model() -> str:
    """The CPU's marketing name (``/proc/cpuinfo`` on Linux, ``sysctl`` on macOS)."""
    if sys.platform == "darwin":
        return _sysctl("machdep.cpu.brand_string") or platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware", "cpu model") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _cpu_flags() -> list[str]:
    """SIMD features that change CPU kernel speed (x86 only; empty elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    flags = set(line.partition(":")[2].split())
                    wanted = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile", "f16c")
                    return [flag for flag in wanted if flag in flags]
    except OSError:
        pass
    return []


def memory_gib() -> float:
    """Memory this process can use: physical RAM, capped by a cgroup limit where one is set."""
    total = 0.0
    if sys.platform == "darwin":
        raw = _sysctl("hw.memsize")
        total = int(raw) / 2**30 if raw.isdigit() else 0.0
    else:
        try:
            with open("/proc/meminfo", encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith("MemTotal:"):
                        total = int(line.split()[1]) / 2**20
                        break
        except OSError:
            pass
        for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
            try:
                with open(limit_file, encoding="utf-8") as handle:
                    raw = handle.read().strip()
            except OSError:
                continue
            if raw.isdigit() and 0 < int(raw) / 2**30 < (total or math.inf):
                total = int(raw) / 2**30
            break
    return round(total, 1)


def _cores_available() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@functools.cache
def _compute_fingerprint() -> dict[str, Any]:
    from claimcheck.harness.blas import ensure_fast_blas

    blas = ensure_fast_blas()
    import mlx.core as mx

    override = apply_device()
    device = mx.default_device()
    if device.type == mx.DeviceType.cpu:
        backend = "cpu"
    elif mx.metal.is_available():
        backend = "metal"
    else:
        backend = "cuda"
    try:
        device_info = dict(mx.device_info())
    except Exception:  # older MLX or a backend without device_info
        device_info = {}
    cpu = cpu_model()
    device_name = str(device_info.get("device_name") or "") if backend != "cpu" else cpu
    device_memory = device_info.get("memory_size") or device_info.get("total_memory")
    gpu_name = _gpu_name(mx) if backend == "cpu" else device_name
    return {
        "backend": backend,
        "device": device_name or cpu,
        "cpu": cpu,
        "arch": platform.machine(),
        "cpu_flags": _cpu_flags(),
        "cores": os.cpu_count() or 1,
        "cores_available": _cores_available(),
        "memory_gib": memory_gib(),
        "device_memory_gib": round(int(device_memory) / 2**30, 1) if device_memory else None,
        "device_override": override,
        "gpu": gpu_name or None,
        "virtual": is_virtual(gpu_name or device_name),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "mlx": _version("mlx"),
        "mlx_lm": _version("mlx-lm"),
        "mlx_backend_build": _backend_build(),
        "numpy": _version("numpy"),
        "scipy": _version("scipy"),
        "claimcheck": _version("claimcheck"),
        "blas": blas.describe(),
        "blas_kind": blas.kind,
        "blas_threads": blas.threads,
        "blas_thread_policy": blas.thread_policy.split(":")[0] if blas.thread_policy else None,
        "blas_thread_choice": blas.thread_policy or None,
    }


def _gpu_name(mx: Any) -> str:
    """The GPU's name while MLX runs on the CPU device (empty without a Metal GPU)."""
    try:
        return str(mx.device_info(mx.gpu).get("device_name") or "") if mx.metal.is_available() else ""
    except Exception:  # noqa: BLE001 - older MLX, or no such device
        return ""


def is_virtual(device_name: str) -> bool:
    """Whether this is a virtual machine: a paravirtual GPU, or macOS's hypervisor flag.

    GitHub's hosted Apple silicon runners are virtual machines whose GPU is "Apple Paravirtual
    device": their timings and even their kernels' results are not a real Mac's, so their class
    must never be confused with one.
    """
    if PARAVIRTUAL in device_name.lower():
        return True
    return sys.platform == "darwin" and _sysctl("kern.hv_vmm_present") == "1"


def fingerprint() -> dict[str, Any]:
    """Facts about this machine and software stack; computed once per process (a fresh copy each call)."""
    fields = _compute_fingerprint()
    return {key: list(value) if isinstance(value, list) else value for key, value in fields.items()}


_CPU_NOISE = re.compile(
    r"\((?:R|TM|tm|r)\)|\bCPU\b|@\s*[\d.]+\s*GHz|\b\d+-Core\b|\bProcessor\b|\bwith Radeon.*$",
)


def device_class(name: str, backend: str = "cpu") -> str:
    """Chip family from a device name: x86 model numbers keep their generation digit only.

    ``"AMD EPYC 9R14 96-Core Processor"`` -> ``"AMD EPYC 9xxx"``;
    ``"Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"`` -> ``"Intel Xeon Platinum 8xxx"``;
    ``"Apple M1 Max"`` and GPU names are kept as they are (they already name one chip).
    """
    cleaned = " ".join(_CPU_NOISE.sub(" ", name).split())
    if backend != "cpu" or not re.match(r"(?i)(intel|amd|genuineintel|authenticamd)\b", cleaned):
        return cleaned or "unknown"
    words = [re.sub(r"^(\d)[0-9A-Za-z]{2,}$", r"\1xxx", word) for word in cleaned.split()]
    return " ".join(words)


def memory_band(gib: float) -> str:
    """Power-of-two memory band: 24 GiB -> ``"16-32GiB"``, 6 GiB -> ``"<8GiB"``."""
    if gib < 8:
        return "<8GiB"
    low = 2 ** int(math.floor(math.log2(gib)))
    return f"{low}-{low * 2}GiB"


def machine_class(fp: dict[str, Any] | None = None) -> str:
    """``backend/chip family/memory band``, e.g. ``"cpu/AMD EPYC 9xxx/16-32GiB"``.

    Discrete GPUs (CUDA) are banded by device memory, CPU and Apple unified memory by system memory.
    A virtual machine says so in the chip part (``"metal/Apple Paravirtual device/<8GiB"``,
    ``"cpu/Apple M1 (virtual)/<8GiB"``), so its expectations never mix with a real machine's.
    """
    fp = fingerprint() if fp is None else fp
    backend = fp.get("backend", "cpu")
    memory = fp.get("device_memory_gib") if backend == "cuda" and fp.get("device_memory_gib") else fp.get("memory_gib", 0)
    chip = device_class(str(fp.get("device", "")), backend)
    if fp.get("virtual") and "virtual" not in chip.lower():
        chip += " (virtual)"
    return f"{backend}/{chip}/{memory_band(float(memory or 0))}"


def light_fingerprint() -> dict[str, Any]:
    """The facts :func:`machine_class` reads, judged without importing MLX, for commands that only name the class.

    The backend comes from :func:`detect_backend`, the chip from the CPU's name and the memory
    from the system's, as the fingerprint has them on the CPU backend and on Apple silicon (whose
    GPU bears the chip's name). A discrete GPU's name and memory are MLX's to tell, so a reading
    command matches these facts with a stored run's fingerprint before it trusts the name.
    """
    cpu = cpu_model()
    return {"backend": detect_backend(), "device": cpu, "cpu": cpu, "arch": platform.machine(),
            "memory_gib": memory_gib(), "virtual": is_virtual(cpu)}
